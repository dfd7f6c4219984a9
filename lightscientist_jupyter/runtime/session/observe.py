"""LangChain callbacks → layer-3 events and progress counters.

Events show what agents did (model calls, outputs, tool calls and results), never hidden
reasoning; arguments and results are redacted and clipped before they leave the session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.errors import GraphBubbleUp

from lightscientist_jupyter.redact import safe
from lightscientist_jupyter.runtime.metering.tokens import message_chars
from lightscientist_jupyter.vocab import EventType

EVENT_TEXT_LIMIT = 1500

FILE_TOOLS = ("write_file", "edit_file")


class SessionObserver(BaseCallbackHandler):
    """Counts and reports one session's model and tool activity.

    Args:
        emit: `emit(type, message, data)` publishes a layer-3 event for this worker.
        on_progress: called after every counted model or tool call.
    """

    raise_error = False

    def __init__(
        self, emit: Callable[[str, str, dict[str, Any]], None], on_progress: Callable[[], None]
    ):
        self.emit = emit
        self.on_progress = on_progress
        self._lock = threading.Lock()
        self.model_calls = 0
        self.tool_calls = 0
        self.input_chars = 0
        self.files_written: list[str] = []
        self.commands: list[str] = []
        self.file_tool_failures = 0
        """write_file / edit_file calls that answered with an error (in this process)."""
        self._tools: dict[UUID, str] = {}

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        batch = messages[0] if messages else []
        chars = message_chars(batch)
        with self._lock:
            self.model_calls += 1
            self.input_chars = chars
            n = self.model_calls
        self.emit(
            "model.call",
            f"model call {n} ({chars} chars in {len(batch)} messages)",
            {"call": n, "input_chars": chars, "messages": len(batch)},
        )
        self.on_progress()

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            message = response.generations[0][0].message
        except (AttributeError, IndexError):
            return
        calls = [
            {"name": c["name"], "args": safe(c.get("args"), 300)}
            for c in getattr(message, "tool_calls", []) or []
        ]
        usage = getattr(message, "usage_metadata", None) or {}
        text = message.content if isinstance(message.content, str) else str(message.content)
        data: dict[str, Any] = {"text": safe(text, EVENT_TEXT_LIMIT), "tool_calls": calls}
        if usage:
            data["tokens"] = {
                k: usage.get(k)
                for k in ("input_tokens", "output_tokens", "total_tokens")
                if k in usage
            }
        summary = ", ".join(c["name"] for c in calls) if calls else safe(text, 120)
        self.emit("model.output", f"→ {summary}" if calls else summary, data)
        output = getattr(response.generations[0][0], "generation_info", None) or {}
        for found in output.get("replay_divergences") or ():
            self.emit(
                EventType.REPLAY_DIVERGENCE,
                f"call {found['call']}: {found['where']} differs from the recording "
                f"({found['kind']}; {output.get('replay_total')} so far)",
                {**found, "total": output.get("replay_total")},
            )

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
        args = inputs if inputs is not None else input_str
        with self._lock:
            self._tools[run_id] = name
            self.tool_calls += 1
            if name in FILE_TOOLS and isinstance(inputs, dict):
                path = inputs.get("file_path") or inputs.get("path")
                if path and path not in self.files_written:
                    self.files_written.append(str(path))
            if name == "execute" and isinstance(inputs, dict) and inputs.get("command"):
                self.commands.append(safe(inputs["command"], 200))
        self.emit(
            "tool.call",
            f"{name}({safe(args, 160)})",
            {"tool": name, "args": safe(args, EVENT_TEXT_LIMIT)},
        )
        self.on_progress()

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        name = self._tools.pop(run_id, "tool")
        content = getattr(output, "content", output)
        if name in FILE_TOOLS and str(content).startswith("Error"):
            with self._lock:
                self.file_tool_failures += 1
        self.emit(
            "tool.result",
            f"{name} → {safe(content, 160)}",
            {"tool": name, "result": safe(content, EVENT_TEXT_LIMIT)},
        )

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        name = self._tools.pop(run_id, "tool")
        if isinstance(error, GraphBubbleUp):  # an interrupt, not an error
            return
        self.emit(
            "tool.result",
            f"{name} failed: {safe(str(error), 160)}",
            {"tool": name, "error": safe(str(error), EVENT_TEXT_LIMIT)},
        )
