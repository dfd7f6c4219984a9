"""Reading recordings for a replay: every line checked before any call is answered.

`Tape.load` reads the recording files a `replay:PATH` names (see `recording.recorder` for the
format) and checks each line's shape: a run line first, then call lines (a session key, a call
index, the request's message and tool hashes, each defined in the file, and a response with text or
content blocks, tool calls and usage), reply lines and update lines (a session key and a
status: what layer 2 took in, see `update_order`). A line of the wrong shape is a
`ModelConfigError` naming its file and line, in strict and lenient replays alike.

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lightscientist_jupyter.errors import ModelConfigError
from lightscientist_jupyter.runtime.recording import seal
from lightscientist_jupyter.runtime.recording.recorder import FORMAT, recording_files
from lightscientist_jupyter.runtime.recording.tape import CallCounter
from lightscientist_jupyter.runtime.recording.update_order import Line, UpdateOrder

RESEAL = "record the run again with --record, or replay it with replay:PATH,lenient"


class Tape:
    """The recorded calls of one or more recording files, by session key and call index."""

    def __init__(self, source: str, files: Sequence[Path], *, strict: bool = True):
        self.source = source
        self.sessions: dict[str, dict[int, dict[str, Any]]] = {}
        self.replies: list[dict[str, Any]] = []
        """The recorded human replies, in order (`--replies recorded` gives them again)."""
        self.models: list[str] = []
        """The model label of each file's run line."""
        self._order: list[Line] = []
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
                and calls.get(index, {}).get("messages") == hashes
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
        lines = [_parse(path, n, text) for n, text in enumerate(raw, 1)]
        if not lines:
            return
        defs: dict[str, Any] = {}
        for n, line in enumerate(lines[1:], 2):
            if line["kind"] == "call":
                defs.update(line.get("defs") or {})
                line["message_views"] = _views(path, n, line["messages"], defs)
                line["tool_views"] = _views(path, n, line["tools"], defs)
        version = lines[0].get("v", 1)
        sealed = version >= seal.SEALED
        if strict and not sealed and len(lines) > 1:
            raise ModelConfigError(
                f"replay: {path} was recorded before recordings were sealed (format "
                f"{version}), so a strict replay cannot check its responses; {RESEAL}"
            )
        for n, what in seal.problems(raw, lines) if sealed else []:
            if strict:
                raise ModelConfigError(f"replay: {path}:{n}: {what}; {RESEAL}")
            lines[n - 1].setdefault("edited", what)
        for line in lines[1:]:
            if line["kind"] == "reply":
                self.replies.append(line)
            elif line["kind"] == "update":
                self._order.append((line["session"], None))
            else:
                self.sessions.setdefault(line["session"], {}).setdefault(line["call"], line)
                if line.get("role") == "supervisor":
                    self._order.append((line["session"], line["call"]))
        self.models.append(str(lines[0].get("model") or ""))


def _order(key: str) -> int:
    n = key.rpartition("/")[2]
    return int(n) if n.isdigit() else 0


def _parse(path: Path, n: int, text: bytes) -> dict[str, Any]:
    """Line `n` of `path`, checked for its shape; a `ModelConfigError` naming it if wrong."""
    try:
        line = json.loads(text.decode("utf-8"))
    except ValueError:
        line = None
    what = "not a JSON object" if not isinstance(line, dict) else _shape_problem(n, line)
    if what:
        raise ModelConfigError(f"replay: {path}:{n}: {what}")
    return dict(line)


def _shape_problem(n: int, line: dict[str, Any]) -> str | None:
    kind = line.get("kind")
    if n == 1:
        if kind != "run":
            return 'not a run line (a recording starts with {"kind": "run", …})'
        version = line.get("v", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            return f"a bad format number 'v' ({version!r})"
        if version > FORMAT:
            return f"format {version}, newer than this LightScientist reads ({FORMAT}); update it"
        return None
    if kind == "call":
        return _call_problem(line)
    if kind == "reply":
        return _reply_problem(line)
    if kind == "update":
        return _update_problem(line)
    return f"kind {kind!r}; after its run line a recording holds 'call', 'reply' and 'update' lines"


def _call_problem(line: dict[str, Any]) -> str | None:
    session, index = line.get("session"), line.get("call")
    if not isinstance(session, str) or not session:
        return "no 'session' (a text such as worker/<stage>/<n>)"
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return f"a bad 'call' index ({index!r}; a whole number from 0)"
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
    if not isinstance(response.get("content", ""), str | list):
        return "the response's 'content' is neither text nor a list of blocks"
    calls = response.get("tool_calls") or []
    if not isinstance(calls, list):
        return "the response's 'tool_calls' is not a list"
    for i, call in enumerate(calls, 1):
        if not (
            isinstance(call, dict)
            and isinstance(call.get("name"), str)
            and isinstance(call.get("args", {}), dict)
        ):
            return f"the response's tool call {i} lacks a 'name' text or an 'args' object"
    if not isinstance(response.get("usage"), dict | None):
        return "the response's 'usage' is not an object"
    return None


def _a(value: Any) -> str:
    names = {str: "text", list: "a list", int: "a number", float: "a number", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _reply_problem(line: dict[str, Any]) -> str | None:
    if not isinstance(line.get("approve"), bool):
        return "a reply without 'approve' (true or false)"
    for key in ("stage", "comment", "to", "source"):
        if not isinstance(line.get(key), str | None):
            return f"a reply whose '{key}' is not text"
    return None


def _update_problem(line: dict[str, Any]) -> str | None:
    if not isinstance(line.get("session"), str) or not line["session"]:
        return "an update without 'session' (a text such as worker/<stage>/<n>)"
    for key in ("status", "worker", "stage"):
        if not isinstance(line.get(key), str | None):
            return f"an update whose '{key}' is not text"
    return None


def _views(
    path: Path, n: int, hashes: list[str], defs: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    missing = [h for h in hashes if h not in defs]
    if missing:
        raise ModelConfigError(
            f"replay: {path}:{n}: hash {missing[0]} is defined under 'defs' of no line up to it"
        )
    return [(h, defs[h]) for h in hashes]
