"""The command line's `check`: the provenance report of a paper (see `app.literature`)."""

from __future__ import annotations

import argparse

from lightscientist_jupyter.app import literature
from lightscientist_jupyter.workspace import Workspace


def cmd_check(args: argparse.Namespace) -> int:
    ws = Workspace.at(args.workspace or ".")
    report = literature.check(ws.root, args.paths, args.results)
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


HANDLERS = {"check": cmd_check}
