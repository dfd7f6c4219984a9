"""Layer 2's side of jobs: it, not the agent, waits for a worker's jobs and resumes it.

A worker that submitted a job goes to `background`. `screen` keeps that change from the
supervisor agent (there is nothing to decide) and leaves a scheduled resume at the job's
wall-time limit instead, so the stage is not idle and a restart does not resume the worker
early; `poll` (at every tick of the loop: a local job's watcher records its end at once;
Ray jobs are asked every `POLL_S`) resumes a background worker once every job of it has
ended, with their status, exit code, wall time and log tail (`jobs.ended_message`), and
drops that schedule.
"""

from __future__ import annotations

import time

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs.manager import Job, ended_message
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.vocab import EventType, SchedulingKind, WorkerStatus

POLL_S = 0.5
"""How often layer 2 looks at the jobs (a Ray job's state is one HTTP request)."""
WALL_MESSAGE = "LightScientist: your job reached its wall-time limit; check it with job_status."
WALL_GRACE_S = 30.0
"""How long past a job's wall-time limit its worker's fallback resume waits: the job's own end
(its process group ended, its Ray job stopped) comes well before, and resumes the worker with
the job's status; the fallback is for a job whose end is never seen."""


class JobPoller:
    """Waits for the current stage's jobs and resumes their workers when they end."""

    def __init__(self, runtime: ExecutionRuntime, bus: EventBus):
        self.runtime = runtime
        self.bus = bus
        self._next = 0.0

    def pending(self, worker_id: str) -> list[Job]:
        """The worker's jobs it has not been told the end of."""
        return [j for j in self.runtime.jobs.of_worker(worker_id) if not j.reported]

    def screen(
        self, stage: SupervisedStage, event: SchedulingEvent | None
    ) -> SchedulingEvent | None:
        """The event for the agent, or None when it is a worker waiting for its jobs."""
        if event is None or event.kind != SchedulingKind.WORKER_BACKGROUND or not event.worker_id:
            return event
        pending = self.pending(event.worker_id)
        if not pending:
            return event
        wid = event.worker_id
        due = max(j.submitted_at + j.wall_limit_s for j in pending) + WALL_GRACE_S
        with stage.lock:
            stage.state.schedules = [s for s in stage.state.schedules if s["worker_id"] != wid]
            stage.state.schedules.append({"worker_id": wid, "due": due, "message": WALL_MESSAGE})
            stage.save()
        self._next = 0.0  # a Ray job that ended at once is seen on the next tick
        return None

    def poll(self, stage: SupervisedStage, control: WorkerControl) -> None:
        """Resume each background worker of the stage whose jobs all ended."""
        with stage.lock:
            waiting = [
                r.id for r in stage.state.records.values() if r.status == WorkerStatus.BACKGROUND
            ]
        if not waiting or not any(self.pending(wid) for wid in waiting):
            return
        now = time.monotonic()
        if now >= self._next:  # what no thread here watches (Ray, adopted jobs), every POLL_S
            self._next = now + POLL_S
            self.runtime.jobs.refresh()
        for wid in waiting:
            pending = self.pending(wid)
            if not pending or any(j.running for j in pending):
                continue
            with stage.lock:
                stage.state.schedules = [s for s in stage.state.schedules if s["worker_id"] != wid]
                stage.save()
            self.bus.emit(
                EventType.RESUME_FIRED,
                f"resuming {wid}: " + ", ".join(f"job {j.name} {j.status}" for j in pending),
                worker_id=wid,
                stage=stage.task.stage,
                task_id=stage.task.task_id,
                data={"jobs": [j.id for j in pending]},
            )
            try:
                control.resume(wid, None, ended_message(pending, self.runtime.workspace.root))
            except RuntimeLayerError:
                continue  # it finished or was cancelled meanwhile
            self.runtime.jobs.mark_reported([j.id for j in pending])
