"""Where a workspace's literature settings live: `.lightscientist/literature/config.json`.

The front doors write it when a project opens (the stage table's `[literature]` table and
`--library`); the workers' tools and `lightscientist check` read it. `LIGHTSCIENTIST_LIBRARY`
adds library paths (separated by the system's path separator).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic

DEFAULT_REFERENCES = "paper/references.bib"
NETWORK_SOURCES = ("openalex", "arxiv", "s2", "crossref")


def folder(root: Path) -> Path:
    return root / ".lightscientist" / "literature"


@dataclasses.dataclass(frozen=True)
class LiteratureConfig:
    library: tuple[Path, ...] = ()
    references: str = DEFAULT_REFERENCES
    """The workspace-relative BibTeX file `cite` writes."""

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
        return cls(
            tuple(p if p.is_absolute() else root / p for p in library),
            references if isinstance(references, str) and references else DEFAULT_REFERENCES,
        )

    def sources(self) -> tuple[str, ...]:
        """The sources `search_literature` asks by default."""
        return (("library",) if self.library else ()) + NETWORK_SOURCES


def save(root: Path, library: list[str], references: str | None) -> None:
    """Write the settings (absolute library paths)."""
    data: dict[str, Any] = {"library": [str(Path(p).expanduser().resolve()) for p in library]}
    if references:
        data["references"] = references
    write_json_atomic(folder(root) / "config.json", data)
