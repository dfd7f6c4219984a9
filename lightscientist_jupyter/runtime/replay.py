"""The replay model: a chat model that answers each session's calls from a recording.

`--model replay:PATH` (a recording file, a folder of them, or a workspace that recorded) gives
a `ReplayChatModel`. A session is matched to the recorded one with the same key (role, stage
and the order the sessions started; see `tape`), never by worker id; its n-th call gets
the n-th recorded answer, with `<workspace>` put back as this workspace's path. No network.

Before answering, the request is compared with the recorded one (compared forms, see
`recording`). Strict (the default): the first differing message fails the session with a
message naming the worker, its stage, the call and that message, both sides shortened.
`replay:PATH,lenient` answers anyway and reports each new difference as a `replay.divergence`
event. A command's output (an `execute` result) that differs — times, random numbers — never
fails a replay: it is reported the same way. A call beyond the recorded ones fails the session.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field

from lightscientist_jupyter.errors import ModelConfigError, RuntimeLayerError
from lightscientist_jupyter.runtime.recording import (
    WORKSPACE,
    compared,
    recording_files,
    tool_view,
    view_hash,
    views,
)
from lightscientist_jupyter.runtime.redact import redactor
from lightscientist_jupyter.runtime.tape import META, CallCounter

SHORT = 120
"""How much of each side a divergence shows."""


class ReplayDivergence(RuntimeLayerError):
    """A strict replay met a request that differs from the recorded one."""


class ReplayExhausted(RuntimeLayerError):
    """A session asked for more model calls than the recording holds."""


class Tape:
    """The recorded calls of one or more recording files, by session key and call index."""

    def __init__(self, source: str, files: Sequence[Path]):
        self.source = source
        self.sessions: dict[str, dict[int, dict[str, Any]]] = {}
        self.replies: list[dict[str, Any]] = []
        """The recorded human replies, in order (`--replies recorded` gives them again)."""
        for path in files:
            defs: dict[str, Any] = {}
            for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    line = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    raise ModelConfigError(
                        f"{path}:{n} is not a JSON line of a recording"
                    ) from None
                if line.get("kind") == "reply":
                    self.replies.append(line)
                if line.get("kind") != "call":
                    continue
                defs.update(line.get("defs") or {})
                line["message_views"] = [(h, defs.get(h, {})) for h in line["messages"]]
                line["tool_views"] = [(h, defs.get(h, {})) for h in line.get("tools") or []]
                self.sessions.setdefault(line["session"], {}).setdefault(int(line["call"]), line)
        self.counter = CallCounter()
        self.lock = threading.Lock()
        self.reported: set[tuple[str, str, str]] = set()
        self.divergences = 0

    @classmethod
    def load(cls, path: str) -> Tape:
        """The recordings at `path`: a file, a folder of `*.jsonl`, or a workspace."""
        files = recording_files(path)
        if files is None:
            raise ModelConfigError(
                f"replay: {path} does not exist; give a recording file, a folder of them, or "
                "a workspace that ran with --record"
            )
        tape = cls(path, files)
        if not tape.sessions:
            raise ModelConfigError(f"replay: {path} holds no recorded model call")
        return tape

    def calls(self, key: str) -> int:
        return len(self.sessions.get(key, {}))


class ReplayChatModel(BaseChatModel):
    """Answers from a `Tape`. `replays` marks it for code that treats replays apart (no model
    check, no retries)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replays: ClassVar[bool] = True
    tape: Tape
    lenient: bool = False
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The schemas bound with `bind_tools` (compared with the recorded ones)."""

    @property
    def _llm_type(self) -> str:
        return "lightscientist-replay"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"source": self.tape.source, "lenient": self.lenient}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ReplayChatModel:
        return self.model_copy(update={"tools": [tool_view(t) for t in tools]})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        meta = dict(getattr(run_manager, "metadata", None) or {})
        if META not in meta:
            raise RuntimeLayerError("the replay model answers LightScientist sessions only")
        key, root = meta[META], str(meta.get("ls_root") or "")
        who = f"worker {meta.get('ls_worker')} (stage {meta.get('ls_stage') or '-'})"
        index = self.tape.counter.take(meta)
        line = self.tape.sessions.get(key, {}).get(index)
        if line is None:
            raise ReplayExhausted(
                f"replay: {who} asks for model call {index + 1}, but {self.tape.source} "
                f"recorded {self.tape.calls(key)} for this session ({key})"
            )
        scrub = redactor()
        found = differences(line, [views(m, root, scrub) for m in messages], self.tools)
        reports, total = [], 0
        for kind, where, recorded, now in found:
            if kind != "command output" and not self.lenient:
                raise ReplayDivergence(
                    f"replay diverged: {who}, call {index + 1}, {where} differs — recorded: "
                    f"{recorded!r}; now: {now!r} (replay with replay:PATH,lenient to go on)"
                )
            with self.tape.lock:
                mark = (key, where, compared(now))
                if mark in self.tape.reported:
                    continue
                self.tape.reported.add(mark)
                self.tape.divergences += 1
                total = self.tape.divergences
            reports.append(
                {"kind": kind, "call": index + 1, "where": where, "recorded": recorded, "now": now}
            )
        output = {"replay_divergences": reports, "replay_total": total} if reports else {}
        message = _answer(line["response"], root)
        return ChatResult(generations=[ChatGeneration(message=message, generation_info=output)])


def differences(
    line: dict[str, Any], live: list[tuple[str, dict[str, Any]]], tools: list[dict[str, Any]]
) -> list[tuple[str, str, str, str]]:
    """(kind, where, recorded, now) for each difference between a recorded request and this
    one: command outputs that differ (kind `command output`), then the first other differing
    message, or the bound tools (kind `request`)."""
    found = []
    recorded = line["message_views"]
    for i in range(max(len(recorded), len(live))):
        old = recorded[i] if i < len(recorded) else ("", {})
        new = live[i] if i < len(live) else ("", {})
        if old[0] == new[0]:
            continue
        where = f"message {i + 1} ({new[1].get('role') or old[1].get('role')})"
        a, b = shorten(compared(_shown(old[1])), compared(_shown(new[1])))
        if old[1].get("name") == "execute" and new[1].get("name") == "execute":
            found.append(("command output", where, a, b))
            continue
        found.append(("request", where, a, b))
        return found
    old_tools = {h for h, _ in line["tool_views"]}
    new_tools = {view_hash(t) for t in tools}
    if old_tools != new_tools:  # also a call recorded with no tools that now has some
        names_old = sorted(v.get("name") or "" for h, v in line["tool_views"] if h not in new_tools)
        names_new = sorted(t.get("name") or "" for t in tools if view_hash(t) not in old_tools)
        found.append(
            ("request", "the bound tools", ", ".join(names_old) or "none", ", ".join(names_new))
        )
    return found


def _shown(view: dict[str, Any]) -> str:
    if not view:
        return "(no message)"
    text = str(view.get("content") or "")
    if view.get("tool_calls"):
        text += " " + json.dumps([[c["name"], c["args"]] for c in view["tool_calls"]])
    return text


def shorten(a: str, b: str, width: int = SHORT) -> tuple[str, str]:
    """Both texts cut to `width` characters around where they first differ."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    begin = max(0, start - width // 3)

    def cut(text: str) -> str:
        part = text[begin : begin + width]
        return ("…" if begin else "") + part + ("…" if begin + width < len(text) else "")

    return cut(a), cut(b)


def _answer(response: dict[str, Any], root: str) -> AIMessage:
    def local(value: Any) -> Any:
        text = json.dumps(value, ensure_ascii=False)
        return json.loads(text.replace(WORKSPACE, json.dumps(root)[1:-1])) if root else value

    calls = [
        {
            "name": c["name"],
            "args": local(c.get("args") or {}),
            "id": c.get("id"),
            "type": "tool_call",
        }
        for c in response.get("tool_calls") or []
    ]
    usage = response.get("usage")
    return AIMessage(
        content=local(response.get("content") or ""),
        tool_calls=calls,
        usage_metadata=usage if usage else None,
    )
