"""The operations every front door shares: status, the workers, a reply, a cancel.

The command line, the magic, the Python API and the server extension each map the typed
outcome of these functions to what their user sees — an exit code and a printed line, a
`UsageError`, a widget message, an HTTP status — and add nothing to the decision itself.
Input to fix raises `BadInput` (a `Conflict` when the project is not where the request
applies: nothing pending, a finished project).

A project may be run by this process (a notebook's run), by another process (which holds the
workspace's run lock and polls its inbox), or by nobody. Replies and cancels reach each case
the same way: directly through the in-process controller, through the inbox, or by taking the
lock and acting on the state on disk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text
from lightscientist_jupyter.app import sandboxing
from lightscientist_jupyter.app.starting_mark import starting
from lightscientist_jupyter.app.usage import status_usage
from lightscientist_jupyter.controller import ResearchController, StageTable, load_table
from lightscientist_jupyter.controller import budget as budget_rules
from lightscientist_jupyter.controller.handoff import not_a_reply
from lightscientist_jupyter.controller.inbox import set_aside, write_command, write_reply
from lightscientist_jupyter.controller.lock import WorkspaceLock, read_holder
from lightscientist_jupyter.controller.state import ProjectState, load_state
from lightscientist_jupyter.errors import (
    NO_PROJECT_REMEDY,
    BadInput,
    Conflict,
    ModelConfigError,
    WorkspaceLocked,
)
from lightscientist_jupyter.events import EventLog
from lightscientist_jupyter.values.usage import Usage
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    CancelSource,
    DecisionKind,
    InboxCommand,
    ProjectStatus,
    ReplySource,
    WorkerStatus,
)
from lightscientist_jupyter.workspace import Workspace, folder_problem

# ------------------------------------------------------------------------- reading


def require_project(ws: Workspace) -> ProjectState:
    """The project's state; `BadInput` naming the folder when there is none."""
    problem = folder_problem(ws.root, write=False)
    if problem and ws.root.exists():  # a file given as the workspace
        raise BadInput(problem)
    if not ws.exists():
        raise BadInput(f"no LightScientist project in {ws.root}; {NO_PROJECT_REMEDY}")
    return load_state(ws.state_file)


def summary(state: ProjectState) -> dict[str, Any]:
    """Where a project stands, in the words every front door uses: status, stage, mode, goal
    and pending (the pending decision or None)."""
    pending = state.pending.to_dict() if state.pending else None
    return {
        "status": state.status,
        "stage": state.stage,
        "mode": state.mode,
        "goal": state.goal,
        "pending": pending,
    }


INTERRUPTED_REASON = (
    "no process runs it now (its run was killed or stopped, or it was rewound or forked); "
    "`lightscientist resume` continues it"
)


def status(ws: Workspace) -> dict[str, Any]:
    """What `lightscientist status --json` prints: the `summary` and the details. A project
    left `running` that no process runs (its runner was killed) is shown `interrupted`, with
    the reason that says to resume it, as `worker_records` shows its workers. A project a
    kernel is still creating is shown `starting` (`starting.mark_starting`)."""
    mark = starting(ws)
    if mark is not None:
        return starting_status(ws, mark)
    state = require_project(ws)
    runner = read_holder(ws)
    shown, reason = state.status, state.reason
    if state.status == ProjectStatus.RUNNING and runner is None:
        shown, reason = ProjectStatus.INTERRUPTED, INTERRUPTED_REASON
    return {
        **summary(state),
        "status": shown,
        "visits": state.visits,
        "reason": reason,
        "workspace": str(ws.root),
        "stages_file": state.stages_file,
        "transitions": len(state.history),
        "decisions": state.decisions,
        "runner": runner,
        "updated_at": state.updated_at,
        "sandbox": sandboxing.status_info(ws, state.settings),
        "usage": status_usage(state),
    }


