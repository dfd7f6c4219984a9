"""Where worker sessions keep their LangGraph checkpoints: SQLite in the workspace by default.

One saver is shared by every session of a process, so a new process resumes any session the
old one left.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from lightscientist_jupyter._fs import NO_LINKS
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.checkpoints.saver_guard import guarded
from lightscientist_jupyter.workspace import Workspace


def open_checkpointer(
    workspace: Workspace, kind: str | BaseCheckpointSaver[Any]
) -> BaseCheckpointSaver[Any]:
    """`sqlite` (the default; file mode 0600), `sqlite:///PATH`, `postgresql://…` (see
    `checkpoints.url`), `memory`, or a saver passed through."""
    if isinstance(kind, BaseCheckpointSaver):
        return kind
    if kind == "memory":
        return InMemorySaver()
    if checkpoint_url.is_postgres(kind):
        return checkpoint_url.open_postgres(kind)
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = checkpoint_url.sqlite_path(workspace, kind)
    _make_file(workspace, path)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    try:
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            lines = [" ".join(p.split()) for row in problems for p in row.splitlines()]
            found = [p for p in lines if p and not p.startswith("***")]
            raise CheckpointsDamaged(path, "; ".join(found[:2]) or "quick_check failed")
        saver = guarded(SqliteSaver, conn)
        saver.setup()
        # WAL (turned on by the saver) with NORMAL sync stays consistent across a process
        # crash; only a power loss may drop the newest checkpoints, which a resume then redoes
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            raise
        raise CheckpointsDamaged(path, str(exc)) from None
    except BaseException:
        conn.close()
        raise
    return saver


def _make_file(workspace: Workspace, path: Path) -> None:
    """Create the database file (mode 0600) if need be. SQLite opens it and its journals by
    name, following links: in the workspace, each is first checked to be a plain file reached
    through no link, or absent (`beneath.PathRefused` naming it otherwise). A database the
    user placed elsewhere (`sqlite:///PATH`) is theirs, opened as they named it."""
    if workspace.root not in path.parents:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    else:
        files = Beneath(workspace.root)
        files.makedirs(path.parent)
        fd = files.open_fd(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o600)
        try:
            for name in (path, *(Path(f"{path}{s}") for s in ("-wal", "-shm", "-journal"))):
                with contextlib.suppress(FileNotFoundError):
                    files.read_bytes(name, limit=0)  # refuses a link, a pipe, a folder
        except BaseException:
            os.close(fd)
            raise
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


class CheckpointsDamaged(RuntimeLayerError):
    """The checkpoint database fails its integrity check or cannot be read as one."""

    def __init__(self, path: os.PathLike[str], detail: str):
        self.path = path
        super().__init__(
            f"the checkpoint database {path} is damaged ({detail}); run `lightscientist resume "
            "--fresh-sessions` to restart the current stage from its start with fresh worker "
            "and supervisor sessions (the state, history and files are kept; the damaged "
            "file is moved aside)"
        )


def move_aside(workspace: Workspace) -> Path | None:
    """Rename the checkpoint database (and its WAL files) to `checkpoints.damaged-<time>.sqlite`
    so that the next open starts an empty one; returns the new name (None: there was none)."""
    path = workspace.checkpoints_file
    if NO_LINKS.lstat(path) is None:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"checkpoints.damaged-{stamp}.sqlite")
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        if NO_LINKS.lstat(source) is not None:  # renamed, a link among them too: never followed
            NO_LINKS.replace(source, f"{target}{suffix}")
    return target
