"""The append-only event log: `.lightscientist/events.jsonl`.

One JSON object per line, each written whole with a single `write` on a file opened for
appending, so a reader never sees half a record unless the process died mid-write. On open,
the writer cuts such a torn last line back and continues `seq` from the last good record.
Readers go backwards from the end in blocks, so the last N events of a large log cost only
the blocks that hold them.
"""

from __future__ import annotations

import errno
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.errors import EventLogError
from lightscientist_jupyter.events.event import SCHEMA_VERSION, Event

_BLOCK = 64 * 1024


def _encode_reference(event: Event) -> bytes:
    """The line format, defined by `json.dumps` (the fast path below must match it)."""
    return (
        json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
    ).encode("utf-8")


# The same line, built faster: the fixed fields are formatted directly and only `data` goes
# through a JSON encoder made once (json.dumps builds a new one per call; the encoder's own
# `encode` uses the C accelerator where the interpreter has it). Strings go through
# `encode_basestring`, the escaping json.dumps applies with ensure_ascii=False, which raises
# TypeError for anything but a `str`.
# Anything unusual (a field of another type, a non-finite time, a circular `data`) takes the
# reference path, so the output — and the error for what cannot be encoded — is byte for byte
# json.dumps's.
_encode_data = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=str, check_circular=False
).encode
"""Without the circular-reference bookkeeping: a circular `data` ends in RecursionError and
goes to the reference path, which reports it as json.dumps does."""
_LINE = (
    '{"v":' + str(int(SCHEMA_VERSION)) + ',"seq":%s,"ts":%s,"layer":%s,"type":%s,'
    '"message":%s,"task_id":%s,"worker_id":%s,"stage":%s,"data":%s}\n'
)
_escape = json.encoder.encode_basestring


def _encode(event: Event) -> bytes:
    seq, ts, layer, data = event.seq, event.ts, event.layer, event.data
    task_id, worker_id, stage = event.task_id, event.worker_id, event.stage
    try:
        if (
            type(seq) is not int
            or type(layer) is not int
            or type(data) is not dict
            or not (type(ts) is int or (type(ts) is float and math.isfinite(ts)))
        ):
            raise TypeError
        line = _LINE % (
            seq,
            repr(ts),
            layer,
            _escape(event.type),
            _escape(event.message),
            "null" if task_id is None else _escape(task_id),
            "null" if worker_id is None else _escape(worker_id),
            "null" if stage is None else _escape(stage),
            _encode_data(data),
        )
        return line.encode("utf-8")
    except Exception:  # noqa: BLE001 - the reference path encodes it or raises json's error
        return _encode_reference(event)


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("seq"), int):
        return None
    return raw


def _reverse_lines(fd: int, end: int) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, line) for complete lines before `end`, newest first."""
    pos = end
    tail = b""
    while pos > 0:
        size = min(_BLOCK, pos)
        pos -= size
        chunk = os.pread(fd, size, pos) + tail
        parts = chunk.split(b"\n")
        tail = parts[0]
        offset = pos + len(tail) + 1
        rest = parts[1:]
        starts = []
        for part in rest:
            starts.append(offset)
            offset += len(part) + 1
        for start, part in zip(reversed(starts), reversed(rest), strict=False):
            if part:
                yield start, part
    if tail:
        yield 0, tail


class JsonlWriter:
    """Appends events to a JSONL file; usable directly as an `EventBus` subscriber."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            mkdirs(self.path.parent)
            self._fd = NO_LINKS.open_fd(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        except OSError as exc:
            raise EventLogError(f"cannot open event log {self.path}: {exc.strerror}") from exc
        self.next_seq = self._repair() + 1
        """The sequence number the next event should carry."""

    def _repair(self) -> int:
        """Cut a torn or unparseable tail back to the last good record; return its seq."""
        size = os.fstat(self._fd).st_size
        good_end = size
        last_seq = 0
        for offset, line in _reverse_lines(self._fd, size):
            raw = _parse(line)
            if raw is not None:
                last_seq = raw["seq"]
                good_end = offset + len(line) + 1
                break
            good_end = offset
        if good_end < size:
            os.ftruncate(self._fd, good_end)
        elif good_end > size:  # a good record lost only its newline
            os.write(self._fd, b"\n")
        return last_seq

    def write(self, event: Event) -> None:
        data = _encode(event)
        with self._lock:
            try:
                written = os.write(self._fd, data)
            except OSError as exc:  # a full disk: name the log in the message
                exc.filename = exc.filename or str(self.path)
                raise
            if written < len(data):  # cut short by a full disk: take the half line back
                os.ftruncate(self._fd, os.lseek(self._fd, 0, os.SEEK_END) - written)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
            if event.seq >= self.next_seq:
                self.next_seq = event.seq + 1

    __call__ = write

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


Filter = Callable[[dict[str, Any]], bool]


def make_filter(
    *, layer: int | None = None, type: str | None = None, worker_id: str | None = None
) -> Filter:
    """A predicate over raw event dicts; `type` also matches a prefix ending in '.' or '*'."""

    def keep(raw: dict[str, Any]) -> bool:
        if layer is not None and raw.get("layer") != layer:
            return False
        if worker_id is not None and raw.get("worker_id") != worker_id:
            return False
        if type is not None:
            t = str(raw.get("type") or "")
            if type.endswith((".", "*")):
                return t.startswith(type.rstrip("*"))
            return t == type
        return True

    return keep


def read_tail(
    path: str | os.PathLike[str],
    n: int,
    keep: Filter | None = None,
    after: int | None = None,
    since: float | None = None,
) -> list[dict[str, Any]]:
    """The last `n` events (oldest first) of the log, optionally filtered.

    With `after`, only events whose seq is greater; reading stops at the first older record,
    so polling for new events costs only the new lines. With `since` (a Unix time), only
    events at or after it, and reading stops at the first older one: looking for what
    happened during a stage's visit reads only the visit's lines, found or not.
    """
    if n <= 0:
        return []
    try:
        fd = NO_LINKS.open_fd(path, os.O_RDONLY)
    except FileNotFoundError:
        return []
    out: list[dict[str, Any]] = []
    try:
        size = os.fstat(fd).st_size
        for _, line in _reverse_lines(fd, size):
            raw = _parse(line)
            if raw is None:
                continue
            if after is not None and raw["seq"] <= after:
                break
            stamp = raw.get("ts")
            if since is not None and isinstance(stamp, int | float) and stamp < since:
                break
            if keep is None or keep(raw):
                out.append(raw)
                if len(out) >= n:
                    break
    finally:
        os.close(fd)
    out.reverse()
    return out


def iter_events(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Every good record of the log, oldest first (torn or foreign lines are skipped)."""
    try:
        fh = NO_LINKS.open_read(path)
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            raw = _parse(line)
            if raw is not None:
                yield raw


def follow(
    path: str | os.PathLike[str],
    after: int = 0,
    keep: Filter | None = None,
    poll: float = 0.2,
    stop: Callable[[], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield events with seq > `after` as they are appended, until `stop()` is true."""
    last = after
    while True:
        batch = read_tail(path, 10_000, after=last)
        for raw in batch:
            last = raw["seq"]
            if keep is None or keep(raw):
                yield raw
        if stop is not None and stop():
            return
        if not batch:
            time.sleep(poll)
