"""Lifecycle tools only a worker calls, and the middleware that gives them effect.

- `request_input(question)` pauses the session with LangGraph's `interrupt()`: the worker is
  `waiting` until `resume(answer=…)` answers it (the tool re-runs from its top then, so nothing
  happens before the interrupt).
- `suspend(reason, check_after_s)` ends the turn: the worker is `background` until a plain new
  message arrives on the same thread.
- `complete_stage(summary, outputs, next_stage)` records the worker's suggestion for layer 2 and
  ends its work.
- `finalize_cancel(notes)` is the last call of a worker being cancelled.

`LifecycleMiddleware` ends a turn right after one of the stopping tools, or a tool that settles
the turn (`SETTLES`), ran (decided from the checkpointed messages alone, so it holds after a
restart), delivers the cancellation notice, and, for the supervisor, feeds the model only the
current turn so its input never grows.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.types import interrupt

STOP_TOOLS = ("complete_stage", "suspend", "finalize_cancel", "submit_job")
"""`submit_job` stops a turn only when the job started (its result's artifact names it)."""

CANCEL_NOTICE = (
    "LightScientist: this worker is being cancelled. Do not start new work. Call "
    "`finalize_cancel` now with short notes: what is finished, which files are worth keeping, "
    "and what remains."
)


def answered(answer: Any) -> str:
    """What `request_input` returns once answered (a coding agent's, over MCP, too)."""
    return f"Answer from the supervisor: {answer}"


def lifecycle_tools() -> list[BaseTool]:
    """The four lifecycle tools. They keep no state (the session reads their calls from the
    checkpoint), so every worker shares one set: their schemas are built once."""
    return list(_lifecycle_tools())


@functools.cache
def _lifecycle_tools() -> tuple[BaseTool, ...]:

    @tool
    def request_input(question: str) -> str:
        """Ask the supervisor a question that blocks your work, and wait for the answer.

        Use it only when you cannot reasonably decide yourself.
        """
        answer = interrupt({"type": "request_input", "question": question})
        return answered(answer)

    @tool
    def suspend(reason: str, check_after_s: float = 30.0) -> str:
        """Suspend yourself while something runs in the background (e.g. a long command you
        started with `&`). You will be resumed later with a message; your history is kept.
        """
        return f"Suspended ({reason}); you will be resumed in about {check_after_s:g} s."

    @tool
    def complete_stage(summary: str, outputs: list[str], next_stage: str) -> str:
        """Deliver your work: a 5-10 line summary, the files you wrote (workspace-relative
        paths) and the next stage you suggest (one of the allowed next stages). The supervisor
        decides; this ends your work.
        """
        return f"Delivered to the supervisor; suggested next stage: {next_stage}."

    @tool
    def finalize_cancel(notes: str) -> str:
        """Finish a cancelled worker: say what is done, what to keep and what remains."""
        return "Cancellation acknowledged."

    return (request_input, suspend, complete_stage, finalize_cancel)


def last_turn(messages: list[Any]) -> list[Any]:
    """The messages from the last human message on."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return messages[index:]
    return list(messages)


SETTLES = "settles"
"""The key of a tool result's artifact that settles its turn: a tool answering
`(text, {SETTLES: reply})` (`response_format="content_and_artifact"`) ends the turn after it
ran, with `reply` as the turn's one-line answer, and no further model call."""


def settled_reply(messages: list[Any]) -> str | None:
    """The reply a settling tool gave the current turn, if one ran in its latest tool calls
    (`done` wins over any other reply among parallel calls); None otherwise."""
    turn = last_turn(messages)
    replies: list[str] = []
    for message in reversed(turn):
        if not isinstance(message, ToolMessage):
            break
        artifact = message.artifact
        if isinstance(artifact, dict) and artifact.get(SETTLES):
            replies.append(str(artifact[SETTLES]))
    if not replies:
        return None
    return "done" if "done" in replies else replies[0]


def turn_reply(messages: list[Any]) -> str:
    """The one-line answer a turn ended with: a settling tool's (`settled_reply`), else the
    text of the last model message."""
    settled = settled_reply(messages)
    if settled:
        return settled
    for message in reversed(messages):
        if isinstance(message, AIMessage) and isinstance(message.content, str):
            return message.content.strip()
    return ""


def stop_call(messages: list[Any]) -> dict[str, Any] | None:
    """The stopping lifecycle call that ended the current turn, if any: `{"name", "args"}`.

    Only a call whose tool result is already in the history counts.
    """
    turn = last_turn(messages)
    answered = {m.tool_call_id: m for m in turn if isinstance(m, ToolMessage)}
    for message in reversed(turn):
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                result = answered.get(call.get("id") or "")
                if call["name"] == "submit_job" and not (result and result.artifact):
                    continue  # a refused job: the turn goes on
                if call["name"] in STOP_TOOLS and result is not None:
                    return {"name": call["name"], "args": dict(call.get("args") or {})}
    return None


@dataclasses.dataclass(eq=False)
class TurnFlags:
    """A session's stop flags, as its graph's middleware sees them."""

    cancel: threading.Event
    hard_stop: threading.Event
    notice_sent: bool = False
    """Whether the cancel notice went to the model (it goes once)."""


class LifecycleMiddleware(AgentMiddleware):
    """Ends turns after stopping tools, handles cancellation, bounds the supervisor's input.

    `flags` gives, at each step, the flags of the session whose turn is running (one
    middleware serves every worker of a runtime's shared graph)."""

    def __init__(
        self,
        *,
        flags: Callable[[], TurnFlags],
        current_turn_only: bool = False,
        on_model_request: Callable[[list[Any]], None] | None = None,
    ):
        super().__init__()
        self.flags = flags
        self.current_turn_only = current_turn_only
        self.on_model_request = on_model_request

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: AgentState[Any], runtime: Any) -> dict[str, Any] | None:
        messages = state.get("messages", [])
        flags = self.flags()
        if flags.hard_stop.is_set():
            return {"jump_to": "end"}
        if messages and isinstance(messages[-1], ToolMessage):
            if stop_call(messages) or settled_reply(messages):
                return {"jump_to": "end"}
        if flags.cancel.is_set() and not flags.notice_sent:
            flags.notice_sent = True
            return {"messages": [HumanMessage(CANCEL_NOTICE)]}
        return None

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        if self.current_turn_only:
            request = request.override(messages=last_turn(request.messages))
        return handler(request)
