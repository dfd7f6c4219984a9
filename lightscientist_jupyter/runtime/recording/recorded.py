"""Reading recordings for a replay: every line checked before any call is answered.

`Tape.load` reads the recording files a `replay:PATH` names (see `recording.recorder` for the
format, and `recording.lines` for each line's schema) and checks each line's shape: a run line
first, then call lines (a session key, a call index, the request's message and tool hashes,
each defined in the file, and a response with text or content blocks, tool calls and usage),
reply lines and update lines (a session key and a status: what layer 2 took in, see
`update_order`). A line of the wrong shape is a `ModelConfigError` naming its file and line, in
strict and lenient replays alike; a line that passes is handed on as its `lines` TypedDict, its
`kind`, `role`, `status` and `source` as members of their vocabularies.

It then checks each file's seal (`seal`). A strict replay refuses a file whose seal is broken,
naming the line that was changed, and a file written before recordings were sealed (format 1),
whose responses it cannot check; both before anything runs. A lenient replay reads both: each
call line whose response it cannot vouch for is marked (`edited`), and the replay model reports
it as a `replay.divergence` when it gives that answer.

The `Tape` then serves the replay model: the recorded calls by session and index, the
recorded replies, which recorded session answers a live one (`Tape.match`), and the order in
which layer 2 took in its workers' updates between the supervisor's calls (`Tape.order`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NotRequired, cast

from lightscientist_jupyter.errors import ModelConfigError
from lightscientist_jupyter.runtime.recording import seal
from lightscientist_jupyter.runtime.recording.forms import MessageView, ToolView
from lightscientist_jupyter.runtime.recording.lines import (
    CallLine,
    ReplyLine,
    RunLine,
    UpdateLine,
)
from lightscientist_jupyter.runtime.recording.recorder import FORMAT, recording_files
from lightscientist_jupyter.runtime.recording.tape import CallCounter
from lightscientist_jupyter.runtime.recording.update_order import Line as OrderLine
from lightscientist_jupyter.runtime.recording.update_order import UpdateOrder
from lightscientist_jupyter.vocab import RecordingLine, ReplySource, Role, WorkerStatus

RESEAL = "record the run again with --record, or replay it with replay:PATH,lenient"


class TapedCall(CallLine):
    """A call line as the `Tape` holds it (in memory): with the views its hashes name."""

    message_views: list[tuple[str, MessageView]]
    tool_views: list[tuple[str, ToolView]]
    edited: NotRequired[str]
    """Why its seal is broken (only a lenient replay reads such a line)."""


class Tape:
    """The recorded calls of one or more recording files, by session key and call index."""

    def __init__(self, source: str, files: Sequence[Path], *, strict: bool = True):
        self.source = source
        self.sessions: dict[str, dict[int, TapedCall]] = {}
        self.replies: list[ReplyLine] = []
        """The recorded human replies, in order (`--replies recorded` gives them again)."""
        self.models: list[str] = []
        """The model label of each file's run line."""
        self._order: list[OrderLine] = []
        for path in files:
            self._read(path, strict)
        self.counter = CallCounter()
        self.lock = threading.Lock()
        self.reported: set[tuple[str, str, str]] = set()
        self.divergences = 0
        self._matched: dict[str, str] = {}
        """Live session key -> the recorded session that answers it (`match`)."""
        updates = any(call is None for _, call in self._order)
        self.order = UpdateOrder(self._order, self.recorded_key) if updates else None
        """The order layer 2 took in its updates (None: the recording has no update lines)."""

    @classmethod
    def load(cls, path: str, *, strict: bool = True) -> Tape:
        """The recordings at `path`: a file, a folder of `*.jsonl`, or a workspace."""
        files = recording_files(path)
        if files is None:
            raise ModelConfigError(
                f"replay: {path} does not exist; give a recording file, a folder of them, or "
                "a workspace that ran with --record"
            )
        tape = cls(path, files, strict=strict)
        if not tape.sessions:
            raise ModelConfigError(f"replay: {path} holds no recorded model call")
        return tape

    def calls(self, key: str) -> int:
        return len(self.sessions.get(key, {}))

    def match(self, key: str, index: int, hashes: list[str]) -> str:
        """The recorded session that answers the live session `key`, decided at the first call
        this process sees of it (its `index`, the hashes of its messages): of the recorded
        sessions of the same role and stage not yet taken, the first whose call `index` was
        asked exactly these messages; else `key` itself (and a strict replay then names the
        difference). Sessions started together may start in either order; their requests say
        which is which."""
        with self.lock:
            if key in self._matched:
                return self._matched[key]
            group = key.rpartition("/")[0]
            taken = set(self._matched.values())
            same = [
                k
                for k, calls in self.sessions.items()
                if k.rpartition("/")[0] == group
                and k not in taken
                and index in calls
                and calls[index]["messages"] == hashes
            ]
            chosen = min(same, key=_order) if same else key
            self._matched[key] = chosen
            return chosen

    def recorded_key(self, live: str) -> str:
        """The recorded session that answers the live session `live` (itself until `match`
        paired it with another)."""
        with self.lock:
            return self._matched.get(live, live)

    def _read(self, path: Path, strict: bool) -> None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ModelConfigError(f"replay: cannot read {path} ({exc.strerror})") from None
        # bytes split on newlines only: a recorded text may hold U+2028, which str.splitlines
        # would take for a line break
        raw = data.split(b"\n")
        raw = raw[:-1] if raw and not raw[-1] else raw
        if not raw:
            return
        header = _parse_run(path, raw[0])
        lines = [_parse(path, n, text) for n, text in enumerate(raw[1:], 2)]
        defs: dict[str, MessageView | ToolView] = {}
        taped: dict[int, TapedCall] = {}
        for n, line in enumerate(lines, 2):
            if line["kind"] == RecordingLine.CALL:
                defs.update(line.get("defs") or {})
                taped[n] = TapedCall(
                    **line,
                    message_views=[
                        (h, cast(MessageView, view))  # as `_message_problem` checked it
                        for h, view in _views(path, n, line["messages"], defs, _message_problem)
                    ],
                    tool_views=[
                        (h, cast(ToolView, view))  # as `_tool_problem` checked it
                        for h, view in _views(path, n, line["tools"], defs, _tool_problem)
                    ],
                )
        version = header.get("v", 1)
        sealed = version >= seal.SEALED
        if strict and not sealed and lines:
            raise ModelConfigError(
                f"replay: {path} was recorded before recordings were sealed (format "
                f"{version}), so a strict replay cannot check its responses; {RESEAL}"
            )
        for n, what in seal.problems(raw, [header, *lines]) if sealed else []:
            if strict:
                raise ModelConfigError(f"replay: {path}:{n}: {what}; {RESEAL}")
            if n in taped:
                taped[n].setdefault("edited", what)
        for n, line in enumerate(lines, 2):
            if line["kind"] == RecordingLine.REPLY:
                self.replies.append(line)
            elif line["kind"] == RecordingLine.UPDATE:
                self._order.append((line["session"], None))
            else:
                call = taped[n]
                self.sessions.setdefault(call["session"], {}).setdefault(call["call"], call)
                if call.get("role") == Role.SUPERVISOR:
                    self._order.append((call["session"], call["call"]))
        self.models.append(header.get("model") or "")


