"""The dashboard's search card: a search stage's tree, drawn live.

Shown only for a table with a search stage. It is redrawn from `experiment/tree.json` (the
file layer 1 replaces at every change, `app.search.read_tree`) when a `search.node` event
arrives, so it shows what `lightscientist tree` shows: the nodes by kind and status, the
metric on each, the best one marked, and in each node's hover text its summary, job and
files. A node picked below the drawing is shown whole (`jupyter.node_card`): its summary, its
files against its parent's, its job's log; the pick stays across redraws, and the node's
card follows it as it ends. Until the first node the card says so; a damaged file is one
line, never a traceback.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

import ipywidgets as w

from lightscientist_jupyter.app.search import TreeUnavailable, read_tree
from lightscientist_jupyter.app.search_node import node_detail
from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard.graph import scroll_box
from lightscientist_jupyter.jupyter.node_card import render_html
from lightscientist_jupyter.jupyter.search_tree import render_svg, summary_words
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace

PICK_NONE = ("look at a node…", None)
"""The picker's first choice: no node shown."""


class TreeCard:
    """The search card of one project's dashboard (`widget`; hidden without a search)."""

    def __init__(self, workspace: Workspace, table: StageTable):
        self.workspace = workspace
        self.searches = [s.id for s in table if s.search is not None]
        self.drawing = w.HTML()
        self.picker = w.Dropdown(
            options=[PICK_NONE], value=None, description="Node", layout=w.Layout(width="auto")
        )
        self.picker.observe(self._picked, names="value")
        self.node = w.HTML()
        self.widget = w.VBox([self.drawing, self.picker, self.node])
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
            self.drawing.value = value
            self._offer()
            self._show(self.picker.value)

    def _offer(self) -> None:
        """The picker's choices: each node with its kind and status (the pick is kept)."""
        try:
            nodes = read_tree(self.workspace).tree.nodes
        except LightScientistError:
            nodes = ()
        options = [PICK_NONE, *((f"{n.id} · {n.kind} · {n.status}", n.id) for n in nodes)]
        if options != list(self.picker.options):
            picked = self.picker.value
            self.picker.options = options
            self.picker.value = picked if any(v == picked for _, v in options) else None

    def _picked(self, change: dict[str, Any]) -> None:
        self._show(change["new"])

    def _show(self, node: str | None) -> None:
        if node is None:
            self.node.value = ""
            return
        try:
            self.node.value = render_html(node_detail(self.workspace, node))
        except LightScientistError as exc:
            self.node.value = f"<div class='ls-err'>{html.escape(str(exc))}</div>"

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
