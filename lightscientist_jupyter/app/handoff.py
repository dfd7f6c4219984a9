"""Hand a stage to the researcher and back: `take`, `deliver`, `give-back`, wherever it runs.

One implementation for every front door (the command line, the magic, the API, the server
extension): with the controller of a run in this process the step applies at once; with a
run in another process it goes through the inbox as a `handoff` command, and the sender
waits for the run's receipt; with no run at all it takes the workspace's lock and applies
the step to the state on disk (a delivered or given-back stage then needs a run: `Handover.
resume` says so, and the shells start one).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lightscientist_jupyter.app.commands import Route, project_locked, require_project
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.controller.handoff_tools import Handed
from lightscientist_jupyter.controller.inbox import take_receipt, write_command, write_receipt
from lightscientist_jupyter.controller.inbox_files import HandoffArgs, token_path
from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.errors import BadInput, ControllerError
from lightscientist_jupyter.vocab import (
    DecisionKind,
    HandoffStep,
    InboxCommand,
    ProjectStatus,
    ReplySource,
)
from lightscientist_jupyter.workspace import Workspace

RECEIPT_WAIT_S = 15.0
"""How long a sender waits for the run of another process to apply its step."""


Step = HandoffStep
"""The doors' name of the hand-over steps (`vocab.HandoffStep`)."""


@dataclasses.dataclass(frozen=True)
class Handover:
    """What became of a take, a deliver or a give-back."""

    route: Route
    message: str
    """What happened, or every reason of a refusal."""
    accepted: bool | None
    """True: it took effect; False: refused (the message says why); None: not known yet
    (queued for a run that did not answer in time)."""
    status: str | None = None
    stage: str | None = None
    resume: bool = False
    """Nobody runs the project and it is running again: a shell should run it now."""

    @property
    def ok(self) -> bool:
        """False when it was refused (an `app.ops.catalog.Outcome`)."""
        return self.accepted is not False


def hand(
    ws: Workspace,
    step: Step | str,
    *,
    stage: str | None = None,
    summary: str = "",
    next_stage: str | None = None,
    outputs: Sequence[str] = (),
    source: ReplySource = ReplySource.API,
    live: ResearchController | None = None,
) -> Handover:
    """Apply one hand-over step to the project in `ws` (see the module's docstring)."""
    step = Step(step)
    if step is Step.DELIVER and not summary.strip():
        raise BadInput(
            'deliver needs a summary (--summary "…"): what you did and found, in a few '
            "lines, for PROCESS.md and the next stages"
        )
    args = HandoffArgs(
        step=step,
        stage=stage,
        summary=summary.strip(),
        next_stage=next_stage,
        outputs=list(outputs),
        source=source,
    )
    if live is not None:
        return _outcome(apply(live, args))
    require_project(ws)
    holder = read_holder(ws)
    if holder is not None:
        return _through_runner(ws, args, holder)
    with project_locked(ws, str(step)) as controller:
        done = _outcome(apply(controller, args))
    running = done.status == ProjectStatus.RUNNING and step is not Step.TAKE
    return dataclasses.replace(done, resume=running)


def apply(controller: ResearchController, args: HandoffArgs) -> Handed:
    """The one place a hand-over step reaches the controller; `args` may come from another
    process (an inbox command, checked by `inbox_files.read_command`), whose `source` is read as
    `ReplySource.read` says."""
    source = ReplySource.read(args.get("source"))
    step = Step(args["step"])
    match step:
        case Step.TAKE:
            return controller.take(args.get("stage") or None, source=source)
        case Step.DELIVER:
            return controller.deliver(
                args.get("summary") or "",
                args.get("next_stage") or None,
                tuple(args.get("outputs") or ()),
                source=source,
            )
    return controller.give_back(source=source)


def apply_command(controller: ResearchController, args: HandoffArgs) -> None:
    """The run's side of `_through_runner`: apply the step, leave the receipt."""
    try:
        done = apply(controller, args)
        applied, message = done.accepted, done.message
    except (ControllerError, ValueError) as exc:
        applied, message = False, str(exc)
    token = args.get("token")
    if token:
        write_receipt(_token_path(controller.workspace, token), applied, message)


def _through_runner(ws: Workspace, args: HandoffArgs, holder: dict[str, Any]) -> Handover:
    token = uuid.uuid4().hex
    sent: HandoffArgs = {**args, "token": token}
    write_command(ws, InboxCommand.HANDOFF, **sent)
    deadline = time.monotonic() + RECEIPT_WAIT_S
    receipt = None
    while receipt is None and time.monotonic() < deadline:
        time.sleep(0.1)
        receipt = take_receipt(_token_path(ws, token))
    pid = holder.get("pid", "?")
    state = require_project(ws)
    if receipt is None:
        return Handover(
            Route.RUNNER,
            f"{args['step']} sent to the run held by pid {pid}; it did not answer yet",
            None,
            state.status,
            state.stage,
        )
    applied = receipt["applied"]
    return Handover(
        Route.RUNNER if applied else Route.UNCHANGED,
        receipt["message"],
        applied,
        state.status,
        state.stage,
    )


def _token_path(ws: Workspace, token: str) -> Path:
    return token_path(ws.inbox_dir, token)


def _outcome(done: Handed) -> Handover:
    route = Route.APPLIED if done.accepted else Route.UNCHANGED
    return Handover(route, done.message, done.accepted, done.status, done.stage)


def handed_stage(pending: dict[str, Any] | None) -> str | None:
    """The stage a pending decision (as `summary` gives it) hands to the researcher."""
    if pending and pending.get("kind") == DecisionKind.HANDOFF:
        return str(pending.get("stage"))
    return None
