"""`%lightscientist take / deliver / give-back`: the researcher's cells are the stage's worker.

    %lightscientist take                 # the current stage is yours (its workers stop)
    %lightscientist deliver --summary "Ran the 12 runs on my cluster." [--next STAGE]
    %lightscientist give-back            # the workers go on, told what you wrote

The operations are `api.take` / `api.deliver` / `api.give_back`; a refused deliver raises
`UsageError` naming every problem (the stage stays yours). `take` shows the hand-over card.
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.core.error import UsageError
from IPython.display import display

from lightscientist_jupyter import api
from lightscientist_jupyter.app.handoff import Handover
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.vocab import ReplySource


def _said(name: str, done: Handover) -> None:
    if done.accepted is False:
        raise UsageError(f"%lightscientist {name} refused: {done.message}")
    print(done.message)


def _resume_here(m: MagicSession, workspace: str, done: Handover) -> None:
    if done.resume:  # nobody ran the project: it goes on in this kernel
        api.resume(workspace)  # with the session's %config defaults
        print("the project resumes in this kernel")


def take(m: MagicSession, args: argparse.Namespace) -> Any:
    """Take the stage, show the dashboard (with its card), and put the skeleton in the next
    cell when the stage is handed now."""
    from lightscientist_jupyter.app.handoff_card import card as handoff_card
    from lightscientist_jupyter.jupyter.dashboard import display as boards

    workspace = m.workspace_of(args)
    _said("take", api.take(workspace, args.stage, source=ReplySource.MAGIC))
    view = api.open_project(workspace)
    card = handoff_card(view.workspace, view.state(), view.table())
    if card is not None and m.shell is not None:
        m.shell.set_next_input(card["skeleton"], replace=False)
    display(boards.dashboard_of(view))


def deliver(m: MagicSession, args: argparse.Namespace) -> None:
    workspace = m.workspace_of(args)
    done = api.deliver(workspace, args.summary, args.next, args.output, source=ReplySource.MAGIC)
    _said("deliver", done)
    _resume_here(m, workspace, done)


def give_back(m: MagicSession, args: argparse.Namespace) -> None:
    workspace = m.workspace_of(args)
    done = api.give_back(workspace, source=ReplySource.MAGIC)
    _said("give-back", done)
    _resume_here(m, workspace, done)
