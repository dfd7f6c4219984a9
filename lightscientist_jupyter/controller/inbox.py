"""Replies from anywhere: one JSON file per reply in `.lightscientist/inbox/`.

A reply goes here once it is accepted (`app.commands.submit_reply` decides): handed to the
process that runs the project, or queued by the API for the next run. The running process
picks the files up (within a second, and first thing when a run starts) and applies them
through `ResearchController.reply`, the one place where a decision takes effect. Of several
queued replies to one decision the latest counts: the earlier ones are dropped as replaced
(`take_replies`), and so are those a reply carried out directly replaces (`set_aside`).

Commands to the running process (`write_command`: an `InboxCommand`, such as a cancel) go
to the same folder, one `.cmd` file each.

The folder's files, each one JSON object (its schema is the TypedDict named, in
`controller.inbox_files`, which checks each as it is read):

- `<time>-<pid>-<hex>.json`, a reply (`ReplyFile`): written by `write_reply`, taken by the
  run (`take_replies`, applied by `ResearchController.poll_inbox`);
- `<time>-<pid>-<hex>.cmd`, a run command (`Command`: `UntilCommand`, `StopCommand`,
  `CancelCommand`, `HandoffCommand`): written by `write_command`, taken by the run
  (`take_commands`, applied by `app.controls.apply_command`);
- `<name>.taken`, a receipt (`Receipt`): what became of a reply or a hand-over step whose
  sender waits (`write_receipt`, read and removed by `take_receipt`).

Another version, or a hand, may have written a reply or a command: each is checked as it is
read (`read_reply`, `read_command`). A file that is not one at all (not JSON, no `approve`,
no command this version knows) is left out as before: a reply set aside as `.invalid`, a
command removed. One whose key has the wrong type is refused (`Refused`): set aside as
`.invalid`, with one line naming the file and the key, which a waiting sender's receipt
carries.
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
from typing import Literal, Unpack, overload

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.controller.inbox_files import (
    CancelArgs,
    Command,
    HandoffArgs,
    Receipt,
    Refused,
    ReplyFile,
    UntilArgs,
    read_command,
    read_reply,
)
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.vocab import InboxCommand, ReplySource
from lightscientist_jupyter.workspace import Workspace


def set_refused_aside(refused: Refused) -> None:
    """Keep a refused file as `.invalid`, and tell its sender why when it waits to hear."""
    with contextlib.suppress(FileNotFoundError):  # (removed meanwhile by hand)
        refused.path.rename(refused.path.with_suffix(".invalid"))
    if refused.sender is not None:
        write_receipt(refused.sender, False, refused.why)


# ------------------------------------------------------------------------- replies


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
    reply = ReplyFile(
        approve=bool(approve),
        comment=redact(comment or ""),
        to_stage=to_stage or None,
        decision_id=decision_id,
        source=source,
        receipt=receipt,
        budget=budget or None,
        written_at=time.time(),
    )
    write_json_atomic(path, reply)
    return path


def queued_replies(workspace: Workspace) -> list[tuple[Path, ReplyFile | Refused | None]]:
    """Queued replies, oldest first, each checked (`read_reply`): a file that is not a
    reply comes back with None, one with a key of the wrong type as `Refused`."""
    folder = workspace.inbox_dir
    if not folder.is_dir():
        return []
    out: list[tuple[Path, ReplyFile | Refused | None]] = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            raw = json.loads(read_text(path))
        except (OSError, ValueError):
            raw = None
        out.append((path, read_reply(path, raw)))
    return out


@dataclasses.dataclass(frozen=True)
class Queued:
    """A queued reply, as the run takes it."""

    path: Path
    reply: ReplyFile
    replaced: str | None = None
    """Why it is not applied when a later reply to its decision replaces it, else None."""


def replaced_message(decision_id: object) -> str:
    return f"replaced by a later reply to decision {decision_id}; nothing changed"


def take_replies(workspace: Workspace) -> list[Queued | Refused]:
    """The queued replies, oldest first, each marked `replaced` when a later one answers the
    same decision; a file that is not a reply is renamed `.invalid` and left out, one that
    is refused is renamed so too (`set_refused_aside`) and comes back as its `Refused`."""
    queued = queued_replies(workspace)
    newest = {
        reply["decision_id"]: path
        for path, reply in queued
        if reply is not None and not isinstance(reply, Refused) and reply.get("decision_id")
    }
    out: list[Queued | Refused] = []
    for path, reply in queued:
        if reply is None:
            path.rename(path.with_suffix(".invalid"))
        elif isinstance(reply, Refused):
            set_refused_aside(reply)
            out.append(reply)
        else:
            decision_id = reply.get("decision_id")
            later = decision_id is not None and newest[decision_id] != path
            out.append(Queued(path, reply, replaced_message(decision_id) if later else None))
    return out


def settle(path: Path, reply: ReplyFile, applied: bool, message: str) -> None:
    """Remove a reply the run took, first leaving its receipt when its sender waits to hear."""
    if reply.get("receipt"):
        write_receipt(path, applied, message)
    path.unlink(missing_ok=True)


ASIDE = ".aside"


@contextlib.contextmanager
def set_aside(workspace: Workspace, decision_id: str) -> Iterator[None]:
    """Hide the queued replies to `decision_id` while a later reply to it is carried out
    directly: they are dropped as replaced when the block ends, put back when it raises (a
    reply that failed replaces nothing)."""
    aside: list[tuple[Path, ReplyFile]] = []
    for path, reply in queued_replies(workspace):
        if reply is None or isinstance(reply, Refused):
            continue
        if reply.get("decision_id") == decision_id:
            with contextlib.suppress(FileNotFoundError):  # a run took it meanwhile
                path.rename(path.with_suffix(ASIDE))
                aside.append((path, reply))
    try:
        yield
    except BaseException:
        for path, _ in aside:
            path.with_suffix(ASIDE).rename(path)
        raise
    for path, reply in aside:
        settle(path.with_suffix(ASIDE), reply, False, replaced_message(decision_id))


# ------------------------------------------------------------------------- receipts


RECEIPT_KEEP_S = 300.0
"""A receipt nobody read (its sender did not wait) is removed after this long."""


def receipt_path(reply: Path) -> Path:
    """Where the run tells the sender of `reply` what became of it."""
    return reply.with_suffix(".taken")


def write_receipt(reply: Path, applied: bool, message: str) -> None:
    """Say what became of a queued reply (applied, or dropped and why) beside it, for the
    process that queued it and waits (`take_receipt`); unread receipts older than
    `RECEIPT_KEEP_S` (their sender gave up waiting) are removed."""
    write_json_atomic(receipt_path(reply), Receipt(applied=applied, message=message))
    now = time.time()
    for old in reply.parent.glob("*.taken"):
        try:
            if now - old.stat().st_mtime > RECEIPT_KEEP_S:
                old.unlink(missing_ok=True)
        except OSError:
            pass


def take_receipt(reply: Path) -> Receipt | None:
    """The run's receipt for `reply` (removed as it is read), or None when there is none."""
    path = receipt_path(reply)
    try:
        raw = json.loads(read_text(path))
    except (OSError, ValueError):
        return None
    path.unlink(missing_ok=True)
    if not isinstance(raw, dict):
        return None
    return Receipt(applied=bool(raw.get("applied")), message=str(raw.get("message") or ""))


