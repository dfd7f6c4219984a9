"""Where worker sessions keep their LangGraph checkpoints: SQLite in the workspace by default.

One saver is shared by every session of a process, so a new process resumes any session the
old one left.
"""

from __future__ import annotations

import os
import sqlite3

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.workspace import Workspace


def open_checkpointer(workspace: Workspace, kind: str | BaseCheckpointSaver) -> BaseCheckpointSaver:
    """`sqlite` (the default; file mode 0600), `memory`, or a saver passed through."""
    if isinstance(kind, BaseCheckpointSaver):
        return kind
    if kind == "memory":
        return InMemorySaver()
    if kind != "sqlite":
        raise RuntimeLayerError(f"unknown checkpointer '{kind}'; use 'sqlite' or 'memory'")
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = workspace.checkpoints_file
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    saver = SqliteSaver(conn)
    saver.setup()
    # WAL (turned on by the saver) with NORMAL sync stays consistent across a process crash;
    # only a power loss may drop the newest checkpoints, which a resume then redoes
    conn.execute("PRAGMA synchronous=NORMAL")
    return saver
