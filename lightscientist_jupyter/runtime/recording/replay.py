"""The replay model: a chat model that answers each session's calls from a recording.

`--model replay:PATH` (a recording file, a folder of them, or a workspace that recorded) gives
a `ReplayChatModel`. A session is matched to the recorded one with the same key (role, stage
and the order the sessions started; see `tape`), never by worker id — or, when sessions of a
stage started together (one supervisor turn starting several workers, whose ids are handed
out in whichever order their threads run), to the one whose request is the same
(`Tape.match`); its n-th call gets the n-th recorded answer, with `<workspace>` put back as
this workspace's path. No network.

Before answering, the request is compared with the recorded one (compared forms, see
`recording.recorder`). Strict (the default): the first differing message fails the session with a
message naming the worker, its stage, the call and that message, both sides shortened; the
responses themselves were checked against their seal when the recording was read (`recorded`),
before anything ran. `replay:PATH,lenient` answers anyway and reports each new difference as a
`replay.divergence` event, an answer whose seal is broken too (kind `edited response`). A
command's output (an `execute`, `build_pdf` or `notebook_run` result) that differs — times,
random numbers — never fails a replay: it is reported the same way. A call beyond the recorded
ones fails the session.

Layer 2 takes in its workers' updates, between the supervisor's calls, in the order the
recording did (`update_order`): this model tells the order each supervisor call it answered.

The bound tools are compared as the recorder saw them: the `tools` a request carries. This
model binds them as LangChain's chat models do (`bind(tools=[…])`), so a replayed request
carries them the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.redact import redactor
from lightscientist_jupyter.runtime.jobs.record import JOBS_ENDED
from lightscientist_jupyter.runtime.metering.tokens import ESTIMATED
from lightscientist_jupyter.runtime.recording.forms import (
    WORKSPACE,
    MessageView,
    ResponseView,
    ToolView,
    compared,
    tool_view,
    view_hash,
    views,
)
from lightscientist_jupyter.runtime.recording.recorded import Tape, TapedCall
from lightscientist_jupyter.runtime.recording.tape import META

SHORT = 120
"""How much of each side a divergence shows."""


class ReplayDivergence(RuntimeLayerError):
    """A strict replay met a request that differs from the recorded one."""


class ReplayExhausted(RuntimeLayerError):
    """A session asked for more model calls than the recording holds."""


class ReplayChatModel(BaseChatModel):
    """Answers from a `Tape`. `replays` marks it for code that treats replays apart (no model
    check, no retries)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replays: ClassVar[bool] = True
    tape: Tape
    lenient: bool = False

    @property
    def _llm_type(self) -> str:
        return "lightscientist-replay"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"source": self.tape.source, "lenient": self.lenient}

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with `tools` (their OpenAI schemas) passed with every request."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        tools: Sequence[dict[str, Any]] = (),
        **kwargs: Any,
    ) -> ChatResult:
        meta = dict(getattr(run_manager, "metadata", None) or {})
        if META not in meta:
            raise RuntimeLayerError("the replay model answers LightScientist sessions only")
        key, root = meta[META], str(meta.get("ls_root") or "")
        who = f"worker {meta.get('ls_worker')} (stage {meta.get('ls_stage') or '-'})"
        index = self.tape.counter.take(meta)
        scrub = redactor()
        live = [views(m, root, scrub) for m in messages]
        key = self.tape.match(key, index, [h for h, _ in live])
        line = self.tape.sessions.get(key, {}).get(index)
        if line is None:
            raise ReplayExhausted(
                f"replay: {who} asks for model call {index + 1}, but {self.tape.source} "
                f"recorded {self.tape.calls(key)} for this session ({key})"
            )
        found = differences(line, live, [tool_view(t) for t in tools])
        if line.get("edited"):  # only a lenient replay reads such a line (see `recorded`)
            found.append(("edited response", "the response", line["edited"], "answered anyway"))
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
        if self.tape.order is not None:  # the updates recorded after this call may come in
            self.tape.order.answered(key, index)
        output = {"replay_divergences": reports, "replay_total": total} if reports else {}
        message = _answer(line["response"], root)
        return ChatResult(generations=[ChatGeneration(message=message, generation_info=output)])


def differences(
    line: TapedCall, live: list[tuple[str, MessageView]], tools: list[ToolView]
) -> list[tuple[str, str, str, str]]:
    """(kind, where, recorded, now) for each difference between a recorded request and this
    one: command outputs that differ (kind `command output`), then the first other differing
    message, or the bound tools (kind `request`)."""
    found = []
    recorded = line["message_views"]
    for i in range(max(len(recorded), len(live))):
        old = recorded[i] if i < len(recorded) else ("", None)
        new = live[i] if i < len(live) else ("", None)
        if old[0] == new[0]:
            continue
        where = f"message {i + 1} ({_role(new[1]) or _role(old[1])})"
        a, b = shorten(compared(_shown(old[1])), compared(_shown(new[1])))
        if _is_output(old[1]) and _is_output(new[1]):
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


def _role(view: MessageView | None) -> str | None:
    return view["role"] if view else None


COMMAND_TOOLS = ("execute", "build_pdf", "notebook_run", "recall")
"""The tools whose result is what a command printed: the shell's, the PDF build's (its time
and size) and the notebook run's (its time, a traceback's object addresses); and `recall`'s,
what the user's memory holds, which is no more the recording's than a command's output."""


def _is_output(view: MessageView | None) -> bool:
    """Whether a message is what a command printed: a `COMMAND_TOOLS` result, or the message
    that resumes a worker whose jobs ended (their wall times and the tails of their logs)."""
    if view is None:
        return False
    if view["role"] == "tool":
        return view.get("name") in COMMAND_TOOLS
    return view["role"] == "human" and view["content"].startswith(JOBS_ENDED)


def _shown(view: MessageView | None) -> str:
    if not view:
        return "(no message)"
    text = str(view.get("content") or "")
    if view.get("tool_calls"):
        text += " " + json.dumps([[c["name"], c.get("args", {})] for c in view["tool_calls"]])
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


Portable = TypeVar("Portable")


def _answer(response: ResponseView, root: str) -> AIMessage:
    def local(value: Portable) -> Portable:
        """`value` with `<workspace>` put back as this workspace's path."""
        if not root:
            return value
        text = json.dumps(value, ensure_ascii=False)
        here: Portable = json.loads(text.replace(WORKSPACE, json.dumps(root)[1:-1]))
        return here

    calls = [
        {
            "name": c["name"],
            "args": local(c.get("args") or {}),
            "id": c.get("id"),
            "type": "tool_call",
        }
        for c in response.get("tool_calls") or []
    ]
    usage = dict(response.get("usage") or {})
    estimated = bool(usage.pop("estimated", False))  # charged as the recorded run was
    return AIMessage(
        content=local(response.get("content") or ""),
        tool_calls=calls,
        usage_metadata=usage or None,
        response_metadata={ESTIMATED: True} if estimated else {},
    )
