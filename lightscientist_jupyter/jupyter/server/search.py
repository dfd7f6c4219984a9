"""The side panel's search: a search stage's tree (`search_tree.search_card`, the dashboard's
too), and one node looked at closely (`GET node`). Read from the files layer 1 writes, like
every answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from lightscientist_jupyter.app.search import TreeUnavailable
from lightscientist_jupyter.app.search_node import detail_record, node_detail
from lightscientist_jupyter.jupyter.server.answers import NodeAnswer
from lightscientist_jupyter.jupyter.server.paths import Refused, open_project, shown


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
