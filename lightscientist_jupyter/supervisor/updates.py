"""Scheduling events and the two pure steps of processing a layer-3 update.

1. `apply_update(record, update)` — the update function: the worker's record after the update.
2. `filter_update(before, after)` — the event filter: the scheduling event the update
   deserves, or None. Only meaningful changes pass (finished, failed, waiting, went to
   background, cancelled); a running → running progress update only touches the record and
   never wakes the supervisor agent.

Layer 2 keeps its copy of each worker as the layer-3 `WorkerRecord`, folded from updates.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerUpdate
from lightscientist_jupyter.vocab import SchedulingKind, WorkerStatus

LEGACY_KINDS: dict[str, SchedulingKind] = {"finish_refused": SchedulingKind.STAGE_REJECTED}
"""Kind names an older version saved in `supervisor.json`, and their names now."""


@dataclasses.dataclass(frozen=True)
class SchedulingEvent:
    """One meaningful change, for the supervisor agent to decide on."""

    kind: SchedulingKind
    task_id: str
    worker_id: str | None = None
    data: dict[str, Any] = dataclasses.field(default_factory=dict)
    at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "task_id": self.task_id,
            "worker_id": self.worker_id,
            "data": self.data,
            "at": self.at,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SchedulingEvent:
        kind = LEGACY_KINDS.get(raw["kind"]) or SchedulingKind(raw["kind"])
        return cls(
            kind=kind,
            task_id=raw["task_id"],
            worker_id=raw.get("worker_id"),
            data=dict(raw.get("data") or {}),
            at=float(raw.get("at") or 0),
        )


def apply_update(record: WorkerRecord, update: WorkerUpdate) -> WorkerRecord:
    """The update function: fold one `WorkerUpdate` into the worker's record."""
    changes: dict[str, Any] = {
        "status": WorkerStatus(update.status),
        "progress": update.progress,
        "updated_at": update.at or time.time(),
    }
    if update.result is not None:
        changes["result"] = update.result
    if update.status == WorkerStatus.WAITING:
        changes["question"] = update.question
        changes["permission"] = update.permission
    if update.status == WorkerStatus.BACKGROUND:
        changes["check_after_s"] = update.check_after_s
    if update.error:
        changes["error"] = update.error
    return dataclasses.replace(record, **changes)


_EVENT_OF_STATUS: dict[WorkerStatus, tuple[SchedulingKind, str]] = {
    WorkerStatus.COMPLETED: (SchedulingKind.WORKER_FINISHED, "result"),
    WorkerStatus.FAILED: (SchedulingKind.WORKER_FAILED, "error"),
    WorkerStatus.WAITING: (SchedulingKind.WORKER_WAITING, "question"),
    WorkerStatus.BACKGROUND: (SchedulingKind.WORKER_BACKGROUND, "check_after_s"),
    WorkerStatus.CANCELLED: (SchedulingKind.WORKER_CANCELLED, "result"),
}
"""Each status that wakes the agent: the event kind and the record field the event carries."""


def filter_update(before: WorkerRecord, after: WorkerRecord) -> SchedulingEvent | None:
    """The event filter: a scheduling event for a meaningful change, else None."""
    if before.status == after.status and after.status == WorkerStatus.RUNNING:
        return None
    if before.status == after.status and after.result == before.result:
        return None
    if after.status not in _EVENT_OF_STATUS:
        return None
    kind, field = _EVENT_OF_STATUS[after.status]
    data: dict[str, Any] = {
        "label": after.label,
        "stage": after.stage,
        field: getattr(after, field),
    }
    if after.status == WorkerStatus.WAITING and after.permission is not None:
        data["permission"] = after.permission.to_dict()
    if after.status == WorkerStatus.BACKGROUND:
        data["reason"] = (after.result or {}).get("reason")
    return SchedulingEvent(
        kind=kind, task_id=after.task_id or "", worker_id=after.id, data=data, at=after.updated_at
    )
