"""`%lightscientist tree`: a search stage's tree, from a notebook.

    %lightscientist tree           # drawn: a box per node coloured by status, the best marked
    %lightscientist tree --json    # the record of experiment/tree.json, a dict

The operation is `app.search.read_tree`; `api.tree` gives the nodes as a DataFrame.
"""

from __future__ import annotations

import argparse
from typing import Any

from lightscientist_jupyter.app import search
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.jupyter.search_tree import TreeDiagram
from lightscientist_jupyter.workspace import Workspace


def tree(m: MagicSession, args: argparse.Namespace) -> Any:
    view = search.read_tree(Workspace.at(m.workspace_of(args)))
    return dict(view.record) if args.json else TreeDiagram(view)
