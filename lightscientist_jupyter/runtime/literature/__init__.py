"""Literature for workers: sources, records, the cache and the `search_literature`, `get_paper`
and `cite` tools (see `service` and `tools`).

The names below are loaded on first use: layer 1's checks read the cache and the BibTeX
parser of this package, and importing the tools (LangChain) with them made a plain
`lightscientist status` take about a second longer."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lightscientist_jupyter.runtime.literature.config import LiteratureConfig
    from lightscientist_jupyter.runtime.literature.records import Paper
    from lightscientist_jupyter.runtime.literature.service import Literature
    from lightscientist_jupyter.runtime.literature.tools import literature_tools

__all__ = ["Literature", "LiteratureConfig", "Paper", "literature_tools"]

_HOMES = {
    "LiteratureConfig": "config",
    "Paper": "records",
    "Literature": "service",
    "literature_tools": "tools",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