def starting_status(ws: Workspace, mark: dict[str, Any]) -> dict[str, Any]:
    """`status` of a project being created (its state is not written yet): the keys of any
    project's, its goal and mode from the mark, nothing counted yet."""
    pid = mark.get("pid")
    return {
        "status": ProjectStatus.STARTING,
        "stage": None,
        "mode": mark.get("mode"),
        "goal": mark.get("goal"),
        "pending": None,
        "visits": {},
        "reason": f"process {pid} is creating the project (its run starts in a moment)",
        "workspace": str(ws.root),
        "stages_file": None,
        "transitions": 0,
        "decisions": 0,
        "runner": {"pid": pid, "host": mark.get("host")},
        "updated_at": mark.get("started_at"),
        "sandbox": sandboxing.status_info(ws, {}),
        "usage": {**Usage().to_dict(), "cost": 0.0, "budget": {}, "hours": 0.0},
    }


def worker_records(ws: Workspace) -> list[dict[str, Any]]:
    """Every `workers/<id>/worker.json` of the workspace, oldest first. A record left
    `running` when no process runs the project (its runner was killed) is shown
    `interrupted`: nothing runs it until `lightscientist resume`."""
    folder = ws.workers_dir
    if not folder.is_dir():
        return []
    out = []
    dead_runner = read_holder(ws) is None
    for path in folder.glob("*/worker.json"):
        try:
            record = json.loads(read_text(path))
        except ValueError:
            continue
        if dead_runner and record.get("status") == WorkerStatus.RUNNING:
            record["status"] = str(WorkerStatus.INTERRUPTED)
        out.append(record)
    return sorted(out, key=lambda r: r.get("created_at", 0))


# ------------------------------------------------------------------------- replying


class Route(StrEnum):
    """Where a reply or a cancel went."""

    APPLIED = "applied"
    """It took effect at once (or, for a cancel of a run of this process, is under way)."""
    UNCHANGED = "unchanged"
    """It changed nothing: the decision was already answered or is no longer pending, or
    the project had already ended."""
    RUNNER = "runner"
    """Handed through the inbox to the live process that runs the project."""
    QUEUED = "queued"
    """Queued in the inbox; nobody runs the project now."""


@dataclasses.dataclass(frozen=True)
class Sent:
    """What became of a reply or a cancel."""

    route: Route
    message: str
    decision_id: str | None = None
    """The decision a reply answered."""
    path: Path | None = None
    """The inbox file, for a queued reply."""
    runner: dict[str, Any] | None = None
    """The run lock's holder, for `RUNNER`."""
    status: str | None = None
    """The project's status afterwards, when it is known at once."""

    @property
    def ok(self) -> bool:
        """False when it changed nothing (see `Route.UNCHANGED`)."""
        return self.route is not Route.UNCHANGED

    @property
    def applied(self) -> bool | None:
        """True: it took effect; False: it changed nothing; None: queued in the inbox."""
        if self.route is Route.APPLIED:
            return True
        return False if self.route is Route.UNCHANGED else None


def check_target(table: StageTable, approve: bool, to: str | None, *, option: str = "to") -> None:
    """`to` (where a rejection sends the project) must be a stage, and only with a reject.

    `option` is what the user typed for it (`--to` on the command line, `to_stage` in the
    server's JSON), so that the message names it."""
    if not to:
        return
    if approve:
        raise BadInput(
            f"{option} names where a rejection sends the project; use it only when rejecting"
        )
    if to not in table:
        raise BadInput(
            f"{option} '{to}' is not a stage of {table.path}; choose one of "
            f"{', '.join(table.ids())}"
        )


Take = Callable[[], ResearchController]
"""How a front door takes a project nobody runs, to carry a reply out itself: it opens the
project (to run it, or only under its lock) and returns its controller, or raises (nothing
is then queued; `WorkspaceLocked` when a run took the project first)."""


