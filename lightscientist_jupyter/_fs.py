"""Small file helpers shared by every layer: atomic replace and safe appends."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

DISK_ERRNOS = (errno.ENOSPC, errno.EROFS, errno.EDQUOT)


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, mode: int = 0o644, durable: bool = True
) -> None:
    """Write `text` to `path` so that readers see the old file or the new one, never half.

    The content goes to a temporary file in the same folder, is flushed to disk (unless
    `durable` is False: a file rebuilt from another at every write, which a power loss may
    leave at its previous version), and replaces the target with `os.replace`.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except FileNotFoundError:  # the folder's first file
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:  # name it for the message
            exc.filename = str(path)
        raise


def write_json_atomic(path: str | os.PathLike[str], obj: Any, **kwargs: Any) -> None:
    """`write_text_atomic` of `obj` as indented JSON."""
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n", **kwargs)


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append `text` with one write on a file opened for appending, then fsync. A write the
    disk cuts short is taken back, so the file never ends in half an entry."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    data = text.encode("utf-8")
    size = os.fstat(fd).st_size
    try:
        if os.write(fd, data) < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        os.fsync(fd)
    except OSError as exc:
        os.ftruncate(fd, size)
        if exc.filename is None:
            exc.filename = str(path)
        raise
    finally:
        os.close(fd)


def missing_files(paths: Iterable[str], root: Path, *, dirs_ok: bool = False) -> list[str]:
    """Of `paths` (workspace-relative; a leading `/` is the workspace root, as workers see
    it), those that are not a non-empty file (or, with `dirs_ok`, a folder holding
    something), as `path (missing|empty)`."""
    problems = []
    for rel in dict.fromkeys(p for p in paths if p):
        path = root / rel.lstrip("/")
        if ".." in Path(rel).parts:
            problems.append(f"{rel} (outside the workspace)")
        elif dirs_ok and path.is_dir():
            if not any(path.iterdir()):
                problems.append(f"{rel} (empty)")
        elif not path.is_file():
            problems.append(f"{rel} (missing)")
        elif path.stat().st_size == 0:
            problems.append(f"{rel} (empty)")
    return problems


def remove_stray_tmp(*folders: Path) -> list[Path]:
    """Remove the temporary files `write_text_atomic` leaves when its process is killed
    mid-write (`.NAME.XXXX.tmp`) directly in `folders`; call it only while no other process
    writes there (under the run lock). Returns what was removed."""
    removed = []
    for folder in folders:
        for path in folder.glob(".*.tmp"):
            if path.is_file():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def disk_fault(exc: BaseException | None) -> str | None:
    """`disk full while writing PATH` (or `read-only file system while writing PATH`) when
    that is what `exc`, or an exception it was raised from, is; else None."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
            what = "read-only file system" if exc.errno == errno.EROFS else "disk full"
            return f"{what} while writing {exc.filename or '?'}"
        if isinstance(exc, sqlite3.OperationalError):
            text = str(exc).lower()
            if "disk is full" in text:
                return "disk full while writing the checkpoint database"
            if "readonly database" in text:
                return "read-only file system while writing the checkpoint database"
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


_fault_listeners: list[Callable[[str], None]] = []
_fault_lock = threading.Lock()


def watch_disk_faults(listener: Callable[[str], None], *, stop: bool = False) -> None:
    """Call `listener(fault)` (see `disk_fault`) for each disk fault any thread reports
    (with `stop`: no longer)."""
    with _fault_lock:
        if stop:
            if listener in _fault_listeners:
                _fault_listeners.remove(listener)
        elif listener not in _fault_listeners:
            _fault_listeners.append(listener)


def report_disk_fault(exc: BaseException) -> str | None:
    """Tell the listeners when `exc` is a disk fault (see `disk_fault`); returns it.

    Threads whose writes fail on a full disk report the fault instead of raising it, so the
    run that owns them stops with one line rather than one traceback per thread."""
    fault = disk_fault(exc)
    if fault is not None:
        with _fault_lock:
            listeners = list(_fault_listeners)
        for listener in listeners:
            listener(fault)
    return fault


RESERVE_BYTES = 256 * 1024


def reserve_space(path: Path, size: int = RESERVE_BYTES) -> None:
    """Hold `size` bytes of the disk in `path` while a run goes on, so that when the disk
    fills up, removing it leaves room to record that the run stopped (best effort)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError:
        os.close(fd)
        path.unlink(missing_ok=True)
        return
    os.close(fd)


def release_space(path: Path) -> None:
    path.unlink(missing_ok=True)
