"""Replies from anywhere: one JSON file per reply in `.lightscientist/inbox/`.

A reply goes here once it is accepted (`app.commands.submit_reply` decides): handed to the
process that runs the project, or queued by the API for the next run. The running process
picks the files up (within a second, and first thing when a run starts) and applies them
through `ResearchController.reply`, the one place where a decision takes effect. Of several
queued replies to one decision the latest counts: the earlier ones are dropped as replaced
(`take_replies`), and so are those a reply carried out directly replaces (`set_aside`).

Commands to the running process (`write_command`: an `InboxCommand`, such as a cancel) go
to the same folder, one `.cmd` file each.

The folder's files, each one JSON object (its schema is the TypedDict named):

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
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Literal, NotRequired, TypedDict, TypeVar, Unpack, overload

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.vocab import CancelSource, HandoffStep, InboxCommand, ReplySource
from lightscientist_jupyter.workspace import Workspace

# ------------------------------------------------------------------------- the files' schemas


class ReplyFile(TypedDict):
    """A queued reply: `.lightscientist/inbox/<time>-<pid>-<hex>.json`.

    Written by `write_reply` (a door's reply, through `app.commands.submit_reply`); read by
    the run that holds the project (`take_replies`, applied by
    `ResearchController.poll_inbox`) and by a reply carried out directly (`set_aside`). Only
    `approve` is needed; `read_reply` checks the other keys' types, and reads a `source`
    outside `ReplySource` (or none) as `ReplySource.API`."""

    approve: bool
    comment: NotRequired[str]
    """Redacted as it is written (the file waits on disk)."""
    to_stage: NotRequired[str | None]
    """Where a rejection sends the project."""
    decision_id: NotRequired[str | None]
    """The decision it answers (None: whichever is pending)."""
    source: NotRequired[ReplySource]
    receipt: NotRequired[bool]
    """Its sender waits for the run's `Receipt`."""
    budget: NotRequired[dict[str, float] | None]
    """For a budget decision: the new limits (`reply y --budget …`)."""
    written_at: NotRequired[float]
    """When it was queued (Unix time; not read back)."""


class UntilArgs(TypedDict):
    """The arguments of an `until` command."""

    stage: NotRequired[str | None]
    """The stage after which the run pauses (None, or none: it no longer pauses)."""


class StopArgs(TypedDict):
    """The arguments of a `stop` command: none."""


class CancelArgs(TypedDict):
    """The arguments of a `cancel` command."""

    worker_id: NotRequired[str | None]
    """The worker to cancel (None, or none: the whole run)."""
    source: NotRequired[CancelSource]
    """The door the cancel came through, for the project's reason (one outside
    `CancelSource` is left out as it is read: the reason then names no door)."""


class HandoffArgs(TypedDict):
    """The arguments of a `handoff` command: one hand-over step (`app.handoff.apply`)."""

    step: HandoffStep
    stage: NotRequired[str | None]
    """For a take: the stage to take (None: the current one)."""
    summary: NotRequired[str]
    """For a deliver: what the researcher did and found."""
    next_stage: NotRequired[str | None]
    outputs: NotRequired[list[str]]
    source: NotRequired[ReplySource]
    """The door (one outside `ReplySource` reads as `ReplySource.API`)."""
    token: NotRequired[str]
    """Names the receipt its sender waits for (`token_path`)."""


class UntilCommand(TypedDict):
    """A `.cmd` file: pause once a stage finishes (`app.controls.pause_after`)."""

    command: Literal[InboxCommand.UNTIL]
    args: UntilArgs
    written_at: NotRequired[float]


class StopCommand(TypedDict):
    """A `.cmd` file: stop at the next step boundary (`app.controls.rerun`)."""

    command: Literal[InboxCommand.STOP]
    args: StopArgs
    written_at: NotRequired[float]


class CancelCommand(TypedDict):
    """A `.cmd` file: cancel one worker or the whole run (`app.commands.cancel`)."""

    command: Literal[InboxCommand.CANCEL]
    args: CancelArgs
    written_at: NotRequired[float]


class HandoffCommand(TypedDict):
    """A `.cmd` file: a hand-over step from another process (`app.handoff.hand`)."""

    command: Literal[InboxCommand.HANDOFF]
    args: HandoffArgs
    written_at: NotRequired[float]


Command = UntilCommand | StopCommand | CancelCommand | HandoffCommand
"""A queued run command: `.lightscientist/inbox/<time>-<pid>-<hex>.cmd`, written by
`write_command` (the screens' controls, a cancel, a hand-over step), taken by the run that
holds the project (`take_commands`) and applied by `app.controls.apply_command`. `read_command`
checks it: `args` may be left out (none), `written_at` (Unix time) is not read back."""


class Receipt(TypedDict):
    """What became of a queued reply or hand-over step: `<name>.taken` beside it in the
    inbox, written by the run that took it (`write_receipt`), read and removed by the sender
    that waits (`take_receipt`: `lightscientist reply`, `app.handoff`)."""

    applied: bool
    message: str
    """What happened, or why nothing did."""


@dataclasses.dataclass(frozen=True)
class Refused:
    """A reply or a command whose file has a key of the wrong type: it is not applied, the
    file is set aside as `.invalid` (`set_refused_aside`)."""

    path: Path
    """The file as it was queued."""
    why: str
    """One line naming the file and the key."""
    sender: Path | None = None
    """The path whose receipt (`receipt_path`) its sender waits for, when it waits."""


# ------------------------------------------------------------------------- reading them


class _Wrong(Exception):
    """A key of an inbox file holds a value of the wrong type."""

    def __init__(self, key: str, value: object, wanted: str):
        super().__init__(key)
        self.key, self.value, self.wanted = key, value, wanted

    def line(self, path: Path, what: str) -> str:
        shown = json.dumps(self.value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        return (
            f"refused the {what} in {path}: its '{self.key}' is {shown}, not {self.wanted}; "
            f"nothing changed (the file is kept as {path.with_suffix('.invalid').name})"
        )


_Member = TypeVar("_Member", bound=StrEnum)
PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]+")
"""A hand-over step's `token`: a file name in the inbox, never a path."""


class _Keys:
    """The keys of one JSON object read from an inbox file (`prefix`: where it sits in the
    file); a key of the wrong type raises `_Wrong`, naming it. A key left out or null reads
    as None."""

    def __init__(self, raw: Mapping[str, object], prefix: str = ""):
        self.raw, self.prefix = raw, prefix

    def _wrong(self, key: str, wanted: str) -> _Wrong:
        return _Wrong(self.prefix + key, self.raw.get(key), wanted)

    def text(self, key: str) -> str | None:
        value = self.raw.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self._wrong(key, "text or null")

    def flag(self, key: str, *, required: bool = False) -> bool | None:
        value = self.raw.get(key)
        if isinstance(value, bool) or (value is None and not required):
            return value
        raise self._wrong(key, "true or false")

    def texts(self, key: str) -> list[str] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [str(v) for v in value]
        raise self._wrong(key, "a list of texts")

    def limits(self, key: str) -> dict[str, float] | None:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, dict) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
        ):
            return {str(k): float(v) for k, v in value.items()}
        raise self._wrong(key, "an object of name: number, or null")

    def member(self, key: str, vocabulary: type[_Member]) -> _Member:
        value = self.raw.get(key)
        names = [str(m) for m in vocabulary]
        if isinstance(value, str) and value in names:
            return vocabulary(value)
        raise self._wrong(key, " or ".join(f'"{n}"' for n in names))

    def token(self, key: str) -> str | None:
        value = self.text(key)
        if value is None or PLAIN_NAME.fullmatch(value):
            return value
        raise self._wrong(key, "a plain name (letters, digits, - and _)")


