"""The dashboard's search card: a search stage's tree, drawn live.

Shown only for a table with a search stage. It is redrawn from `experiment/tree.json` (the
file layer 1 replaces at every change, `app.search.read_tree`) when a `search.node` event
arrives, so it shows what `lightscientist tree` shows: the nodes by kind and status, the
metric on each, the best one marked, and in each node's hover text its summary, job and
files. Until the first node the card says so; a damaged file is one line, never a traceback.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

import ipywidgets as w

from lightscientist_jupyter.app.search import TreeUnavailable, read_tree
from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard.graph import scroll_box
from lightscientist_jupyter.jupyter.search_tree import render_svg, summary_words
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace


class TreeCard:
    """The search card of one project's dashboard (`widget`; hidden without a search)."""

    def __init__(self, workspace: Workspace, table: StageTable):
        self.workspace = workspace
        self.searches = [s.id for s in table if s.search is not None]
        self.widget = w.HTML()
        self.widget.layout.display = "" if self.searches else "none"
        self._drawn: str | None = None

    def update(self, events: Iterable[dict[str, Any]], *, force: bool = False) -> None:
        """Redraw when a node changed among `events` (or when `force`d)."""
        if not self.searches:
            return
        if not force and not any(e.get("type") == EventType.SEARCH_NODE for e in events):
            return
        value = self.render()
        if value != self._drawn:
            self._drawn = value
            self.widget.value = value

    def render(self) -> str:
        title = f"<b>Search</b> <span class='ls-muted'>({', '.join(self.searches)})</span>"
        try:
            view = read_tree(self.workspace)
        except TreeUnavailable as exc:
            if "no search tree" in str(exc):
                return f"{title}<div class='ls-muted'>no node has started yet</div>"
            return f"{title}<div class='ls-err'>{html.escape(str(exc))}</div>"
        except LightScientistError:
            return ""
        words = html.escape(summary_words(view))
        drawing = scroll_box(render_svg(view), label="search tree")
        return f"{title}<div class='ls-muted'>{words}</div>{drawing}"
