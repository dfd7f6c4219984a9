"""A run's stop when its storage goes away (a full or read-only disk, a checkpoint database
unreachable, damaged or unwritable: see `_faults`).

Any thread of the run — a worker's turn, the checkpoint saver, the event writer, the usage
timer, the inbox poller — reports such a fault instead of raising it; the first one heard
stops the run, which ends `stopped` with one line naming the storage and the stage, never
`failed`: nothing about the work was wrong, and `lightscientist resume` goes on once the
storage is back. Closing the project after that meets the same fault again (the usage totals,
the last events, the checkpoints' compaction cannot be written either); each of those steps
is absorbed: the totals are caught up from their ledger at the next open, and a resume needs
none of the rest.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, Protocol, TypeVar

from lightscientist_jupyter._faults import (
    CHECKPOINTS,
    Fault,
    storage_fault,
    watch_storage_faults,
)
from lightscientist_jupyter._fs import release_space, reserve_space
from lightscientist_jupyter.errors import StorageFault
from lightscientist_jupyter.workspace import Workspace


class Stoppable(Protocol):
    """What the watch needs of layer 1: where the project stands, and its `stopped`."""

    @property
    def stage(self) -> str: ...

    def stop(self, reason: str) -> None: ...


class StorageWatch:
    """Hears the storage faults of one project's run and stops it.

    Args:
        workspace: the project's workspace (a file fault elsewhere is another project's).
        stop_event: set when a fault is heard (the run's loop ends at its next step).
        checkpoints: how the run's checkpoint database is named in its line (a database's
            error does not say which database it is).
    """

    def __init__(self, workspace: Workspace, stop_event: threading.Event, checkpoints: str):
        self.root = str(workspace.root)
        self.reserve = workspace.state_dir / "space.reserve"
        self.stop_event = stop_event
        self.checkpoints = checkpoints
        self.fault: Fault | None = None
        """The first fault heard (a later one says nothing new, unless this one's file was
        not known)."""

    def heard(self, fault: Fault) -> None:
        """A write of this run failed on storage that went away: stop at once."""
        if fault.where.startswith("/") and not fault.where.startswith(self.root):
            return  # another project's file
        if self.fault is not None and self.fault.where != "?":
            return
        if fault.where == CHECKPOINTS:
            fault = dataclasses.replace(fault, where=self.checkpoints)
        self.fault = fault
        self.stop_event.set()

    def start(self) -> None:
        """A run begins: hear every thread's faults, and hold some disk space back, so that
        a full disk still leaves room to record the stop."""
        watch_storage_faults(self.heard)
        reserve_space(self.reserve)

    def end(self) -> None:
        watch_storage_faults(self.heard, stop=True)
        release_space(self.reserve)  # on a full disk: room to record the stop

    def absorb(self, exc: Exception) -> bool:
        """Whether `exc` is a storage fault; if so it is heard (see `stop`), not raised."""
        fault = storage_fault(exc)
        if fault is not None:
            self.heard(fault)
        return fault is not None

    def stop(self, controller: Stoppable) -> StorageFault:
        """Record the stop (`stopped`, with the line as its reason) as far as the storage
        allows; returns the error the run raises."""
        assert self.fault is not None
        line = self.fault.line(controller.stage)
        try:
            controller.stop(line)
        except Exception as exc:  # the state cannot be written: it stays `running`
            if storage_fault(exc) is None:
                raise
        return StorageFault(self.fault, line)

    def absorbing(self, step: Callable[[], object]) -> None:
        """Run one step of closing the project; a storage fault there is heard, not raised."""
        try:
            step()
        except Exception as exc:
            if not self.absorb(exc):
                raise


P = ParamSpec("P")
T = TypeVar("T")


def opening(open_project: Callable[P, T]) -> Callable[P, T]:
    """Opening a project (`research`, `resume`) on storage that went away — a disk still
    full, a database still down — raises `StorageFault`, one line, not the storage's error."""

    @functools.wraps(open_project)
    def opened(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return open_project(*args, **kwargs)
        except Exception as exc:
            fault = storage_fault(exc)
            if fault is None:
                raise
            raise StorageFault(fault) from None

    return opened