def _order(key: str) -> int:
    n = key.rpartition("/")[2]
    return int(n) if n.isdigit() else 0


def _json(path: Path, n: int, text: bytes) -> dict[str, object]:
    try:
        line = json.loads(text.decode("utf-8"))
    except ValueError:
        line = None
    if not isinstance(line, dict):
        raise ModelConfigError(f"replay: {path}:{n}: not a JSON object")
    return line


def _parse_run(path: Path, text: bytes) -> RunLine:
    """The run line (line 1) of `path`, checked; a `ModelConfigError` naming it if wrong."""
    line = _json(path, 1, text)
    what = _run_problem(line)
    if what:
        raise ModelConfigError(f"replay: {path}:1: {what}")
    line["kind"] = RecordingLine.RUN
    return cast(RunLine, line)  # as `_run_problem` checked it


def _parse(path: Path, n: int, text: bytes) -> CallLine | ReplyLine | UpdateLine:
    """Line `n` (after the run line) of `path`, checked for its shape, its kind and
    vocabularies as members; a `ModelConfigError` naming it if wrong."""
    line = _json(path, n, text)
    what = _shape_problem(line)
    if what:
        raise ModelConfigError(f"replay: {path}:{n}: {what}")
    kind = line["kind"] = RecordingLine(str(line["kind"]))
    if kind == RecordingLine.CALL and line.get("role") is not None:
        line["role"] = Role(str(line["role"]))
    elif kind == RecordingLine.UPDATE and line.get("status") is not None:
        line["status"] = WorkerStatus(str(line["status"]))
    elif kind == RecordingLine.REPLY:
        line["source"] = ReplySource.read(line.get("source"))
    return cast(CallLine | ReplyLine | UpdateLine, line)  # as `_shape_problem` checked it


