"""Putting a workspace right before a run: after a killed runner, and on a damaged
checkpoint database (`lightscientist resume --fresh-sessions`).

Both run under the workspace's run lock, before anything of the run starts: no other process
writes there, so every recorded process group and temporary file is a dead runner's.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from lightscientist_jupyter._fs import remove_stray_tmp
from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.checkpoints.sqlite import move_aside
from lightscientist_jupyter.runtime.sandbox.shell import end_recorded
from lightscientist_jupyter.runtime.session.worker_files import load_record, save_record
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, Role, WorkerStatus
from lightscientist_jupyter.workspace import Workspace


def after_crash(ws: Workspace) -> list[str]:
    """End the process groups a killed run's commands left running and remove its stray
    temporary files; returns one line per thing done (nothing when there was none)."""
    notes = []
    ended = end_recorded(ws.workers_dir) if ws.workers_dir.is_dir() else []
    if ended:
        groups = ", ".join(str(g) for g in ended)
        notes.append(f"ended {len(ended)} process group(s) a killed run left running: {groups}")
    folders = [ws.state_dir, *(p for p in ws.workers_dir.glob("*") if p.is_dir())]
    remove_stray_tmp(*(f for f in folders if f.is_dir()))
    return notes


def fresh_sessions(
    ws: Workspace, settings: dict[str, Any] | None = None, options: dict[str, Any] | None = None
) -> list[str]:
    """Restart the current stage from its start with new sessions: the checkpoint database
    and the supervisor's stage memory are moved aside (never deleted), the records of
    unfinished workers are closed as `cancelled`; the state, history and files stay.

    With the run's checkpoints (`options`' checkpoints URL, else the project's `settings`) in
    PostgreSQL the database stays: the sessions of the supervisor and of the unfinished
    workers are dropped from it instead."""
    options = options or {}
    checkpoints = checkpoint_url.choose(
        options.get("checkpointer", "sqlite"), options.get("checkpoints"), settings or {}
    )
    postgres = isinstance(checkpoints, str) and checkpoint_url.is_postgres(checkpoints)
    notes, dropped = [], []
    moved = None if postgres else move_aside(ws)
    if moved is not None:
        notes.append(f"the checkpoint database was moved aside to {moved}")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    loop_file = ws.state_dir / "supervisor.json"
    if loop_file.exists():
        os.replace(loop_file, ws.state_dir / f"supervisor.before-fresh-{stamp}.json")
    folders = sorted(ws.workers_dir.glob("*")) if ws.workers_dir.is_dir() else []
    closed = []
    for folder in folders:
        record = load_record(folder)
        if record is None or record.status in FINAL_WORKER_STATUSES:
            continue
        dropped.append(record.thread_id)
        if record.role == Role.SUPERVISOR:  # its next turn starts a new session
            os.replace(folder / "worker.json", folder / f"worker.before-fresh-{stamp}.json")
            continue
        save_record(
            folder,
            dataclasses.replace(
                record,
                status=WorkerStatus.CANCELLED,
                updated_at=time.time(),
                error="its session was in a checkpoint database that was set aside "
                "(`resume --fresh-sessions`); the stage started again with new workers",
            ),
        )
        closed.append(record.id)
    if closed:
        notes.append(f"closed the unfinished worker(s) {', '.join(closed)}")
    if postgres and dropped:
        count = checkpoint_url.drop_threads(checkpoints, dropped)
        notes.append(
            f"dropped {count} session(s) of the current stage from the PostgreSQL checkpoint "
            f"{checkpoint_url.where(checkpoints)}"
        )
    notes.append("the current stage starts again from its start with fresh sessions")
    return notes