def submit_reply(
    ws: Workspace,
    approve: bool,
    comment: str = "",
    to: str | None = None,
    *,
    decision_id: str | None = None,
    source: ReplySource = ReplySource.API,
    live: ResearchController | None = None,
    take: Take | None = None,
    option: str = "to",
    receipt: bool = False,
    budget: dict[str, float] | None = None,
) -> Sent:
    """Answer the pending decision of the project in `ws`.

    With `live` (the controller of a run in this process) the reply takes effect at once.
    Else, when a process runs the project, the reply goes to its inbox and it applies it
    within a second. When nobody does, `take` opens the project and the reply takes effect
    there once it is open — a reply that cannot be carried out (the project cannot be opened,
    its checkpoints are damaged or unreachable) raises and leaves nothing behind; without
    `take` it is queued for the next run. A reply carried out or queued replaces a queued
    one to the same decision; one for a decision that is no longer pending changes nothing.
    `option` names the rejection target as the user gave it (see `check_target`). With
    `receipt`, a run of another process leaves word of what became of the reply (applied, or
    dropped and why) for `inbox.take_receipt`.
    """
    if live is not None:
        check_target(live.table, approve, to, option=option)
        if approve and (refused := budget_rules.raise_refusal(live.state, live.table, budget)):
            raise BadInput(refused)  # a raise still below what was spent: nothing is applied
        return _answer(live, approve, comment, to, decision_id, source, budget)
    state = require_project(ws)
    pending = state.pending
    if pending is None:
        raise Conflict(
            f"nothing is waiting for a reply in {ws.root}: the project is "
            f"{state.status} at stage '{state.stage}'"
        )
    if pending.kind == DecisionKind.HANDOFF:  # the researcher's: nothing to approve
        raise Conflict(not_a_reply(pending.stage))
    if decision_id and decision_id != pending.id:
        return Sent(
            Route.UNCHANGED,
            f"decision {decision_id} is no longer pending (the pending one is "
            f"{pending.id}, at '{pending.stage}'); nothing changed",
            decision_id,
        )
    table = load_table(state.stages_file)
    check_target(table, approve, to, option=option)
    if approve and (refused := budget_rules.raise_refusal(state, table, budget)):
        raise BadInput(refused)  # a raise still below what was spent: nothing is queued
    if take is not None and read_holder(ws) is None:
        try:
            with set_aside(ws, pending.id):
                return _answer(take(), approve, comment, to, pending.id, source, budget)
        except WorkspaceLocked:  # a run took the project meanwhile: its inbox gets the reply
            pass
    path = write_reply(
        ws,
        approve=approve,
        comment=comment,
        to_stage=to,
        decision_id=pending.id,
        source=source,
        receipt=receipt and read_holder(ws) is not None,
        budget=budget,
    )
    holder = read_holder(ws)
    if holder is not None:
        return Sent(
            Route.RUNNER,
            f"reply queued; the run held by pid {holder.get('pid', '?')} will apply it",
            pending.id,
            path,
            holder,
        )
    return Sent(
        Route.QUEUED, "reply queued; it is applied when the project is resumed", pending.id, path
    )


def _answer(
    controller: ResearchController,
    approve: bool,
    comment: str,
    to: str | None,
    decision_id: str | None,
    source: ReplySource,
    budget: dict[str, float] | None,
) -> Sent:
    outcome = controller.reply(
        approve, comment, to, decision_id=decision_id, source=source, budget=budget
    )
    route = Route.APPLIED if outcome.applied else Route.UNCHANGED
    return Sent(route, outcome.message, outcome.decision_id)


@contextlib.contextmanager
def project_locked(ws: Workspace, holder: str) -> Iterator[ResearchController]:
    """The project's controller, for a step taken while no process runs it: under the
    workspace lock (taken as `holder`; `WorkspaceLocked` when a run holds it), with the event
    log open."""
    with WorkspaceLock(ws).acquire(holder), EventLog(ws.events_file) as bus:
        yield ResearchController.open(ws, bus=bus)


