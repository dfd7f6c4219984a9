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

from lightscientist_jupyter.app.search import SearchView, TreeUnavailable, read_tree
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
        view = self._read()  # once per redraw: the drawing, the picker and the node share it
        value = self.render(view)
        if value != self._drawn:
            self._drawn = value
            self.drawing.value = value
            self._offer(view)
            self._show(self.picker.value, view)

    def _read(self) -> SearchView | LightScientistError:
        """The tree as `tree.json` holds it now, or why it cannot be read."""
        try:
            return read_tree(self.workspace)
        except LightScientistError as exc:
            return exc

    def _offer(self, view: SearchView | LightScientistError) -> None:
        """The picker's choices: each node with its kind and status (the pick is kept)."""
        nodes = view.tree.nodes if isinstance(view, SearchView) else ()
        options = [PICK_NONE, *((f"{n.id} · {n.kind} · {n.status}", n.id) for n in nodes)]
        if options != list(self.picker.options):
            picked = self.picker.value
            self.picker.options = options
            self.picker.value = picked if any(v == picked for _, v in options) else None

    def _picked(self, change: dict[str, Any]) -> None:
        self._show(change["new"], self._read())

    def _show(self, node: str | None, view: SearchView | LightScientistError) -> None:
        if node is None:
            self.node.value = ""
            return
        try:
            if isinstance(view, LightScientistError):
                problem: LightScientistError = view
            else:
                self.node.value = render_html(node_detail(self.workspace, node, view))
                return
        except LightScientistError as exc:
            problem = exc
        self.node.value = f"<div class='ls-err'>{html.escape(str(problem))}</div>"

    def render(self, view: SearchView | LightScientistError | None = None) -> str:
        """The card's drawing of `view` (read now when not given)."""
        title = f"<b>Search</b> <span class='ls-muted'>({', '.join(self.searches)})</span>"
        view = self._read() if view is None else view
        if isinstance(view, TreeUnavailable):
            if "no search tree" in str(view):
                return f"{title}<div class='ls-muted'>no node has started yet</div>"
            return f"{title}<div class='ls-err'>{html.escape(str(view))}</div>"
        if isinstance(view, LightScientistError):
            return ""
        words = html.escape(summary_words(view))
        drawing = scroll_box(render_svg(view), label="search tree")
        return f"{title}<div class='ls-muted'>{words}</div>{drawing}"
