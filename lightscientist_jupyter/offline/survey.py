"""The offline survey's literature steps: search the local library, cite what it found.

The searches go to the shipped library only (`sources=["library"]`, no network); every work
they return is cited through the `cite` tool, and the survey and the paper cite those keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.history import Act, History

LIBRARY = Path(__file__).resolve().parent / "library" / "warmup.bib"
"""The local library shipped with the offline scientist (bibliographic facts only)."""
QUERIES = (
    "learning rate warmup",
    "large minibatch SGD training",
    "gradient descent edge of stability",
)
MAX_CITED = 8


def searches() -> list[Act]:
    return [
        Act(f"search{i}", tools.SEARCH, {"query": q, "limit": 5, "sources": ["library"]})
        for i, q in enumerate(QUERIES)
    ]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def found(h: History) -> list[dict[str, Any]]:
    """The records the searches returned, each once, in order (at most MAX_CITED)."""
    seen: dict[str, dict[str, Any]] = {}
    for i in range(len(QUERIES)):
        data = _json(h.result(f"search{i}"))
        for rec in data.get("results", []) if isinstance(data, dict) else []:
            if isinstance(rec, dict) and rec.get("id"):
                seen.setdefault(str(rec["id"]), rec)
    return list(seen.values())[:MAX_CITED]


def cites(records: list[dict[str, Any]]) -> list[Act]:
    return [Act(f"cite{i}", tools.CITE, {"id": rec["id"]}) for i, rec in enumerate(records)]


def cited(h: History) -> dict[str, str]:
    """Record id and arXiv id -> the key `cite` returned, for every cite that answered."""
    keys = {}
    for i, rec in enumerate(found(h)):
        data = _json(h.result(f"cite{i}"))
        if isinstance(data, dict) and data.get("key"):
            for ident in (rec["id"], rec.get("arxiv")):
                if ident:
                    keys[str(ident)] = str(data["key"])
    return keys


def summary(records: list[dict[str, Any]], keys: dict[str, str]) -> list[str]:
    return [
        f"Searched the local library ({len(QUERIES)} queries): {len(records)} works found, "
        f"{len(set(keys.values()))} cited in paper/references.bib.",
        "Framed the question: does learning-rate warmup help plain gradient descent train a "
        "small MLP?",
    ]
