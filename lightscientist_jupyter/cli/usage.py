"""The command line's `usage` (what the project's model calls cost, see `app.usage`) and
`estimate` / `research --dry-run` (what a run may cost, see `app.estimate`)."""

from __future__ import annotations

import argparse
import json

from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app import usage as usages
from lightscientist_jupyter.workspace import Workspace


def cmd_usage(args: argparse.Namespace) -> int:
    ws = Workspace.at(args.workspace or ".")
    commands.require_project(ws)
    view = usages.usage_view(ws.root, args.by)
    if args.json:
        print(json.dumps(view.to_dict(), ensure_ascii=False))
    else:
        print("\n".join(usages.render(view)))
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    """`estimate`, and `research --dry-run` (its goal counts in the task's size)."""
    from lightscientist_jupyter.app import estimate as estimates  # the model resolver: LangChain

    est = estimates.estimate(
        args.workspace or ".",
        stages=args.stages,
        model=args.model,
        base_url=args.base_url,
        price=args.price,
        source=getattr(args, "source", None),
        goal=getattr(args, "goal", ""),
    )
    if getattr(args, "json", False):
        print(json.dumps(est.to_dict(), ensure_ascii=False))
    else:
        print("\n".join(estimates.render(est)))
    return 0


HANDLERS = {
    "usage": cmd_usage,
    "estimate": cmd_estimate,
}
