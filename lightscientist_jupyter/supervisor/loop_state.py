"""What the supervisor loop must remember across a crash, and its file.

`.lightscientist/supervisor.json` holds, for the stage being supervised: the worker records,
the scheduling events not yet decided, the scheduled resumes, the attempt counter, the
start_worker calls already carried out, the decision in progress and the accepted finish.
It is written by atomic replace after every change.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import write_json_atomic
from lightscientist_jupyter.supervisor.records import SchedulingEvent, WorkerRecord


@dataclasses.dataclass
class LoopState:
    """Layer 2's memory of the current stage, kept in `.lightscientist/supervisor.json`."""

    task_id: str
    records: dict[str, WorkerRecord] = dataclasses.field(default_factory=dict)
    queue: list[SchedulingEvent] = dataclasses.field(default_factory=list)
    schedules: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    attempts: int = 0
    started: dict[str, str] = dataclasses.field(default_factory=dict)
    """start_worker tool-call id → worker id: a replayed call never starts a second worker."""
    in_progress: SchedulingEvent | None = None
    last_finish: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id,
                "records": {k: r.to_dict() for k, r in self.records.items()},
                "queue": [e.to_dict() for e in self.queue], "schedules": self.schedules,
                "attempts": self.attempts, "started": self.started,
                "in_progress": self.in_progress.to_dict() if self.in_progress else None,
                "last_finish": self.last_finish}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LoopState:
        return cls(task_id=raw["task_id"],
                   records={k: WorkerRecord.from_dict(v) for k, v in raw.get("records", {}).items()},
                   queue=[SchedulingEvent.from_dict(e) for e in raw.get("queue", [])],
                   schedules=list(raw.get("schedules", [])), attempts=int(raw.get("attempts", 0)),
                   started=dict(raw.get("started", {})),
                   in_progress=SchedulingEvent.from_dict(raw["in_progress"])
                   if raw.get("in_progress") else None,
                   last_finish=raw.get("last_finish"))


def load_loop_state(path: Path, task_id: str) -> LoopState:
    """The saved state when it belongs to `task_id`, else a fresh one."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("task_id") == task_id:
            return LoopState.from_dict(raw)
    except (FileNotFoundError, ValueError, KeyError):
        pass
    return LoopState(task_id=task_id)


def save_loop_state(path: Path, state: LoopState) -> None:
    write_json_atomic(path, state.to_dict())
