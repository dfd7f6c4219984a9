"""A tool that settles its event ends the supervisor's turn without another model call
(`lifecycle.SETTLES`), through a real OpenAI-compatible client: the reply is the tool's, the
server sees one request; a tool that does not settle (or fails to) leaves the turn to the
model, whose one-line answer stays the reply."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool
from support.chat_server import answer, tool_call
from support.runtime import finish

from lightscientist_jupyter.runtime.session.lifecycle import SETTLES
from lightscientist_jupyter.runtime.types import WorkerSpec


def supervisor_spec(message: str) -> WorkerSpec:
    @tool(response_format="content_and_artifact")
    def start_it(label: str = "") -> tuple[str, Any]:
        """Start something; settles the event."""
        return f"started {label}", {SETTLES: "continue"}

    @tool(response_format="content_and_artifact")
    def finish_it(ok: bool = True) -> tuple[str, Any]:
        """Finish; settles with done when accepted."""
        return ("accepted", {SETTLES: "done"}) if ok else ("refused: no outputs", None)

    @tool
    def look() -> str:
        """A query: never settles."""
        return "nothing to see"

    return WorkerSpec(
        message=message,
        role="supervisor",
        file_tools=False,
        max_input_messages=True,
        system_prompt="You supervise.",
        extra_tools=[start_it, finish_it, look],
    )


def test_a_settling_tool_ends_the_turn_with_its_reply(chat_server, chat_model, make_runtime):
    chat_server.play(tool_call("start_it", label="a"))
    runtime = make_runtime(chat_model, retries=0)
    worker = runtime.start(supervisor_spec("event: the stage started"))
    record = finish(runtime, worker)
    assert record["status"] == "background"
    assert record["result"] == {"kind": "reply", "text": "continue"}
    assert len(chat_server.requests) == 1  # no call to say "continue"
    assert record["progress"]["model_calls"] == 1

    chat_server.play(tool_call("finish_it"))
    runtime.resume(worker, message="event: a worker finished")
    record = finish(runtime, worker)
    assert record["result"] == {"kind": "reply", "text": "done"}
    assert len(chat_server.requests) == 2


def test_a_query_or_a_refusal_leaves_the_turn_to_the_model(chat_server, chat_model, make_runtime):
    chat_server.play(tool_call("look"), tool_call("finish_it", ok=False), answer("failed"))
    runtime = make_runtime(chat_model, retries=0)
    worker = runtime.start(supervisor_spec("event: a worker finished"))
    record = finish(runtime, worker)
    assert record["result"] == {"kind": "reply", "text": "failed"}  # the model's one line
    assert len(chat_server.requests) == 3
