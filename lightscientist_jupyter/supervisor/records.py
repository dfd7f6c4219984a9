"""Worker records and the two pure steps of processing a layer-3 update.

1. `apply_update(record, update)` — the update function: the record after the update.
2. `filter_update(before, after, update)` — the event filter: the scheduling event the
   update deserves, or None. Only meaningful changes pass (finished, failed, waiting, went to
   background); a running → running progress update only touches the record and never wakes
   the supervisor agent.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Literal

from lightscientist_jupyter.runtime.types import WorkerUpdate

EventKind = Literal["stage_started", "worker_finished", "worker_failed", "worker_waiting",
                    "worker_background", "worker_stalled", "resume_due", "finish_refused",
                    "user_answered", "worker_cancelled", "stage_idle"]


@dataclasses.dataclass(frozen=True)
class WorkerRecord:
    """What layer 2 knows of one worker."""

    worker_id: str
    task_id: str
    stage: str
    goal: str = ""
    label: str = ""
    status: str = "running"
    suspension: str | None = None
    """'waiting' (needs an answer) or 'background' (resume with a message), else None."""
    thread_id: str | None = None
    workspace: str = ""
    model_calls: int = 0
    tool_calls: int = 0
    steps: int = 0
    last_update: float = 0.0
    result: dict[str, Any] | None = None
    question: str | None = None
    check_after_s: float | None = None
    error: str | None = None
    stalled: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> WorkerRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in names})


@dataclasses.dataclass(frozen=True)
class SchedulingEvent:
    """One meaningful change, for the supervisor agent to decide on."""

    kind: EventKind
    task_id: str
    worker_id: str | None = None
    data: dict[str, Any] = dataclasses.field(default_factory=dict)
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SchedulingEvent:
        return cls(kind=raw["kind"], task_id=raw["task_id"], worker_id=raw.get("worker_id"),
                   data=dict(raw.get("data") or {}), at=float(raw.get("at") or 0))


def apply_update(record: WorkerRecord, update: WorkerUpdate) -> WorkerRecord:
    """The update function: fold one `WorkerUpdate` into the worker's record."""
    p = update.progress
    changes: dict[str, Any] = {
        "status": update.status, "model_calls": p.model_calls, "tool_calls": p.tool_calls,
        "steps": p.steps, "last_update": update.at or time.time(), "stalled": False,
        "suspension": update.status if update.status in ("waiting", "background") else None,
    }
    if update.result is not None:
        changes["result"] = update.result
    if update.status == "waiting":
        changes["question"] = update.question
    if update.status == "background":
        changes["check_after_s"] = update.check_after_s
    if update.error:
        changes["error"] = update.error
    return dataclasses.replace(record, **changes)


def filter_update(before: WorkerRecord, after: WorkerRecord) -> SchedulingEvent | None:
    """The event filter: a scheduling event for a meaningful change, else None."""
    if before.status == after.status and after.status == "running":
        return None
    if before.status == after.status and after.result == before.result:
        return None
    base = {"label": after.label, "stage": after.stage}
    kind: EventKind | None = None
    data: dict[str, Any] = {}
    if after.status == "completed":
        kind, data = "worker_finished", {"result": after.result}
    elif after.status == "failed":
        kind, data = "worker_failed", {"error": after.error}
    elif after.status == "waiting":
        kind, data = "worker_waiting", {"question": after.question}
    elif after.status == "background":
        kind, data = "worker_background", {"check_after_s": after.check_after_s,
                                           "reason": (after.result or {}).get("reason")}
    elif after.status == "cancelled":
        kind, data = "worker_cancelled", {"result": after.result}
    if kind is None:
        return None
    return SchedulingEvent(kind=kind, task_id=after.task_id, worker_id=after.worker_id,
                           data={**base, **data}, at=after.last_update)


def stalled(record: WorkerRecord, now: float, stall_after_s: float) -> bool:
    """A running worker silent for longer than `stall_after_s` (reported once per silence)."""
    return (record.status == "running" and not record.stalled
            and now - record.last_update > stall_after_s)
