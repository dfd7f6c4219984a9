"""Where a workspace's literature settings live: `.lightscientist/literature/config.json`.

The front doors write it when a project opens (the stage table's `[literature]` table and
`--library`); the workers' tools and `lightscientist check` read it. `LIGHTSCIENTIST_LIBRARY`
adds library paths (separated by the system's path separator).

Two bounds hold for every request to a source (`http.Bounds`): `deadline`, the seconds one
request may take from its first try to its answer, retries and waits included, and
`max_bytes`, the largest answer read (a larger one is refused while it streams in). The
table's `[literature]` sets them for a project; `LIGHTSCIENTIST_LITERATURE_DEADLINE` and
`LIGHTSCIENTIST_LITERATURE_MAX_BYTES`, when set, win (a machine's or a CI's setting).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature.http import Bounds

DEFAULT_REFERENCES = "paper/references.bib"
NETWORK_SOURCES = ("openalex", "arxiv", "s2", "crossref")
BOUND_KEYS = ("deadline", "max_bytes")
BOUND_ENV = {
    "deadline": "LIGHTSCIENTIST_LITERATURE_DEADLINE",
    "max_bytes": "LIGHTSCIENTIST_LITERATURE_MAX_BYTES",
}


def folder(root: Path) -> Path:
    return root / ".lightscientist" / "literature"


@dataclasses.dataclass(frozen=True)
class LiteratureConfig:
    library: tuple[Path, ...] = ()
    references: str = DEFAULT_REFERENCES
    """The workspace-relative BibTeX file `cite` writes."""
    bounds: Bounds = Bounds()
    """The deadline and size cap of each request to a source."""

    @classmethod
    def load(
        cls, root: Path, fallback_library: Path | None = None, *, env: bool = True
    ) -> LiteratureConfig:
        """The workspace's settings (and `LIGHTSCIENTIST_LIBRARY` when `env`);
        `fallback_library` when none names a library."""
        try:
            raw: Any = json.loads(read_text(folder(root) / "config.json"))
        except (OSError, ValueError):
            raw = {}
        raw = raw if isinstance(raw, dict) else {}
        library = [Path(p) for p in raw.get("library") or [] if isinstance(p, str)]
        extra = os.environ.get("LIGHTSCIENTIST_LIBRARY", "") if env else ""
        library += [Path(p).expanduser() for p in extra.split(os.pathsep) if p.strip()]
        if not library and fallback_library is not None:
            library = [fallback_library]
        references = raw.get("references")
        bounds = {k: v for k, v in raw.items() if k in BOUND_KEYS and bound_problem(k, v) is None}
        return cls(
            tuple(p if p.is_absolute() else root / p for p in library),
            references if isinstance(references, str) and references else DEFAULT_REFERENCES,
            Bounds(**{**bounds, **(environment_bounds() if env else {})}),
        )

    def sources(self) -> tuple[str, ...]:
        """The sources `search_literature` asks by default."""
        return (("library",) if self.library else ()) + NETWORK_SOURCES


def save(
    root: Path, library: list[str], references: str | None, bounds: dict[str, Any] | None = None
) -> None:
    """Write the settings (absolute library paths; `bounds`, the table's checked values)."""
    data: dict[str, Any] = {"library": [str(Path(p).expanduser().resolve()) for p in library]}
    if references:
        data["references"] = references
    data |= bounds or {}
    write_json_atomic(folder(root) / "config.json", data)


def bound_problem(key: str, value: Any) -> str | None:
    """What is wrong with a `deadline` (seconds, above 0) or `max_bytes` (a whole number of
    bytes, at least 1024) value, or None."""
    if key == "deadline":
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            return f"{value!r} is not a number of seconds above 0 (e.g. 30)"
    elif isinstance(value, bool) or not isinstance(value, int) or value < 1024:
        return f"{value!r} is not a whole number of bytes, at least 1024 (e.g. 16_000_000)"
    return None


def environment_bounds() -> dict[str, Any]:
    """The bounds `LIGHTSCIENTIST_LITERATURE_DEADLINE` / `_MAX_BYTES` set; a
    `LiteratureError` naming the variable when one is not a valid value."""
    found: dict[str, Any] = {}
    for key, variable in BOUND_ENV.items():
        text = os.environ.get(variable, "").strip().replace("_", "")
        if not text:
            continue
        try:
            value: Any = float(text) if key == "deadline" else int(text)
        except ValueError:
            value = text
        problem = bound_problem(key, value)
        if problem:
            raise LiteratureError(f"{variable}={os.environ[variable]!r}: {problem}")
        found[key] = value
    return found
