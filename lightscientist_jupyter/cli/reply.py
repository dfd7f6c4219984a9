"""`lightscientist reply y|n`: answer the pending gate or question.

The decision is `app.commands.submit_reply`'s; this handler only gives it a way to take the
project when nobody runs it (open it here, so the reply takes effect only once the project can
run, and run it on) and prints what became of the reply. A reply handed to the run of another
process waits for that run's receipt.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from lightscientist_jupyter import _fs
from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app.commands import Route
from lightscientist_jupyter.app.usage import parse_budget
from lightscientist_jupyter.cli.foreground import finish_line, run_project, subscribers
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.controller.inbox import take_receipt
from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.vocab import ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace

REPLY_WAIT_S = 10.0
"""How long a reply handed to the run of another process waits for its receipt."""


def cmd_reply(args: argparse.Namespace) -> int:
    from lightscientist_jupyter.app.project import Project

    ws = Workspace.at(args.workspace or ".")
    opened: list[Project] = []

    def take() -> ResearchController:  # nobody runs the project: run it here, with the reply
        opened.append(Project.open(ws.root, subscribers=subscribers(args)))
        return opened[0].controller

    try:
        sent = commands.submit_reply(
            ws,
            args.answer in ("y", "yes"),
            args.comment,
            args.to,
            source=ReplySource.CLI,
            option="--to",
            take=take,
            receipt=True,  # a run of another process says what became of it (`_await_runner`)
            budget=parse_budget(args.budget) or None,
        )
    except BaseException:
        for project in opened:
            project.close()
        raise
    if sent.path is not None:  # in the inbox of the run of another process
        return _await_runner(ws, sent.path)
    print(sent.message)
    if not opened or sent.route is Route.UNCHANGED:
        for project in opened:
            project.close()
        return finish_line(load_state(ws.state_file).status)
    project = opened[0]
    if project.controller.status == ProjectStatus.FAILED:  # `reply n` at a budget: it ended
        project.close()
        print(f"reason: {printable(project.controller.state.reason or '')}")
        return finish_line(ProjectStatus.FAILED)
    return run_project(project, args)


def _await_runner(ws: Workspace, path: Path) -> int:
    """Another process runs the project: wait for it to take the reply, then report."""
    holder = read_holder(ws) or {}
    deadline = time.monotonic() + REPLY_WAIT_S
    while _fs.NO_LINKS.lstat(path) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    pid = holder.get("pid", "?")
    if _fs.NO_LINKS.lstat(path) is not None:
        print(f"reply queued in {path}; the run held by pid {pid} will apply it")
        return finish_line(load_state(ws.state_file).status)
    receipt = take_receipt(path)
    if receipt is None or receipt.get("applied"):
        print(f"reply taken by the run held by pid {pid}")
    else:  # dropped: replaced by a later reply, or a decision no longer pending
        print(f"reply not applied by the run held by pid {pid}: {receipt.get('message')}")
    return finish_line(load_state(ws.state_file).status)