# ------------------------------------------------------------------------- commands


@overload
def write_command(
    workspace: Workspace, command: Literal[InboxCommand.UNTIL], **args: Unpack[UntilArgs]
) -> Path: ...
@overload
def write_command(workspace: Workspace, command: Literal[InboxCommand.STOP]) -> Path: ...
@overload
def write_command(
    workspace: Workspace, command: Literal[InboxCommand.CANCEL], **args: Unpack[CancelArgs]
) -> Path: ...
@overload
def write_command(
    workspace: Workspace, command: Literal[InboxCommand.HANDOFF], **args: Unpack[HandoffArgs]
) -> Path: ...
def write_command(workspace: Workspace, command: InboxCommand, **args: object) -> Path:
    """Queue a run command (e.g. `cancel`) for the process running the project: a `Command`,
    its arguments those of its kind."""
    name = f"{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex[:6]}.cmd"
    path = workspace.inbox_dir / name
    write_json_atomic(path, {"command": command, "args": args, "written_at": time.time()})
    return path


def take_commands(workspace: Workspace) -> list[Command | Refused]:
    """Queued run commands, oldest first, each checked (`read_command`); each file is
    removed as it is taken, one refused is set aside (`set_refused_aside`) and comes back as
    its `Refused`."""
    folder = workspace.inbox_dir
    if not folder.is_dir():
        return []
    out: list[Command | Refused] = []
    for path in sorted(folder.glob("*.cmd")):
        try:
            raw = json.loads(read_text(path))
        except (OSError, ValueError):
            raw = None
        command = read_command(path, raw)
        if isinstance(command, Refused):
            set_refused_aside(command)
        else:
            path.unlink(missing_ok=True)
        if command is not None:
            out.append(command)
    return out