# ------------------------------------------------------------------------- cancelling


LocalCancel = Callable[[str | None], str]
"""A run in this process: cancels one worker (or all, given None) and says what it did."""


def cancel_reason(source: object) -> str:
    """The project's reason after a cancel from `source` (the door, a `CancelSource`; an
    inbox command without a known one says only that the user cancelled)."""
    known = source in set(CancelSource)
    return f"cancelled from the {source}" if known else "cancelled by the user"


def cancel(
    ws: Workspace,
    worker_id: str | None = None,
    *,
    source: CancelSource,
    local: LocalCancel | None = None,
) -> Sent:
    """Cancel one worker, or every worker and then the project, wherever it runs; the
    project's reason names `source`, the door the cancel came through, whichever process
    applies it."""
    state = require_project(ws)
    if worker_id and not (ws.workers_dir / worker_id / "worker.json").exists():
        raise BadInput(f"no worker '{worker_id}' in {ws.workers_dir}")
    if state.status in FINAL_PROJECT_STATUSES:
        if worker_id:
            raise Conflict(f"the project is {state.status}; worker {worker_id} is not running")
        return Sent(
            Route.UNCHANGED,
            f"the project is {state.status}; nothing to cancel",
            status=state.status,
        )
    if local is not None:
        return Sent(Route.APPLIED, local(worker_id))
    holder = read_holder(ws)
    if holder is not None:
        write_command(ws, InboxCommand.CANCEL, worker_id=worker_id, source=source)
        return Sent(
            Route.RUNNER,
            f"cancel request sent to the run held by pid {holder.get('pid', '?')}",
            runner=holder,
        )
    if worker_id:
        raise Conflict(
            f"no run is alive in {ws.root}; worker {worker_id} is not running (it "
            "stays resumable with `lightscientist resume`)"
        )
    with WorkspaceLock(ws).acquire("cancel"), EventLog(ws.events_file) as bus:
        controller = ResearchController.open(ws, bus=bus)
        controller.cancel(cancel_reason(source))
        return Sent(Route.APPLIED, f"the project is {controller.status}", status=controller.status)


# ------------------------------------------------------------------------- the model


@dataclasses.dataclass(frozen=True)
class ModelCheck:
    """Whether a model can call tools, as `check-model` and the run's first step tell it."""

    ok: bool
    message: str
    """One line naming the model (and its server) and what it did."""
    skipped: bool = False
    """The offline model and a replay call tools by construction: nothing was asked."""


def check_model(model: str | None = None, base_url: str | None = None) -> ModelCheck:
    """One short call offering one trivial tool: does the model answer with a proper call?

    A model that cannot be set up at all (an unknown provider, a missing key) raises
    `ModelConfigError`, as a run would."""
    import os
    import time

    from lightscientist_jupyter.runtime.models.check import needs_check, tool_calling_problem
    from lightscientist_jupyter.runtime.models.resolver import default_spec, resolve_model

    spec = (model or "").strip() or default_spec()
    url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    name = f"model '{spec}'" + (f" at {url}" if url and needs_check(spec) else "")
    chat = resolve_model(spec, base_url=url, timeout=60.0)
    if not needs_check(spec):
        return ModelCheck(True, f"{name} calls tools by construction; nothing to check", True)
    started = time.monotonic()
    problem = tool_calling_problem(chat)
    if problem is not None:
        return ModelCheck(False, f"{name} {problem}")
    took = time.monotonic() - started
    return ModelCheck(True, f"{name} can call tools (it called the test tool in {took:.1f} s)")


def require_tool_calling(model: str | None, base_url: str | None) -> None:
    """The check before a run's first stage: `ModelConfigError` with the check's line (and
    how to go on anyway) when the model cannot call tools."""
    outcome = check_model(model, base_url)
    if not outcome.ok:
        raise ModelConfigError(
            f"{outcome.message} (the run did not start; --skip-model-check goes on anyway)"
        )
