"""Replies from anywhere: one JSON file per reply in `.lightscientist/inbox/`.

The widget, the side panel and `lightscientist reply` all write here, atomically; the process
running the project picks the files up (within a second) and applies them through
`ResearchController.reply`, the one place where a decision takes effect.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.runtime.redact import redact
from lightscientist_jupyter.workspace import Workspace


def write_reply(
    workspace: Workspace,
    *,
    approve: bool,
    comment: str = "",
    to_stage: str | None = None,
    decision_id: str | None = None,
    source: str = "cli",
    receipt: bool = False,
    budget: dict[str, float] | None = None,
) -> Path:
    """Queue a reply (its comment redacted: the file waits on disk); returns the file
    written. With `receipt` the run that applies it leaves a receipt beside it
    (`write_receipt`), for the sender to read."""
    name = f"{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex[:6]}.json"
    path = workspace.inbox_dir / name
    write_json_atomic(
        path,
        {
            "approve": bool(approve),
            "comment": redact(comment or ""),
            "to_stage": to_stage or None,
            "decision_id": decision_id,
            "source": source,
            "receipt": receipt,
            "budget": budget or None,
            "written_at": time.time(),
        },
    )
    return path


def queued_replies(workspace: Workspace) -> list[tuple[Path, dict[str, Any] | None]]:
    """Queued replies, oldest first; a file that is not a reply comes back with None."""
    folder = workspace.inbox_dir
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            raw = json.loads(read_text(path))
            out.append((path, raw if isinstance(raw, dict) and "approve" in raw else None))
        except (OSError, ValueError):
            out.append((path, None))
    return out


RECEIPT_KEEP_S = 300.0
"""A receipt nobody read (its sender did not wait) is removed after this long."""


def receipt_path(reply: Path) -> Path:
    """Where the run tells the sender of `reply` what became of it."""
    return reply.with_suffix(".taken")


def write_receipt(reply: Path, applied: bool, message: str) -> None:
    """Say what became of a queued reply (applied, or dropped and why) beside it, for the
    process that queued it and waits (`take_receipt`); unread receipts older than
    `RECEIPT_KEEP_S` (their sender gave up waiting) are removed."""
    write_json_atomic(receipt_path(reply), {"applied": applied, "message": message})
    now = time.time()
    for old in reply.parent.glob("*.taken"):
        try:
            if now - old.stat().st_mtime > RECEIPT_KEEP_S:
                old.unlink(missing_ok=True)
        except OSError:
            pass


def take_receipt(reply: Path) -> dict[str, Any] | None:
    """The run's receipt for `reply` (removed as it is read), or None when there is none."""
    path = receipt_path(reply)
    try:
        raw = json.loads(read_text(path))
    except (OSError, ValueError):
        return None
    path.unlink(missing_ok=True)
    return raw if isinstance(raw, dict) else None


def write_command(workspace: Workspace, command: str, **args: Any) -> Path:
    """Queue a run command (e.g. `cancel`) for the process running the project."""
    name = f"{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex[:6]}.cmd"
    path = workspace.inbox_dir / name
    write_json_atomic(path, {"command": command, "args": args, "written_at": time.time()})
    return path


def take_commands(workspace: Workspace) -> list[dict[str, Any]]:
    """Queued run commands, oldest first; each file is removed as it is taken."""
    folder = workspace.inbox_dir
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.cmd")):
        try:
            raw = json.loads(read_text(path))
        except (OSError, ValueError):
            raw = None
        path.unlink(missing_ok=True)
        if isinstance(raw, dict) and "command" in raw:
            out.append(raw)
    return out
