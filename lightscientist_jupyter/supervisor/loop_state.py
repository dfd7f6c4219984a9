"""What the supervisor loop must remember across a crash, its file, and the stage handle.

`.lightscientist/supervisor.json` holds, for the stage being supervised: layer 2's copy of
each worker's record, the scheduling events not yet decided, the scheduled resumes, the
attempt counter, the start_worker calls already carried out, the decision in progress, the
accepted finish and the workers already reported stalled. It is written by atomic replace
after every change. A file an older version wrote (its own worker-record layout, the kind
name `finish_refused`) still loads, so an old workspace resumes.

`SupervisedStage` is the one handle on that state that the loop, the tool backends and crash
recovery share: the task, the state, and the lock that guards both.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any, TypedDict

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.errors import SupervisorError
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.task import StageTask
from lightscientist_jupyter.vocab import WorkerStatus


class Schedule(TypedDict):
    """A resume the supervisor agent scheduled: layer 2 sends `message` when `due`."""

    worker_id: str
    message: str
    due: float
    """Unix time."""


@dataclasses.dataclass
class LoopState:
    """Layer 2's memory of the current stage, kept in `.lightscientist/supervisor.json`."""

    task_id: str
    records: dict[str, WorkerRecord] = dataclasses.field(default_factory=dict)
    queue: list[SchedulingEvent] = dataclasses.field(default_factory=list)
    schedules: list[Schedule] = dataclasses.field(default_factory=list)
    attempts: int = 0
    """Failed workers and rejected finishes so far (the supervisor's retry budget)."""
    started: dict[str, str] = dataclasses.field(default_factory=dict)
    """start_worker call's place in the agent's thread (`thread:message.call`) → worker id:
    a call replayed after a crash never starts a second worker."""
    problem: str | None = None
    """The last refusal or worker error of the stage (a failure's reason leads with it)."""
    in_progress: SchedulingEvent | None = None
    last_finish: dict[str, Any] | None = None
    stalled: set[str] = dataclasses.field(default_factory=set)
    """Workers reported stalled since their latest update (a silence is reported once)."""
    search_told: bool = False
    """A search stage's end was queued for the agent (`search_over`): told once."""
    review_told: bool = False
    """A review stage's round was aggregated by layer 1 (and `review_over` queued): once."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "records": {k: r.to_dict() for k, r in self.records.items()},
            "queue": [e.to_dict() for e in self.queue],
            "schedules": self.schedules,
            "attempts": self.attempts,
            "started": self.started,
            "problem": self.problem,
            "in_progress": self.in_progress.to_dict() if self.in_progress else None,
            "last_finish": self.last_finish,
            "stalled": sorted(self.stalled),
            "search_told": self.search_told,
            "review_told": self.review_told,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LoopState:
        records = raw.get("records", {})
        legacy_stalled = {k for k, r in records.items() if r.get("stalled")}
        return cls(
            task_id=raw["task_id"],
            records={k: _saved_record(r) for k, r in records.items()},
            queue=[SchedulingEvent.from_dict(e) for e in raw.get("queue", [])],
            schedules=list(raw.get("schedules", [])),
            attempts=int(raw.get("attempts", 0)),
            started=dict(raw.get("started", {})),
            problem=raw.get("problem"),
            in_progress=SchedulingEvent.from_dict(raw["in_progress"])
            if raw.get("in_progress")
            else None,
            last_finish=raw.get("last_finish"),
            stalled=set(raw.get("stalled", ())) | legacy_stalled,
            search_told=bool(raw.get("search_told", False)),
            review_told=bool(raw.get("review_told", False)),
        )


def _saved_record(raw: dict[str, Any]) -> WorkerRecord:
    """A record as `supervisor.json` holds it, in this version's layout or an older one's."""
    if "id" in raw:
        return WorkerRecord.from_dict(raw)
    # an older version kept a layer-2 record of its own: flat counters, `last_update`
    label = raw.get("label") or ""
    return WorkerRecord(
        id=raw["worker_id"],
        thread_id=raw.get("thread_id") or "",
        stage=raw.get("stage"),
        task_id=raw.get("task_id"),
        goal=raw.get("goal") or "",
        status=WorkerStatus(raw.get("status") or WorkerStatus.RUNNING),
        labels={"label": label} if label else {},
        updated_at=float(raw.get("last_update") or 0.0),
        progress=Progress.from_dict(raw),  # the counters were top-level keys
        result=raw.get("result"),
        question=raw.get("question"),
        check_after_s=raw.get("check_after_s"),
        error=raw.get("error"),
        workspace=raw.get("workspace") or "",
    )


def load_loop_state(path: Path, task_id: str) -> LoopState:
    """The saved state when it belongs to `task_id`, else a fresh one."""
    try:
        raw = json.loads(read_text(path))
        if raw.get("task_id") == task_id:
            return LoopState.from_dict(raw)
    except (FileNotFoundError, ValueError, KeyError):
        pass
    return LoopState(task_id=task_id)


def save_loop_state(path: Path, state: LoopState) -> None:
    write_json_atomic(path, state.to_dict())


class SupervisedStage:
    """The stage under supervision: its task and loop state, guarded by one lock and saved
    after every change.

    Args:
        task: the stage task layer 1 handed down.
        path: the state file (`.lightscientist/supervisor.json`).
        lock: the supervisor's lock (re-entrant; `cancel_all` holds it too).
    """

    def __init__(self, task: StageTask, path: Path, lock: threading.RLock):
        self.task = task
        self.path = path
        self.lock = lock
        self.state = load_loop_state(path, task.task_id)

    @property
    def fresh(self) -> bool:
        """Nothing was saved for this stage: it starts now rather than resumes."""
        s = self.state
        return not s.records and not s.queue and s.in_progress is None

    def save(self) -> None:
        with self.lock:
            save_loop_state(self.path, self.state)

    def enqueue(self, event: SchedulingEvent) -> None:
        with self.lock:
            self.state.queue.append(event)
            self.save()

    def take_event(self) -> SchedulingEvent | None:
        """The oldest queued event, now the decision in progress (None when none is queued)."""
        with self.lock:
            if not self.state.queue:
                return None
            event = self.state.queue.pop(0)
            self.state.in_progress = event
            self.save()
            return event

    def decided(self) -> None:
        """The decision in progress is over."""
        with self.lock:
            self.state.in_progress = None
            self.save()

    def known(self, worker_id: str) -> WorkerRecord:
        """Layer 2's record of a worker of this stage."""
        with self.lock:
            record = self.state.records.get(worker_id)
        if record is None:
            raise SupervisorError(
                f"no worker '{worker_id}' in stage {self.task.task_id}; "
                "list_workers shows the stage's workers"
            )
        return record

    def put(self, record: WorkerRecord, *, save: bool = True) -> None:
        with self.lock:
            self.state.records[record.id] = record
            if save:
                self.save()