def read_reply(path: Path, raw: object) -> ReplyFile | Refused | None:
    """The reply `raw` read from `path`, checked: None when it is no reply (not an object,
    or no `approve`); `Refused` when a key has the wrong type (`approve` must be true or
    false; `budget` an object of numbers)."""
    if not isinstance(raw, dict) or "approve" not in raw:
        return None
    keys = _Keys(raw)
    try:
        approve = keys.flag("approve", required=True)
        reply = ReplyFile(
            approve=bool(approve),
            comment=keys.text("comment") or "",
            to_stage=keys.text("to_stage") or None,
            decision_id=keys.text("decision_id") or None,
            source=ReplySource.read(raw.get("source")),
            receipt=bool(keys.flag("receipt")),
            budget=keys.limits("budget") or None,
        )
    except _Wrong as wrong:
        sender = path if raw.get("receipt") is True else None
        return Refused(path, wrong.line(path, "reply"), sender)
    return reply


def read_command(path: Path, raw: object) -> Command | Refused | None:
    """The command `raw` read from `path`, checked: None when it is no command this
    version knows (not an object, or its `command` is not an `InboxCommand`: say from a newer
    version, left alone); `Refused` when a key has the wrong type."""
    if not isinstance(raw, dict):
        return None
    name = raw.get("command")
    if not isinstance(name, str) or name not in [str(c) for c in InboxCommand]:
        return None
    command = InboxCommand(name)
    what = f"'{command}' command"
    args = raw.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return Refused(path, _Wrong("args", args, "an object").line(path, what))
    keys = _Keys(args, "args.")
    sender = None
    try:
        match command:
            case InboxCommand.UNTIL:
                return UntilCommand(command=command, args=UntilArgs(stage=keys.text("stage")))
            case InboxCommand.STOP:
                return StopCommand(command=command, args=StopArgs())
            case InboxCommand.CANCEL:
                cancel = CancelArgs(worker_id=keys.text("worker_id"))
                if args.get("source") in [str(s) for s in CancelSource]:
                    cancel["source"] = CancelSource(args["source"])
                return CancelCommand(command=command, args=cancel)
            case InboxCommand.HANDOFF:
                token = keys.token("token")
                sender = None if token is None else token_path(path.parent, token)
                step = HandoffArgs(
                    step=keys.member("step", HandoffStep),
                    stage=keys.text("stage"),
                    summary=keys.text("summary") or "",
                    next_stage=keys.text("next_stage"),
                    outputs=keys.texts("outputs") or [],
                    source=ReplySource.read(args.get("source")),
                )
                if token is not None:
                    step["token"] = token
                return HandoffCommand(command=command, args=step)
    except _Wrong as wrong:
        return Refused(path, wrong.line(path, what), sender)


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


def token_path(inbox_dir: Path, token: str) -> Path:
    """The path whose receipt (`receipt_path`) the sender of a hand-over step named `token`
    waits for (no file of its own)."""
    return inbox_dir / f"{token}.cmd"


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
