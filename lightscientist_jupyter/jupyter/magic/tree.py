"""`%lightscientist tree`: a search stage's tree, from a notebook.

    %lightscientist tree           # drawn: a box per node coloured by status, the best marked
    %lightscientist tree --json    # the record of experiment/tree.json, a dict
    %lightscientist tree --node n003   # one node: its summary, diff against its parent, log

The operation is `app.search.read_tree`; `api.tree` gives the nodes as a DataFrame.
"""

from __future__ import annotations

import argparse
from typing import Any

from lightscientist_jupyter.app import search, search_node
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.jupyter.node_card import NodeCard
from lightscientist_jupyter.jupyter.search_tree import TreeDiagram
from lightscientist_jupyter.workspace import Workspace


def tree(m: MagicSession, args: argparse.Namespace) -> Any:
    ws = Workspace.at(m.workspace_of(args))
    if args.node is not None:
        detail = search_node.node_detail(ws, args.node)
        return search_node.detail_record(detail) if args.json else NodeCard(detail)
    view = search.read_tree(ws)
    return dict(view.record) if args.json else TreeDiagram(view)
