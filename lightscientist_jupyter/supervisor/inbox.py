"""The supervisor loop's inbox: layer-3 updates on their way in, in the recorded order in a
replay.

Workers report from their own threads (`put`); the loop takes the updates in one at a time
(`next`) and folds them into its records. In a normal run that is all: an update is taken in
as it comes, nothing waits.

The order in which updates are taken in decides what the supervisor agent is told — which of
two workers that ran at once finished first, whether the other still ran — and so its next
request, which a strict replay requires to be the recorded one (see `runtime.recording.update_order`
for why the model's answers alone cannot fix it). So, when the run records, each update that
changes what the agent is told is written to the recording as the loop takes it in (`took`),
between the agent's calls. When the run replays such a recording, the inbox keeps that order:

- an update that changes what the agent is told waits while the recording took in others
  before it, or the agent made a call before it that this replay has not made yet; the
  worker's later updates wait behind it;
- the loop takes no event while the recording's next line is an update still to come from a
  worker that can send it (`may_decide`): its turn is running, an update is on its way, or a
  scheduled resume (a job's, or the agent's) will wake it. An update that cannot come any more
  is passed over, so a replay that went its own way (a lenient one) is not held for it.
- if nothing can bring the event the agent's next recorded call was about while updates wait
  (`unstick`), the replay is further on than its answered calls say: it goes on from the oldest
  waiting update.
"""

from __future__ import annotations

import queue
import time

from lightscientist_jupyter.runtime.recording.update_order import UpdateOrder
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerUpdate
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage
from lightscientist_jupyter.supervisor.updates import apply_update, filter_update
from lightscientist_jupyter.vocab import ProjectStatus


class Inbox:
    """Layer-3 updates for the supervisor loop. `put` is thread-safe (the runtime's
    `on_update`); the rest runs on the loop's thread. `bind` it to the runtime once made."""

    def __init__(self) -> None:
        self._raw: queue.Queue[WorkerUpdate] = queue.Queue()
        self.runtime: ExecutionRuntime | None = None
        self.order: UpdateOrder | None = None
        """The recorded order, in a replay of a recording that kept one."""
        self._held: dict[str, list[WorkerUpdate]] = {}
        """In a replay: the updates that came before their turn, by worker, oldest first."""

    def put(self, update: WorkerUpdate) -> None:
        self._raw.put(update)

    def bind(self, runtime: ExecutionRuntime) -> None:
        self.runtime = runtime
        self.order = runtime.update_order

    def next(self, stage: SupervisedStage, timeout: float = 0.0) -> WorkerUpdate | None:
        """The next update the loop may take in: a waiting one whose turn came, else the next
        to arrive within `timeout` seconds that need not wait; None when there is none."""
        if self.order is None:
            return self._get(timeout)
        update = self._release(stage)
        if update is not None:
            return update
        end = time.monotonic() + timeout
        while (update := self._get(max(0.0, end - time.monotonic()))) is not None:
            if not self._hold(stage, update):
                return update
        return None

    def took(self, record: WorkerRecord) -> None:
        """The loop took in an update that changes what the agent is told (`record`, as it
        is now): the recording writes it, a replay's order goes on past it."""
        key = self._key(record.id)
        if key is None:  # neither recording nor replaying
            return
        recorder = self.runtime.recorder if self.runtime is not None else None
        if recorder is not None:
            recorder.write_update(key, record.id, record.stage, record.status)
        if self.order is not None:
            self.order.took(key)

    def may_decide(self, stage: SupervisedStage) -> bool:
        """Whether the loop may take an event now (always, but in a replay whose recording
        took in an update before the agent's next call that can still come)."""
        order = self.order
        if order is None:
            return True
        while (due := order.due()) is not None:
            worker = self._worker_of(stage, due)
            if worker is not None and self._can_send(stage, worker):
                return False
            order.skip()
        return True

    def unstick(self, stage: SupervisedStage, project_status: str) -> None:
        """In a replay with updates waiting for the agent's next recorded call: when nothing
        can bring an event for that call (none queued, no resume scheduled, no question for
        the user, no turn running), go on from the oldest waiting update."""
        order = self.order
        if order is None or not self._held or order.due() is not None:
            return
        with stage.lock:
            busy = bool(stage.state.queue or stage.state.schedules)
            workers = list(stage.state.records)
        # turns before the queue: a turn's last update is queued before its thread ends
        if busy or project_status == ProjectStatus.WAITING_USER or any(map(self._active, workers)):
            return
        if not self._raw.empty():
            return
        key = self._key(next(iter(self._held)))
        if key is not None:
            order.catch_up(key)

    # ------------------------------------------------------------------ internals

    def _key(self, worker: str) -> str | None:
        """The worker's session key in the recording or replay (None: neither)."""
        return self.runtime.tape_key(worker) if self.runtime is not None else None

    def _active(self, worker: str) -> bool:
        return self.runtime is not None and self.runtime.is_active(worker)

    def _get(self, timeout: float) -> WorkerUpdate | None:
        try:
            return self._raw.get(timeout=timeout) if timeout > 0 else self._raw.get_nowait()
        except queue.Empty:
            return None

    def _hold(self, stage: SupervisedStage, update: WorkerUpdate) -> bool:
        """Keep `update` back when it came before its turn (or behind one of its worker's
        that did); whether it was kept."""
        waiting = self._held.get(update.worker_id)
        if waiting is not None:
            waiting.append(update)
            return True
        if self._ready(stage, update):
            return False
        self._held[update.worker_id] = [update]
        return True

    def _release(self, stage: SupervisedStage) -> WorkerUpdate | None:
        """The oldest kept update whose turn came, if any."""
        for worker, waiting in self._held.items():
            if self._ready(stage, waiting[0]):
                update = waiting.pop(0)
                if not waiting:
                    del self._held[worker]
                return update
        return None

    def _ready(self, stage: SupervisedStage, update: WorkerUpdate) -> bool:
        """Whether the update may be taken in now: it changes nothing the agent is told, or
        the recording's order admits it."""
        with stage.lock:
            before = stage.state.records.get(update.worker_id)
        if before is None or filter_update(before, apply_update(before, update)) is None:
            return True
        key = self._key(update.worker_id)
        return key is None or self.order is None or self.order.admits(key)

    def _worker_of(self, stage: SupervisedStage, recorded: str) -> str | None:
        """The stage's worker whose session the recorded session `recorded` answers."""
        with stage.lock:
            workers = list(stage.state.records)
        for worker in workers:
            key = self._key(worker)
            if key is not None and self.order is not None and self.order.recorded(key) == recorded:
                return worker
        return None

    def _can_send(self, stage: SupervisedStage, worker: str) -> bool:
        """Whether `worker` can still send an update without the agent: its turn is running
        (read before the queue: a turn's last update is queued before its thread ends), an
        update is on its way or waiting here, or a resume is scheduled for it."""
        if self._active(worker) or not self._raw.empty() or worker in self._held:
            return True
        with stage.lock:
            return any(s["worker_id"] == worker for s in stage.state.schedules)
