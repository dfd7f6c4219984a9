"""`lightscientist take / deliver / give-back`: do a stage yourself, then hand it on.

The operations are `app.handoff.hand`; these handlers only print its outcome. A refused
deliver prints every reason and exits 2 (the stage stays yours); when nobody runs the
project and a deliver or a give-back set it running again, the command runs it here, as
`reply` does (`--watch` prints its events).
"""

from __future__ import annotations

import argparse
from typing import Any

from lightscientist_jupyter.app import handoff
from lightscientist_jupyter.app.handoff import Step
from lightscientist_jupyter.cli.foreground import finish_line, run_project, subscribers
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace

EXIT_OK, EXIT_REFUSED = 0, 2


def _hand(args: argparse.Namespace, step: Step, **kw: Any) -> int:
    ws = Workspace.at(args.workspace or ".")
    done = handoff.hand(ws, step, source=ReplySource.CLI, **kw)
    print(done.message)
    if done.accepted is False:
        print(done.status or "")
        return EXIT_REFUSED
    if not done.resume:
        return finish_line(str(done.status))
    from lightscientist_jupyter.app.project import Project

    return run_project(Project.open(ws.root, subscribers=subscribers(args)), args)


def cmd_take(args: argparse.Namespace) -> int:
    return _hand(args, Step.TAKE, stage=args.stage)


def cmd_deliver(args: argparse.Namespace) -> int:
    return _hand(
        args, Step.DELIVER, summary=args.summary, next_stage=args.next, outputs=args.output
    )


def cmd_give_back(args: argparse.Namespace) -> int:
    return _hand(args, Step.GIVE_BACK)


HANDLERS = {"take": cmd_take, "deliver": cmd_deliver, "give-back": cmd_give_back}
