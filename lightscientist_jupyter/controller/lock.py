"""One runner per workspace: an advisory lock in `.lightscientist/run.lock`.

The lock is an `flock` on the file, so the operating system releases it when its holder dies
(a killed kernel, a SIGKILL): a lock left by a dead process is simply taken over. The file's
content names the holder (pid, host, since when, command) for the refusal message.
"""

from __future__ import annotations

import fcntl
import json
import os
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
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
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
        }
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
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
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the descriptor drops the flock

    def __enter__(self) -> WorkspaceLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def read_holder(workspace: Workspace) -> dict[str, Any] | None:
    """Who holds the lock now, or None when nobody does."""
    try:
        fd = NO_LINKS.open_fd(workspace.lock_file, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
            except ValueError:
                return {}
            return holder if isinstance(holder, dict) else {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
