"""What the inbox's files hold, and how each is checked as it is read.

The schemas of `.lightscientist/inbox/` (see `controller.inbox`, which writes and takes the
files): a reply (`ReplyFile`), a run command (`Command`), a receipt (`Receipt`). Another
version, or a hand, may have written a file: `read_reply` and `read_command` check each key
as it is read and answer `Refused`, naming the file and the key, for one of the wrong type.
Reading here touches no file.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Literal, NotRequired, TypedDict, TypeVar

from lightscientist_jupyter.vocab import CancelSource, HandoffStep, InboxCommand, ReplySource

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


def token_path(inbox_dir: Path, token: str) -> Path:
    """The path whose receipt (`receipt_path`) the sender of a hand-over step named `token`
    waits for (no file of its own)."""
    return inbox_dir / f"{token}.cmd"
