"""What every kind of worker session keeps the same way: its record, saved at each change of
status, the `WorkerUpdate`s it sends up, its layer-3 events, and the flags a cancel and the
runtime's close set.

Two kinds of session stand on it: a deepagents graph run turn by turn (`session.WorkerSession`)
and a coding agent over ACP (`runtime.acp.worker.AgentWorkerSession`). The runtime drives both
through this base and the few methods each gives (`start_turn`, `progress`, `tracked`), so a
worker's record, its updates and its events read alike whoever works the stage.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightscientist_jupyter.runtime.session.worker_files import save_record
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, EventType, WorkerStatus


class RecordKeeping:
    """A worker's record, its updates and events; a subclass runs its turns.

    Args:
        record: the worker's record (new, or loaded from `worker.json`).
        folder: `workers/<id>/`, where the record is saved.
        emit: the event bus's `emit`.
        report: receives every `WorkerUpdate` (layer 2's).
    """

    def __init__(
        self,
        record: WorkerRecord,
        folder: Path,
        *,
        emit: Callable[..., object],
        report: Callable[[WorkerUpdate], None],
    ):
        self.record = record
        self.folder = folder
        self.cancel = threading.Event()
        """Set by a cancel: the turn ends at its next chance."""
        self.hard_stop = threading.Event()
        """Set when the turn must stop now (a cancel past its time, the runtime's close)."""
        self.finished = threading.Event()
        """Set while no turn runs."""
        self.finished.set()
        self.removed = False
        self._emit = emit
        self._report = report
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ what a kind gives

    def start_turn(self, inp: Any, *, resumed: bool) -> None:
        """Run one turn on a thread of its own."""
        raise NotImplementedError

    def progress(self) -> Progress:
        raise NotImplementedError

    def tracked(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The files it wrote and the commands it ran so far (kept in its record)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ properties

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def status(self) -> WorkerStatus:
        return self.record.status

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ record keeping

    def amend(self, **changes: Any) -> None:
        """Change fields of the record in memory only (the next change of status saves it);
        layer 2 points its own session at each new stage this way."""
        with self._lock:
            self.record = dataclasses.replace(self.record, **changes)

    def _set(self, **changes: Any) -> None:
        files, commands = self.tracked()
        self.record = dataclasses.replace(
            self.record,
            **changes,
            progress=self.progress(),
            files_written=files,
            commands=commands,
            updated_at=time.time(),
        )
        save_record(self.folder, self.record)

    def _send(self, **extra: Any) -> None:
        r = self.record
        self._report(
            WorkerUpdate(
                worker_id=self.id,
                status=r.status,
                progress=self.progress(),
                stage=r.stage,
                task_id=r.task_id,
                result=r.result,
                at=time.time(),
                **extra,
            )
        )

    def _progress(self) -> None:
        self._send()

    def _emit_event(self, type: str, message: str, data: dict[str, Any]) -> None:
        self._emit(
            type,
            message,
            worker_id=self.id,
            stage=self.record.stage,
            task_id=self.record.task_id,
            data=data,
        )

    def _fail(self, error: str) -> None:
        with self._lock:
            if self.status in FINAL_WORKER_STATUSES:
                return
            self._set(status=WorkerStatus.FAILED, error=error)
            self._emit_event(
                EventType.SESSION_END,
                f"failed: {error}",
                {"status": str(WorkerStatus.FAILED), "error": error},
            )
            self._send(error=error)

    def settle_cancelled(self, result: dict[str, Any]) -> None:
        with self._lock:
            self._set(status=WorkerStatus.CANCELLED, result=result)
            self._emit_event(
                EventType.WORKER_CANCELLED,
                result.get("notes", "cancelled")[:200],
                {"result": result},
            )
            self._send()
