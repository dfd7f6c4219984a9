"""The supervisor loop's pure rules: every decision it can make from explicit inputs.

Reading the agent's one-line reply, whether the stage is over for layer 2, the idle rule,
which scheduled resumes are due, the stall rule, and how a restart reconciles layer 2's copy
of a worker with the worker's own record. The loop (`loop.py`) and crash recovery
(`recovery.py`) do the I/O around them; `tests/supervisor/test_decisions.py` tests them
directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerUpdate
from lightscientist_jupyter.supervisor.loop_state import LoopState, Schedule
from lightscientist_jupyter.supervisor.updates import SchedulingEvent, apply_update, filter_update
from lightscientist_jupyter.values.task import StageResult
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    FINAL_WORKER_STATUSES,
    DecisionKind,
    ProjectStatus,
    SchedulingKind,
    StageOutcome,
    WorkerStatus,
)

MAX_IDLE_DECISIONS = 3
"""Consecutive `stage_idle` decisions that leave nothing running before the stage fails."""

MAX_ATTEMPTS = 5
"""Failed workers and refused finishes a stage may have; one more fails it (the supervisor
agent decides its retries below this bound)."""

RESTART_MESSAGE = "The run was restarted; check on your background job."
"""What a background worker is sent when a restart finds no resume scheduled for it."""


class Reply(StrEnum):
    """The supervisor agent's one-line answer to one event."""

    DONE = "done"
    FAILED = "failed"
    CONTINUE = "continue"


def parse_reply(agent: WorkerRecord) -> tuple[Reply, str]:
    """The reply in the agent's record after its turn, and the text it was read from.

    A failed turn is `failed`; otherwise the first word of the reply decides, and anything
    that is not one of the three words counts as `continue`."""
    if agent.status == WorkerStatus.FAILED:
        return Reply.FAILED, agent.error or "the supervisor agent failed"
    text = str((agent.result or {}).get("text") or "").strip()
    words = text.lower().split()
    word = words[0].strip(".:;!") if words else Reply.CONTINUE
    return (Reply(word) if word in set(Reply) else Reply.CONTINUE), text


def decision_line(reply: Reply, text: str) -> str:
    """The `supervisor.decision` event's message: the reply, and the text when it says more."""
    return str(reply) + (f" — {text[:120]}" if text and text.lower() != reply else "")


def stage_outcome(
    task_id: str,
    *,
    project_status: str,
    project_task_id: str,
    pending_kind: str | None,
    last_finish: Mapping[str, Any] | None,
) -> StageResult | None:
    """How the stage ended for layer 2, judged from where layer 1 stands; None: not over.

    Layer 1 moved on (or the project ended): the stage finished with the accepted finish.
    A gate waits for the user: the stage waits too. A project-level question does not stop
    the stage — its answer arrives as an event."""
    if project_status in FINAL_PROJECT_STATUSES or project_task_id != task_id:
        finish = last_finish or {}
        return StageResult(
            StageOutcome.FINISHED,
            finish.get("summary", ""),
            tuple(finish.get("outputs", ())),
            finish.get("next_stage"),
        )
    if project_status == ProjectStatus.WAITING_USER and pending_kind == DecisionKind.GATE:
        return StageResult(StageOutcome.WAITING_USER, "waiting for the user's decision at the gate")
    if project_status == ProjectStatus.WAITING_USER and pending_kind == DecisionKind.BUDGET:
        return StageResult(StageOutcome.WAITING_USER, "a budget is spent: waiting for the user")
    if project_status == ProjectStatus.WAITING_USER and pending_kind == DecisionKind.HANDOFF:
        return StageResult(StageOutcome.WAITING_USER, "the researcher took the stage")
    return None


def is_idle(state: LoopState, project_status: str) -> bool:
    """Nothing will happen by itself: no event queued, no worker running, no resume
    scheduled, no question waiting for the user (the agent must act, or the stage stalls)."""
    if state.queue or state.schedules or project_status == ProjectStatus.WAITING_USER:
        return False
    return not any(r.status == WorkerStatus.RUNNING for r in state.records.values())


def status_counts(records: Iterable[WorkerRecord]) -> dict[str, int]:
    """How many workers are in each status (the `stage_idle` event's data)."""
    counts: dict[str, int] = {}
    for record in records:
        counts[str(record.status)] = counts.get(str(record.status), 0) + 1
    return counts


def idle_failure(
    stage: str, idle_streak: int, problem: str | None = None, *, no_tool_calls: bool = False
) -> StageResult | None:
    """The stage fails once the agent has answered `MAX_IDLE_DECISIONS` idle events in a row
    without getting anything going; None while it has tries left.

    The reason says what went wrong before (`problem`: the last refusal or worker error), and
    whether the agents never called a tool at all — the mark of a model that cannot."""
    if idle_streak < MAX_IDLE_DECISIONS:
        return None
    reason = f"the supervisor left {stage} with no worker running {idle_streak} times in a row"
    if no_tool_calls:
        reason += (
            "; its agents made no tool call (the model answered in text): this model or its "
            "server may not support tool calling (`lightscientist check-model` tells)"
        )
    if problem:
        reason = f"{problem} — {reason}"
    return StageResult(StageOutcome.FAILED, reason)


