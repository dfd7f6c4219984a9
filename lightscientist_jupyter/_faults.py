"""Storage that went away under a run: what counts as it, and who hears of it.

A run writes to two kinds of storage: files (the workspace's state, logs and outputs) and the
checkpoint database (a SQLite file or a PostgreSQL server). When either goes away — the disk
is full or read-only, the database is unreachable, damaged or cannot be written — no step of
the run can be trusted to reach it, and retrying or failing the stage would be wrong: the
run stops `stopped` with one line naming the storage, and `lightscientist resume` goes on
once it is back. `storage_fault` is the one classification every stop path uses; threads
whose writes fail this way `report_storage_fault` instead of raising, so the run that owns
them stops with that line rather than one traceback per thread.
"""

from __future__ import annotations

import dataclasses
import errno
import sqlite3
import sys
import threading
from collections.abc import Callable
from typing import Literal

from lightscientist_jupyter.errors import StorageFault

FaultKind = Literal["full", "read-only", "unwritable", "damaged", "gone"]

DISK_ERRNOS = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read-only"}

CHECKPOINTS = "the checkpoint database"
"""Where a database's fault happened, until the run that owns it names the database."""

_REMEDIES: dict[FaultKind, str] = {
    "full": "free space and run `lightscientist resume`",
    "read-only": "make it writable and run `lightscientist resume`",
    "unwritable": "run `lightscientist resume` once it can be written again",
    "damaged": "run `lightscientist resume --fresh-sessions` (the stage starts again)",
    "gone": "run `lightscientist resume` when it is back",
}

_SQLITE_KINDS: dict[int, FaultKind] = {
    sqlite3.SQLITE_FULL: "full",
    sqlite3.SQLITE_READONLY: "unwritable",
    sqlite3.SQLITE_IOERR: "unwritable",
    sqlite3.SQLITE_CORRUPT: "damaged",
    sqlite3.SQLITE_NOTADB: "damaged",
    sqlite3.SQLITE_CANTOPEN: "gone",
}
"""SQLite's primary result codes (the low byte of an extended one) that mean the storage."""


@dataclasses.dataclass(frozen=True)
class Fault:
    """One storage fault, for the line a run stops with."""

    kind: FaultKind
    where: str
    """The file's path, or `CHECKPOINTS` (the run puts the database's name there)."""
    detail: str = ""
    """The storage's own words (a database's error), when they say more than `kind`."""

    @property
    def problem(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        match self.kind:
            case "full":
                return f"disk full while writing {self.where}"
            case "read-only":
                return f"read-only file system while writing {self.where}"
            case "unwritable":
                return f"{self.where} cannot be written{detail}"
            case "damaged":
                return f"{self.where} is damaged{detail}"
            case _:
                return f"{self.where} went away{detail}"

    @property
    def remedy(self) -> str:
        return _REMEDIES[self.kind]

    def line(self, stage: str | None = None) -> str:
        """`PROBLEM [at stage STAGE]: REMEDY`, the line a stopped run ends with."""
        return self.problem + (f" at stage {stage}" if stage else "") + f": {self.remedy}"

    def __str__(self) -> str:
        return self.line()


def storage_fault(exc: BaseException | None) -> Fault | None:
    """The storage fault `exc` is, or was raised from (its cause, or the exception it was
    raised while handling, unless it was raised `from None`: an error that says what to
    do itself); else None."""
    seen = 0
    while exc is not None and seen < 10:
        fault = _one(exc)
        if fault is not None:
            return fault
        if exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            exc = None if exc.__suppress_context__ else exc.__context__
        seen += 1
    return None


def _one(exc: BaseException) -> Fault | None:
    if isinstance(exc, StorageFault) and isinstance(exc.fault, Fault):
        return exc.fault
    if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
        return Fault(DISK_ERRNOS[exc.errno], str(exc.filename or "?"))  # type: ignore[arg-type]
    if isinstance(exc, sqlite3.DatabaseError):
        code = getattr(exc, "sqlite_errorcode", None)
        kind = _SQLITE_KINDS.get(code & 0xFF) if isinstance(code, int) else None
        return Fault(kind, CHECKPOINTS, _first_line(exc)) if kind else None
    psycopg = sys.modules.get("psycopg")  # (an error of psycopg's exists only once imported)
    if psycopg is not None and isinstance(exc, psycopg.OperationalError):
        # the connection lost or refused, the pool timed out or closed, the server shutting
        # down or out of disk: psycopg's class for what the program itself did not cause
        return Fault("gone", CHECKPOINTS, _first_line(exc))
    return None


def _first_line(exc: BaseException, limit: int = 120) -> str:
    text = str(exc).strip().splitlines()
    line = " ".join(text[0].split()) if text else type(exc).__name__
    for prefix in ("connection failed: ", "consuming input failed: "):
        line = line.removeprefix(prefix)
    return line if len(line) <= limit else line[: limit - 1] + "…"


_listeners: list[Callable[[Fault], None]] = []
_lock = threading.Lock()


def watch_storage_faults(listener: Callable[[Fault], None], *, stop: bool = False) -> None:
    """Call `listener(fault)` for each storage fault any thread reports (with `stop`: no
    longer)."""
    with _lock:
        if stop:
            if listener in _listeners:
                _listeners.remove(listener)
        elif listener not in _listeners:
            _listeners.append(listener)


def report_storage_fault(exc: BaseException) -> Fault | None:
    """Tell the listeners when `exc` is a storage fault (see `storage_fault`); returns it."""
    fault = storage_fault(exc)
    if fault is not None:
        with _lock:
            listeners = list(_listeners)
        for listener in listeners:
            listener(fault)
    return fault
