"""The workers' literature tools: `search_literature`, `get_paper`, `cite`.

Each returns JSON text a model reads; a source that fails is named in the result (the others
still answer) and a bad request is a one-line error the worker can act on, never an exception
that ends its turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, tool

from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature.service import Literature


def literature_tools(
    root: Path, stage: str, fallback_library: Path | None = None
) -> list[BaseTool]:
    """The three tools for a worker of the stage task `stage` in the workspace `root`."""
    hub = Literature(root, fallback_library)
    return bound_literature_tools(lambda: (hub, stage))


def bound_literature_tools(current: Callable[[], tuple[Literature, str]]) -> list[BaseTool]:
    """The three tools; `current` gives, at each call, the hub and stage task of the worker
    whose turn is running (the tools are shared by every worker of a runtime)."""

    def safe(work: Any) -> str:
        try:
            return json.dumps(work(), ensure_ascii=False, indent=1)
        except LiteratureError as exc:
            return f"Error: {exc}"

    @tool
    def search_literature(
        query: str,
        limit: int = 10,
        year_from: int | None = None,
        year_to: int | None = None,
        sources: list[str] | None = None,
    ) -> str:
        """Search the literature (OpenAlex, arXiv, Semantic Scholar, Crossref and the local
        library, merged and deduplicated). `sources` picks some of: library, openalex, arxiv,
        s2, crossref. Returns short records with an `id` to pass to `get_paper` or `cite`.
        """
        hub, stage = current()
        return safe(lambda: hub.search(query, limit, year_from, year_to, sources, stage=stage))

    @tool
    def get_paper(id: str) -> str:  # noqa: A002 (the name a model sees)
        """One paper's record by a DOI, an arXiv id (arXiv:1706.02677), an OpenAlex id
        (W123…) or a Semantic Scholar id (S2:…)."""
        hub, stage = current()
        return safe(lambda: hub.get_paper(id, stage=stage).short())

    @tool
    def cite(id: str) -> str:  # noqa: A002
        """Cite a paper a search or get_paper returned: adds its BibTeX entry to the
        workspace's references file and returns the key to write as \\cite{key} in LaTeX
        ([@key] in Markdown). Cite only through this tool; the paper's checks refuse any other
        reference."""

        hub, stage = current()

        def work() -> dict[str, Any]:
            key, added = hub.cite(id, stage=stage)
            return {
                "key": key,
                "cite_as": f"[@{key}]",
                "file": hub.config.references,
                "added": added,
            }

        return safe(work)

    return [search_literature, get_paper, cite]


def worker_hub(root: Path, record: Any, model: Any) -> tuple[Literature, str]:
    """The literature hub and stage task of one worker (its stage task keeps one breaker per
    source); the offline model's workers search the library shipped with it when none is
    configured."""
    from lightscientist_jupyter.runtime.models.resolver import offline_library

    return Literature(root, offline_library(model)), record.task_id or record.stage
