"""The lines of a recording: `.lightscientist/recordings/run-NNNN.jsonl`, one JSON object a
line, its `kind` a `vocab.RecordingLine`.

A file is one run's (a `research` or a `resume`): a `RunLine` first, then, in the order they
happened, a `CallLine` for each successful model call, a `ReplyLine` for each human reply and
an `UpdateLine` for each worker update layer 2 took in between the supervisor's calls. Every
line after the run line carries `prev`, the hash of the line before it, and a call line
`answer`, the hash of its response (`seal`).

Written by `recorder.Recorder` (the update lines by layer 2's inbox, `supervisor.inbox`, through
it), one write per line. Read back by `recorded.Tape` for a replay, which checks every line's
shape before it answers anything (a line of the wrong shape names its file and line), by
`recorder.run_headers` (the run lines: the model's label, the price) and by `app.estimate` (the
call lines' stage and usage). The format is `recorder.FORMAT`; see `recorder` for what each
line holds and why.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from lightscientist_jupyter.runtime.recording.forms import MessageView, ResponseView, ToolView
from lightscientist_jupyter.vocab import RecordingLine, ReplySource, Role, WorkerStatus


class RunLine(TypedDict):
    """A file's first line: the run that recorded."""

    kind: Literal[RecordingLine.RUN]
    v: NotRequired[int]
    """The format (`recorder.FORMAT`); none: 1, written before the seal."""
    at: NotRequired[float]
    """When the run wrote its first line (Unix time)."""
    model: NotRequired[str]
    """The model's label (`recorder.model_label`: `<llm type>:<model name>`)."""
    price: NotRequired[dict[str, object] | None]
    """The price the run's calls were charged at (`metering.prices.Price.to_dict`); None:
    unknown; none: a recording older than prices."""


class CallLine(TypedDict):
    """A successful model call of a session (a call that failed and was retried is not
    recorded)."""

    kind: Literal[RecordingLine.CALL]
    session: str
    """The key a replay matches (`tape.session_key`): `worker/<stage>/<n>` or
    `supervisor/<n>`."""
    worker: NotRequired[str | None]
    """The worker id (it may differ in a replay; the key does not)."""
    role: NotRequired[Role | None]
    stage: NotRequired[str | None]
    call: int
    """The call's index within the session (0-based, over every turn and run of it)."""
    messages: list[str]
    """The request's messages, as the hashes of their `MessageView`s."""
    tools: list[str]
    """The bound tools, as the hashes of their `ToolView`s."""
    defs: NotRequired[dict[str, MessageView | ToolView]]
    """The views this line's hashes name that no line before it defined, by hash."""
    response: ResponseView
    answer: NotRequired[str]
    """The hash of `response` (`seal.answer_hash`; format 2 on)."""
    prev: NotRequired[str]
    """The hash of the line before it (format 2 on)."""


class ReplyLine(TypedDict):
    """A human's reply to a decision (a gate's approve or reject, an answer), written as the
    `user.decision` event is; `--replies recorded` gives the replies again, in order."""

    kind: Literal[RecordingLine.REPLY]
    stage: NotRequired[str | None]
    approve: bool
    comment: NotRequired[str | None]
    """Redacted and portable (`<workspace>` for the workspace's path)."""
    to: NotRequired[str | None]
    """Where a rejection sent the project."""
    source: NotRequired[ReplySource]
    """The door it came through (read back: one outside `ReplySource` reads as
    `ReplySource.API`)."""
    prev: NotRequired[str]


class UpdateLine(TypedDict):
    """A worker update layer 2 took in that changes what the supervisor agent is told
    (`update_order`): a replay takes them in in this order again."""

    kind: Literal[RecordingLine.UPDATE]
    session: str
    """The worker's session key (as a call line's `session`)."""
    worker: NotRequired[str | None]
    stage: NotRequired[str | None]
    status: NotRequired[WorkerStatus | None]
    """The worker's status as layer 2 took it in."""
    prev: NotRequired[str]


Line = RunLine | CallLine | ReplyLine | UpdateLine
"""A line of a recording."""
