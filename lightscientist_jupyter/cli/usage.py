"""The command line's `usage`: what the project's model calls cost (see `app.usage`)."""

from __future__ import annotations

import argparse
import json

from lightscientist_jupyter import options
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


COMMANDS = {
    "usage": (options.usage, cmd_usage, "tokens, time and cost of the model calls so far"),
}