def next_idle_streak(idle_streak: int, kind: SchedulingKind) -> int:
    """Idle decisions in a row, after a decision on an event of `kind`."""
    return idle_streak + 1 if kind == SchedulingKind.STAGE_IDLE else 0


def reply_failure(
    reply: Reply, stage: str, kind: SchedulingKind, problem: str | None = None
) -> StageResult | None:
    """The stage's failure when the agent gave up on it, else None; the reason leads with
    the real problem (the last refusal or worker error) when there was one."""
    if reply != Reply.FAILED:
        return None
    reason = f"the supervisor gave up on {stage} (after event {kind})"
    return StageResult(StageOutcome.FAILED, f"{problem} — {reason}" if problem else reason)


def attempts_failure(stage: str, attempts: int, problem: str | None) -> StageResult | None:
    """The bound on retries, whatever the agent says: past `MAX_ATTEMPTS` failed workers or
    refused finishes the stage fails with the last problem."""
    if attempts <= MAX_ATTEMPTS:
        return None
    return StageResult(
        StageOutcome.FAILED,
        f"{problem or 'its workers kept failing'} — {stage} failed {attempts} times, "
        f"more than the {MAX_ATTEMPTS} tries a stage gets",
    )


def problem_of(event: SchedulingEvent) -> str | None:
    """What went wrong, for the events that report a problem: a refused finish's reason, a
    failed worker's error (None for the others)."""
    if event.kind == SchedulingKind.STAGE_REJECTED:
        return str(event.data.get("reason") or "") or None
    if event.kind == SchedulingKind.WORKER_FAILED:
        error = str(event.data.get("error") or "")
        return f"{event.worker_id} failed: {error}" if error else None
    return None


def counts_as_attempt(kind: SchedulingKind) -> bool:
    """Events that use up one of the stage's tries: a failed worker, a rejected finish."""
    return kind in (SchedulingKind.WORKER_FAILED, SchedulingKind.STAGE_REJECTED)


def split_due(schedules: Iterable[Schedule], now: float) -> tuple[list[Schedule], list[Schedule]]:
    """The scheduled resumes due at `now`, and those still to wait."""
    due: list[Schedule] = []
    later: list[Schedule] = []
    for item in schedules:
        (due if item["due"] <= now else later).append(item)
    return due, later


def may_fire(record: WorkerRecord | None) -> bool:
    """Whether a due resume still applies: the worker is of this stage and is suspended."""
    return (
        record is not None
        and record.status not in FINAL_WORKER_STATUSES
        and record.status != WorkerStatus.RUNNING
    )


def is_stalled(record: WorkerRecord, now: float, stall_after_s: float, *, reported: bool) -> bool:
    """A running worker silent for longer than `stall_after_s`, not yet reported in this
    silence (an update starts a new silence)."""
    return (
        record.status == WorkerStatus.RUNNING
        and not reported
        and now - record.updated_at > stall_after_s
    )


@dataclasses.dataclass(frozen=True)
class Reconciled:
    """What a restart makes of one worker (see `reconcile`)."""

    record: WorkerRecord
    event: SchedulingEvent | None = None
    """A meaningful change the crash kept the agent from hearing about."""
    schedule: Schedule | None = None
    """A resume to schedule now (a background worker nobody would check on)."""
    revive: bool = False
    """The worker's turn was cut short: continue it, and drop its scheduled resumes."""


NEVER_STARTED = "never started: the run stopped before this worker began"


def reconcile(
    before: WorkerRecord, disk: WorkerRecord | None, schedules: Iterable[Schedule], now: float
) -> Reconciled:
    """Layer 2's copy of a worker after a restart, from the worker's own record on disk.

    No record on disk (`disk` None) is a worker the crash stopped between layer 2 noting it
    and the runtime starting it: it is cancelled (once), so nothing waits for it forever."""
    if disk is None:
        if before.status in FINAL_WORKER_STATUSES:
            return Reconciled(before)
        disk = dataclasses.replace(before, status=WorkerStatus.CANCELLED, error=NEVER_STARTED)
    if disk.status == WorkerStatus.RUNNING:
        return Reconciled(
            dataclasses.replace(before, status=WorkerStatus.RUNNING, updated_at=now), revive=True
        )
    update = WorkerUpdate(
        worker_id=disk.id,
        status=disk.status,
        progress=disk.progress,
        result=disk.result,
        question=disk.question,
        permission=disk.permission,
        check_after_s=disk.check_after_s,
        error=disk.error,
        at=now,
    )
    after = apply_update(before, update)
    event = filter_update(before, after)
    if event is not None:
        return Reconciled(after, event=event)
    if after.status == WorkerStatus.BACKGROUND and not any(
        s["worker_id"] == after.id for s in schedules
    ):
        return Reconciled(
            after, schedule={"worker_id": after.id, "due": now, "message": RESTART_MESSAGE}
        )
    return Reconciled(after)
