"""The supervisor agent's tools: queries, worker control, and layer 1's two tools.

Each tool is a thin wrapper over a `WorkerControl` method (`backends.py`), answering in short
text or JSON a model can read. Starting a worker never blocks. The tools that settle an event
(a started, resumed or scheduled worker, a question put to the user: `continue`; an accepted
finish: `done`) end the agent's turn with that reply, so a decision costs one model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, tool

from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.runtime.session.lifecycle import SETTLES

if TYPE_CHECKING:
    from lightscientist_jupyter.supervisor.backends import WorkerControl


def supervisor_tools(sup: WorkerControl) -> list[BaseTool]:

    def guard(fn: Callable[[], str]) -> Callable[[], str]:
        def run() -> str:
            try:
                return fn()
            except LightScientistError as exc:
                return f"error: {exc}"

        return run

    def settling(
        fn: Callable[[], str], reply: str = "continue", prefix: str = ""
    ) -> tuple[str, dict[str, str] | None]:
        """`fn`'s text, settling the turn with `reply` when it succeeded (and starts with
        `prefix`); an error or a refusal leaves the turn to the model."""
        text = guard(fn)()
        settled = not text.startswith("error:") and text.startswith(prefix)
        return text, ({SETTLES: reply} if settled else None)

    @tool
    def get_task_info() -> str:
        """The current stage task: goal, stage, required outputs, allowed next stages."""
        return json.dumps(sup.task.to_dict(), ensure_ascii=False)

    @tool
    def list_workers() -> str:
        """Workers of the current stage: id, label, status, outputs, suggested next stage."""
        return json.dumps(sup.worker_summaries(), ensure_ascii=False)

    @tool
    def get_worker(worker_id: str) -> str:
        """One worker's full record."""
        return guard(lambda: json.dumps(sup.worker_record(worker_id), ensure_ascii=False))()

    @tool(response_format="content_and_artifact")
    def start_worker(
        runtime: ToolRuntime, instructions: str = "", label: str = ""
    ) -> tuple[str, Any]:
        """Start a new worker on the current stage (returns at once with its id; ends your
        turn). `label` names a sub-task (e.g. 'probe c1'); `instructions` are added to its
        task."""
        key = call_position(runtime)
        return settling(lambda: f"started {sup.start_worker(instructions, label, key)}")

    @tool(response_format="content_and_artifact")
    def resume_worker(worker_id: str, answer: str = "", message: str = "") -> tuple[str, Any]:
        """Resume a worker: `answer` a waiting one's question, or send a background one a
        `message` (ends your turn)."""
        return settling(lambda: sup.resume_worker(worker_id, answer or None, message or None))

    @tool
    def cancel_worker(worker_id: str) -> str:
        """Cancel a worker (it keeps its useful files). Use rarely."""
        return guard(lambda: sup.cancel_worker(worker_id))()

    @tool(response_format="content_and_artifact")
    def schedule_resume(worker_id: str, message: str, delay_s: float) -> tuple[str, Any]:
        """Resume a background worker with `message` after `delay_s` seconds, without asking
        you again (ends your turn)."""
        return settling(lambda: sup.schedule_resume(worker_id, message, delay_s))

    @tool(response_format="content_and_artifact")
    def finish_stage(summary: str, outputs: list[str], next_stage: str) -> tuple[str, Any]:
        """Finish the current stage (layer 1 checks outputs and the allowed next stages).
        Answers 'accepted: …' (ends your turn: done) or 'refused: <reason>'."""
        return settling(
            lambda: sup.finish_stage(summary, outputs, next_stage), "done", prefix="accepted"
        )

    @tool(response_format="content_and_artifact")
    def request_user_decision(question: str, options: list[str] | None = None) -> tuple[str, Any]:
        """Ask the human a project-level question; the answer arrives as a `user_answered`
        event (ends your turn)."""
        return settling(lambda: sup.request_user_decision(question, options or []))

    return [
        get_task_info,
        list_workers,
        get_worker,
        start_worker,
        resume_worker,
        cancel_worker,
        schedule_resume,
        finish_stage,
        request_user_decision,
    ]


def call_position(runtime: ToolRuntime[Any, Any]) -> str | None:
    """Where this tool call sits in the agent's checkpointed thread: `thread:message.call`.

    A call replayed after a crash (the tool node runs again from the checkpoint) sits at the
    same place; a new call never does, even when the model reuses its tool-call ids (the
    offline model does across turns; some OpenAI-compatible servers send `call_0` every
    time). None when the position cannot be read."""
    thread = (runtime.config or {}).get("configurable", {}).get("thread_id")
    messages = (runtime.state or {}).get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        calls = getattr(messages[index], "tool_calls", None) or []
        for position, call in enumerate(calls):
            if call.get("id") == runtime.tool_call_id:
                return f"{thread}:{index}.{position}"
    return None
