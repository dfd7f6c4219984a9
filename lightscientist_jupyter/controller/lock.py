"""One runner per workspace: an advisory lock in `.lightscientist/run.lock`.

The lock is an `flock` on the file, so the operating system releases it when its holder dies
(a killed kernel, a SIGKILL): a lock left by a dead process is simply taken over. The file's
content names the holder (pid, host, since when, command, and the door it came through: a
Jupyter kernel by its id, the command line, another program) for the refusal message and for
the screens that say who runs a project.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import sys
import time
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.errors import WorkspaceLocked
from lightscientist_jupyter.workspace import Workspace


class WorkspaceLock:
    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, purpose: str = "run") -> WorkspaceLock:
        """Take the lock or raise `WorkspaceLocked` naming its holder."""
        if self._fd is not None:
            return self
        path = self.workspace.lock_file
        mkdirs(path.parent)
        fd = NO_LINKS.open_fd(path, os.O_RDWR | os.O_CREAT)
        if not _take(fd):
            os.close(fd)
            holder = read_holder(self.workspace) or {}
            since = holder.get("since")
            since_text = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)) if since else "?"
            raise WorkspaceLocked(
                f"workspace {self.workspace.root} is being run by pid {holder.get('pid', '?')} "
                f"on {holder.get('host', '?')} since {since_text} "
                f"({holder.get('purpose', 'run')}); "
                "send it replies with `lightscientist reply`, or stop it first"
            ) from None
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.time(),
            "purpose": purpose,
            "command": " ".join(sys.argv[:3]),
            **door(sys.argv),
        }
        # written over the last holder's record in one write, padded to a fixed size and
        # never emptied first: a reader finds a whole record, never an empty file (JSON
        # allows the trailing spaces)
        record = json.dumps(info).encode().ljust(RECORD_SIZE)
        try:
            os.pwrite(fd, record, 0)
            os.ftruncate(fd, len(record))
        except OSError as exc:  # a full disk: the lock is not held, and the file is named
            os.close(fd)
            exc.filename = exc.filename or str(path)
            raise
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        # closing the descriptor drops the flock; the record stays until the next holder
        # writes its own over it (a record of a lock nobody holds is never read)
        os.close(fd)

    def __enter__(self) -> WorkspaceLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


READERS_WAIT_S = 1.0
"""How long taking the lock waits out readers: `read_holder` holds a shared lock for a
moment to look (a dashboard, the side panel's server, a reply), which refuses an exclusive
one as a holder would."""


def _take(fd: int) -> bool:
    """Take the exclusive lock on `fd`: True, or False while a holder has it. Only a
    holder's lock refuses for good; readers' shared ones are waited out (a reader's look
    takes microseconds, so a run started while the panel polls is never refused)."""
    deadline = time.monotonic() + READERS_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
        try:  # a shared lock is granted beside readers, never beside a holder
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)


_KERNEL_FILE = re.compile(r"kernel-([0-9A-Za-z-]+)\.json$")


def door(argv: list[str]) -> dict[str, str]:
    """Which door a process with the command line `argv` came through: `kernel` (with the
    kernel's id, from the connection file Jupyter names `kernel-<id>.json`), `command line`
    (the `lightscientist` command) or `program` (any other Python program)."""
    for arg in argv:
        found = _KERNEL_FILE.search(arg)
        if found:
            return {"door": "kernel", "kernel": found.group(1)}
    first = os.path.basename(argv[0]) if argv else ""
    if first == "lightscientist" or (first == "__main__.py" and "lightscientist" in argv[0]):
        return {"door": "command line"}
    return {"door": "program"}


RECORD_SIZE = 1024
"""The bytes of a holder's record (padded with spaces)."""
RECORD_WAIT_S = 1.0
"""How long a reader waits for a whole record: a lock taken for the first time has an empty
file until its holder writes, and a read may meet a write half done."""


def read_holder(workspace: Workspace) -> dict[str, Any] | None:
    """Who holds the lock now, or None when nobody does."""
    try:
        fd = NO_LINKS.open_fd(workspace.lock_file, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        deadline = time.monotonic() + RECORD_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                try:
                    holder = json.loads(os.pread(fd, RECORD_SIZE * 4, 0))
                except ValueError:  # empty, or met half written
                    if time.monotonic() < deadline:
                        time.sleep(0.01)
                        continue
                    return {}
                return holder if isinstance(holder, dict) else {}
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
    finally:
        os.close(fd)
