"""Literature: sources, records, the cache, the library and what the workers' tools do
(`service`; the tools themselves, LangChain's, are `runtime.literature_tools`).

A leaf below the layers: the workers' tools (layer 3) search and cite through it, and
layer 1's checks read its cache and BibTeX parser to check a paper's citations. The names
below are loaded on first use, so that a plain `lightscientist status` does not import the
HTTP sources."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lightscientist_jupyter.literature.config import LiteratureConfig
    from lightscientist_jupyter.literature.records import Paper
    from lightscientist_jupyter.literature.service import Literature

__all__ = ["Literature", "LiteratureConfig", "Paper"]

_HOMES = {
    "LiteratureConfig": "config",
    "Paper": "records",
    "Literature": "service",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
