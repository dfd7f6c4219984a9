"""The command line's `tree`: a search stage's tree as text, or its file's record (see
`app.search`). No tree to show, or a damaged tree file, is one line on stderr and exit 1."""

from __future__ import annotations

import argparse
import json
import sys

from lightscientist_jupyter.app import search, search_node
from lightscientist_jupyter.cli.foreground import EXIT_FAILED, EXIT_OK
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.workspace import Workspace


def cmd_tree(args: argparse.Namespace) -> int:
    ws = Workspace.at(args.workspace or ".")
    try:
        if args.node is not None:
            return _node(ws, args.node, as_json=args.json)
        view = search.read_tree(ws)
    except search.TreeUnavailable as exc:
        print(f"lightscientist tree: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps(view.record, ensure_ascii=False))
    else:
        print("\n".join(search.tree_lines(view)))
    return EXIT_OK


def _node(ws: Workspace, node: str, *, as_json: bool) -> int:
    detail = search_node.node_detail(ws, node)
    if as_json:
        print(json.dumps(search_node.detail_record(detail), ensure_ascii=False))
    else:
        print("\n".join(printable(line) for line in search_node.detail_lines(detail)))
    return EXIT_OK


HANDLERS = {"tree": cmd_tree}
