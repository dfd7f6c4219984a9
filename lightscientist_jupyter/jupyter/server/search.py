"""The side panel's search: a search stage's tree, drawn as the notebook draws it, and one
node looked at closely (`GET node`). Read from the files layer 1 writes, like every answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from lightscientist_jupyter.app.search import TreeUnavailable, read_tree
from lightscientist_jupyter.app.search_node import detail_record, node_detail
from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.jupyter.search_tree import drawing
from lightscientist_jupyter.jupyter.server.answers import NodeAnswer, SearchCard
from lightscientist_jupyter.jupyter.server.paths import Refused, open_project, shown
from lightscientist_jupyter.workspace import Workspace

NO_NODE_YET = "no node has started yet"


def search_card(ws: Workspace, table: StageTable) -> SearchCard | None:
    """The tree of the table's search stages, or why there is none; None without search."""
    stages = [s.id for s in table if s.search is not None]
    if not stages:
        return None
    try:
        view = read_tree(ws)
    except TreeUnavailable as exc:
        note = NO_NODE_YET if "no search tree" in str(exc) else str(exc)
        return {"stages": stages, "drawing": None, "note": note}
    return {"stages": stages, "drawing": drawing(view), "note": None}


def project_node(root: Path, rel: str, node: str | None) -> NodeAnswer:
    """`GET node?path=…&node=n003`: the node's record, its files against its parent's, the
    end of its job's log."""
    ws, rel = open_project(root, rel)
    if not node:
        raise Refused(400, "node is required (a node of the search tree, e.g. n001)")
    try:
        detail = node_detail(ws, node)
    except TreeUnavailable as exc:
        raise Refused(404, f"project '{shown(rel)}': {exc}") from None
    return cast(NodeAnswer, detail_record(detail))