def _run_problem(line: Mapping[str, object]) -> str | None:
    if line.get("kind") != RecordingLine.RUN:
        return 'not a run line (a recording starts with {"kind": "run", …})'
    version = line.get("v", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return f"a bad format number 'v' ({version!r})"
    if version > FORMAT:
        return f"format {version}, newer than this LightScientist reads ({FORMAT}); update it"
    if not isinstance(line.get("model", ""), str):
        return "a 'model' that is not text"
    if not isinstance(line.get("price"), dict | None):
        return "a 'price' that is not an object"
    return None


def _shape_problem(line: Mapping[str, object]) -> str | None:
    kind = line.get("kind")
    if kind == RecordingLine.CALL:
        return _call_problem(line)
    if kind == RecordingLine.REPLY:
        return _reply_problem(line)
    if kind == RecordingLine.UPDATE:
        return _update_problem(line)
    return f"kind {kind!r}; after its run line a recording holds 'call', 'reply' and 'update' lines"


def _call_problem(line: Mapping[str, object]) -> str | None:
    session, index = line.get("session"), line.get("call")
    if not isinstance(session, str) or not session:
        return "no 'session' (a text such as worker/<stage>/<n>)"
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return f"a bad 'call' index ({index!r}; a whole number from 0)"
    for key in ("worker", "stage"):
        if not isinstance(line.get(key), str | None):
            return f"a call whose '{key}' is not text"
    if line.get("role") not in (None, *Role):
        return f"a call whose 'role' is not {_one_of(Role)}"
    for key in ("messages", "tools"):
        hashes = line.get(key)
        if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
            return f"a bad '{key}' (a list of hashes)"
    defs = line.get("defs", {})
    if not isinstance(defs, dict) or not all(isinstance(v, dict) for v in defs.values()):
        return "a bad 'defs' (an object of hash: message or tool)"
    response = line.get("response")
    if not isinstance(response, dict):
        return f"the response is {_a(response)}, not an object"
    content = response.get("content", "")
    if not isinstance(content, str | list) or not all(isinstance(b, str | dict) for b in content):
        return "the response's 'content' is neither text nor a list of blocks"
    calls = response.get("tool_calls") or []
    if not isinstance(calls, list):
        return "the response's 'tool_calls' is not a list"
    for i, call in enumerate(calls, 1):
        if why := _tool_call_problem(call):
            return f"the response's tool call {i} {why}"
    if not isinstance(response.get("usage"), dict | None):
        return "the response's 'usage' is not an object"
    return None


def _tool_call_problem(call: object) -> str | None:
    """What is wrong with a tool call (a response's, or a message's): it needs a name and,
    when it has them, arguments (an object) and an id (text)."""
    if not (
        isinstance(call, dict)
        and isinstance(call.get("name"), str)
        and isinstance(call.get("args", {}), dict)
    ):
        return "lacks a 'name' text or an 'args' object"
    if not isinstance(call.get("id"), str | None):
        return "has an 'id' that is not text"
    return None


def _a(value: object) -> str:
    names = {str: "text", list: "a list", int: "a number", float: "a number", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _one_of(vocabulary: type[Role] | type[WorkerStatus]) -> str:
    return ", ".join(f"'{m}'" for m in vocabulary) + " or null"


def _reply_problem(line: Mapping[str, object]) -> str | None:
    if not isinstance(line.get("approve"), bool):
        return "a reply without 'approve' (true or false)"
    for key in ("stage", "comment", "to", "source"):
        if not isinstance(line.get(key), str | None):
            return f"a reply whose '{key}' is not text"
    return None


def _update_problem(line: Mapping[str, object]) -> str | None:
    session = line.get("session")
    if not isinstance(session, str) or not session:
        return "an update without 'session' (a text such as worker/<stage>/<n>)"
    for key in ("status", "worker", "stage"):
        if not isinstance(line.get(key), str | None):
            return f"an update whose '{key}' is not text"
    if line.get("status") not in (None, *WorkerStatus):
        return f"an update whose 'status' is not {_one_of(WorkerStatus)}"
    return None


def _message_problem(view: Mapping[str, object]) -> str | None:
    if not (isinstance(view.get("role"), str) and isinstance(view.get("content"), str)):
        return "not a message (a 'role' and a 'content' text)"
    calls = view.get("tool_calls", [])
    if not isinstance(calls, list):
        return "a message whose 'tool_calls' is not a list"
    for i, call in enumerate(calls, 1):
        if why := _tool_call_problem(call):
            return f"a message whose tool call {i} {why}"
    if not all(isinstance(view.get(k), str | None) for k in ("name", "tool_call_id")):
        return "a message whose 'name' or 'tool_call_id' is not text"
    return None


def _tool_problem(view: Mapping[str, object]) -> str | None:
    if not (
        all(key in view for key in ("name", "description", "parameters"))
        and isinstance(view["name"], str | None)
        and isinstance(view["description"], str | None)
        and isinstance(view["parameters"], dict)
    ):
        return "not a tool (a 'name' text, a 'description' text and 'parameters', an object)"
    return None


def _views(
    path: Path,
    n: int,
    hashes: list[str],
    defs: Mapping[str, Mapping[str, object]],
    problem: Callable[[Mapping[str, object]], str | None],
) -> list[tuple[str, Mapping[str, object]]]:
    """The views `hashes` name under the `defs` of the lines up to line `n`, each checked
    (`problem`: what is wrong with it as a message, or as a tool)."""
    missing = [h for h in hashes if h not in defs]
    if missing:
        raise ModelConfigError(
            f"replay: {path}:{n}: hash {missing[0]} is defined under 'defs' of no line up to it"
        )
    for h in hashes:
        what = problem(defs[h])
        if what:
            raise ModelConfigError(f"replay: {path}:{n}: hash {h} under 'defs' is {what}")
    return [(h, defs[h]) for h in hashes]
