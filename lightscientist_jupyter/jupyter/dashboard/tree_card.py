"""The dashboard's search card: a search stage's tree, drawn live as the side panel draws it.

Shown only for a table with a search stage. Its view is the panel's (`search_tree.search_card`,
read from `experiment/tree.json`, the file layer 1 replaces at every change), refreshed when a
`search.node` event arrives; the front end (`labextension/src/widgets/tree.ts`) draws it with
the panel's own `SearchBox`: the nodes by kind and status, the metric on each, the best one
marked, each node's summary in its hover text. A node clicked is shown whole below the
drawing (its summary, its files against its parent's, its job's log): fetched from the
server's `node` endpoint, else asked of this kernel (`picked`, answered in `node`), whose
answer follows the node as it runs and ends. Until the first node the card says so; a
damaged file is one line, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anywidget
import traitlets

from lightscientist_jupyter.app.search_node import detail_record, node_detail
from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard.widgets import THEME_CSS, esm
from lightscientist_jupyter.jupyter.search_tree import search_card
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace


class SearchTree(anywidget.AnyWidget):
    """The search card's front end: `card` drawn, `picked` the node clicked, `node` its detail."""

    _esm = esm("tree")
    _css = THEME_CSS

    card = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    """The tree (`SearchCard`); None hides the card."""
    root = traitlets.Unicode("").tag(sync=True)
    """The workspace (the front end asks the server for a node when it can)."""
    picked = traitlets.Unicode("").tag(sync=True)
    """The node the user picked ('' none), when the server could not answer."""
    node = traitlets.Dict().tag(sync=True)
    """`{"id": …, "answer": NodeAnswer}` or `{"id": …, "error": "…"}` for `picked`."""


class TreeCard:
    """The search card of one project's dashboard (`widget`; hidden without a search)."""

    def __init__(self, workspace: Workspace, table: StageTable):
        self.workspace = workspace
        self.table = table
        self.searches = [s.id for s in table if s.search is not None]
        self.widget = SearchTree(root=str(workspace.root))
        self.widget.layout.display = "" if self.searches else "none"
        self.widget.observe(lambda _change: self._answer(), names="picked")

    def update(self, events: Iterable[dict[str, Any]], *, force: bool = False) -> None:
        """Redraw when a node changed among `events` (or when `force`d)."""
        if not self.searches:
            return
        if not force and not any(e.get("type") == EventType.SEARCH_NODE for e in events):
            return
        try:
            card = dict(search_card(self.workspace, self.table) or {})
        except LightScientistError:  # no project yet (a run opening it): drawn at its nodes
            return
        if card != self.widget.card:
            self.widget.card = card
            self._answer()  # the node picked follows its changes

    def _answer(self) -> None:
        node = self.widget.picked
        if not node:
            self.widget.node = {}
            return
        try:
            answer = detail_record(node_detail(self.workspace, node))
        except LightScientistError as exc:
            self.widget.node = {"id": node, "error": str(exc)}
        else:
            self.widget.node = {"id": node, "answer": answer}
