"""Replies from anywhere: one JSON file per reply in `.lightscientist/inbox/`.

A reply goes here once it is accepted (`app.commands.submit_reply` decides): handed to the
process that runs the project, or queued by the API for the next run. The running process
picks the files up (within a second, and first thing when a run starts) and applies them
through `ResearchController.reply`, the one place where a decision takes effect. Of several
queued replies to one decision the latest counts: the earlier ones are dropped as replaced
(`take_replies`), and so are those a reply carried out directly replaces (`set_aside`).

Commands to the running process (`write_command`: an `InboxCommand`, such as a cancel) go
to the same folder, one `.cmd` file each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.vocab import InboxCommand, ReplySource
from lightscientist_jupyter.workspace import Workspace


def write_reply(
    workspace: Workspace,
    *,
    approve: bool,
    comment: str = "",
    to_stage: str | None = None,
    decision_id: str | None = None,
    source: ReplySource = ReplySource.API,
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


@dataclasses.dataclass(frozen=True)
class Queued:
    """A queued reply, as the run takes it."""

    path: Path
    raw: dict[str, Any]
    replaced: str | None = None
    """Why it is not applied when a later reply to its decision replaces it, else None."""


def replaced_message(decision_id: object) -> str:
    return f"replaced by a later reply to decision {decision_id}; nothing changed"


def take_replies(workspace: Workspace) -> list[Queued]:
    """The queued replies, oldest first, each marked `replaced` when a later one answers the
    same decision; a file that is not a reply is renamed `.invalid` and left out."""
    replies = []
    for path, raw in queued_replies(workspace):
        if raw is None:
            path.rename(path.with_suffix(".invalid"))
        else:
            replies.append((path, raw))
    newest = {str(raw["decision_id"]): path for path, raw in replies if raw.get("decision_id")}
    return [
        Queued(path, raw, replaced_message(raw["decision_id"]))
        if raw.get("decision_id") and newest[str(raw["decision_id"])] != path
        else Queued(path, raw)
        for path, raw in replies
    ]


def settle(reply: Path, raw: dict[str, Any], applied: bool, message: str) -> None:
    """Remove a reply the run took, first leaving its receipt when its sender waits to hear."""
    if raw.get("receipt"):
        write_receipt(reply, applied, message)
    reply.unlink(missing_ok=True)


ASIDE = ".aside"


@contextlib.contextmanager
def set_aside(workspace: Workspace, decision_id: str) -> Iterator[None]:
    """Hide the queued replies to `decision_id` while a later reply to it is carried out
    directly: they are dropped as replaced when the block ends, put back when it raises (a
    reply that failed replaces nothing)."""
    aside = []
    for path, raw in queued_replies(workspace):
        if raw is not None and raw.get("decision_id") == decision_id:
            with contextlib.suppress(FileNotFoundError):  # a run took it meanwhile
                path.rename(path.with_suffix(ASIDE))
                aside.append((path, raw))
    try:
        yield
    except BaseException:
        for path, _ in aside:
            path.with_suffix(ASIDE).rename(path)
        raise
    for path, raw in aside:
        settle(path.with_suffix(ASIDE), raw, False, replaced_message(decision_id))


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


def write_command(workspace: Workspace, command: InboxCommand, **args: Any) -> Path:
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
