"""The file work of a rewind or a fork: a snapshot's files written back, later sessions set
aside (never deleted)."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller.process_log import own_copy
from lightscientist_jupyter.history.files import KEPT
from lightscientist_jupyter.history.ignore import IGNORE_FILE, IgnoreRules
from lightscientist_jupyter.history.snapshots import History
from lightscientist_jupyter.runtime.session.worker_files import load_record, save_record
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord, new_thread_id
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, Role, WorkerStatus
from lightscientist_jupyter.workspace import Workspace


def snapshot_files(history: History, commit: str) -> list[str]:
    """The files a snapshot holds."""
    out = history.git("ls-tree", "-r", "-z", "--name-only", commit)
    return [p for p in out.split("\0") if p]


def snapshot_rules(history: History, commit: str) -> IgnoreRules:
    """What snapshots leave out, by the defaults and the snapshot's `.lightscientistignore`."""
    own = history.read(commit, IGNORE_FILE)
    return IgnoreRules.of_text(own.decode("utf-8", "replace") if own is not None else None)


def restore_tree(history: History, commit: str, *, current: Sequence[str]) -> None:
    """Make the workspace's files those of `commit`: the files of `current` (what a snapshot
    of now would hold) that it lacks are removed, the others written from it, except what
    snapshots leave out (`.env`, `*.pem`…: an older version's snapshot may hold them). The
    state file is left to the caller, who writes it atomically."""
    ws = history.workspace
    files = Beneath(ws.root)
    rules = snapshot_rules(history, commit)
    wanted = [rel for rel in snapshot_files(history, commit) if not rules.excludes(rel)]
    for rel in sorted(set(current) - set(wanted) - set(KEPT)):
        files.unlink(rel)
        _prune_empty(files, PurePosixPath(rel).parent)
    history.git("read-tree", commit)
    restored = [p for p in wanted if p not in KEPT]
    if restored:  # git replaces a link in a file's way; it never writes through one
        history.git("checkout-index", "-f", "-z", "--stdin", stdin="\0".join(restored))
    NO_LINKS.unlink(own_copy(ws))  # made again from the restored PROCESS.md


def _prune_empty(files: Beneath, folder: PurePosixPath) -> None:
    while folder.parts and files.is_dir(folder) and not files.scandir(folder):
        files.rmdir(folder)
        folder = folder.parent


def archive_sessions(ws: Workspace, *, since: float) -> str:
    """Set aside what a rewound-over stretch left: the workers created after `since` (their
    records closed as cancelled, their folders moved) and the supervisor's stage memory, into
    `.lightscientist/archive/rewind-<time>/`; the supervisor agent goes on in a new thread.
    Says what.

    The checkpoints stay where they are, in the workspace's SQLite file or in PostgreSQL
    alike: the earlier workers' sessions stay readable, and an archived record still names
    its thread there. (Moving the SQLite file took the earlier stages' sessions with it, and
    left a PostgreSQL project's supervisor in a thread that held the rewound-over decisions.)
    """
    archive = ws.state_dir / "archive" / f"rewind-{time.strftime('%Y%m%d-%H%M%S')}"
    moved: list[str] = []
    folders = sorted(ws.workers_dir.glob("*")) if ws.workers_dir.is_dir() else []
    for folder in folders:
        record = load_record(folder)
        if record is None:
            continue
        if record.role == Role.SUPERVISOR:
            _new_thread(folder, record)
            continue
        if record.created_at < since:
            continue
        if record.status not in FINAL_WORKER_STATUSES:
            record = dataclasses.replace(
                record,
                status=WorkerStatus.CANCELLED,
                updated_at=time.time(),
                error="closed by `lightscientist rewind` (its stage was rewound over)",
            )
            save_record(folder, record)
        _move(folder, archive / "workers" / folder.name)
        moved.append(record.id)
    if (ws.state_dir / "supervisor.json").exists():
        _move(ws.state_dir / "supervisor.json", archive / "supervisor.json")
    if not moved:
        return f"sessions set aside in {archive.relative_to(ws.root)}" if archive.exists() else ""
    return f"worker(s) {', '.join(moved)} archived in {archive.relative_to(ws.root)}"


def _new_thread(folder: Path, record: WorkerRecord) -> None:
    """Point the supervisor agent's record at a new, empty thread (as a new project's is):
    its next decision is taken without the rewound-over ones in its session."""
    now = time.time()
    status = record.status
    if status not in FINAL_WORKER_STATUSES:
        status = WorkerStatus.BACKGROUND  # between two decisions
    renewed = dataclasses.replace(
        record,
        thread_id=new_thread_id(record.id, now),
        status=status,
        question=None,
        held=None,
        updated_at=now,
    )
    save_record(folder, renewed)


def _move(source: Path, target: Path) -> None:
    mkdirs(target.parent)
    NO_LINKS.replace(source, target)


CACHES = ("literature",)
"""Folders of `.lightscientist/` a fork takes along: what tools found (the literature
cache the stage checks trace citations to), not a run's sessions."""


def copy_caches(ws: Workspace, new: Workspace) -> None:
    for name in CACHES:
        if (ws.state_dir / name).is_dir():
            shutil.copytree(ws.state_dir / name, new.state_dir / name, symlinks=True)
