"""The supervisor agent's tools: queries, worker control, and layer 1's two tools.

Each tool is a thin wrapper over a `WorkerControl` method (`backends.py`), answering in short
text or JSON a model can read. Starting a worker never blocks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, tool

from lightscientist_jupyter.errors import LightScientistError

if TYPE_CHECKING:
    from lightscientist_jupyter.supervisor.backends import WorkerControl


def supervisor_tools(sup: WorkerControl) -> list[BaseTool]:

    def guard(fn):
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except LightScientistError as exc:
                return f"error: {exc}"

        return run

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

    @tool
    def start_worker(runtime: ToolRuntime, instructions: str = "", label: str = "") -> str:
        """Start a new worker on the current stage (returns at once with its id). `label`
        names a sub-task (e.g. 'probe c1'); `instructions` are added to its task."""
        key = call_position(runtime)
        return guard(lambda: f"started {sup.start_worker(instructions, label, key)}")()

    @tool
    def resume_worker(worker_id: str, answer: str = "", message: str = "") -> str:
        """Resume a worker: `answer` a waiting one's question, or send a background one a
        `message`."""
        return guard(lambda: sup.resume_worker(worker_id, answer or None, message or None))()

    @tool
    def cancel_worker(worker_id: str) -> str:
        """Cancel a worker (it keeps its useful files). Use rarely."""
        return guard(lambda: sup.cancel_worker(worker_id))()

    @tool
    def schedule_resume(worker_id: str, message: str, delay_s: float) -> str:
        """Resume a background worker with `message` after `delay_s` seconds, without asking
        you again."""
        return guard(lambda: sup.schedule_resume(worker_id, message, delay_s))()

    @tool
    def finish_stage(summary: str, outputs: list[str], next_stage: str) -> str:
        """Finish the current stage (layer 1 checks outputs and the allowed next stages).
        Answers 'accepted: …' or 'refused: <reason>'."""
        return guard(lambda: sup.finish_stage(summary, outputs, next_stage))()

    @tool
    def request_user_decision(question: str, options: list[str] | None = None) -> str:
        """Ask the human a project-level question; the answer arrives as a `user_answered`
        event."""
        return guard(lambda: sup.request_user_decision(question, options or []))()

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
