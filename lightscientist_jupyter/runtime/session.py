"""One persistent worker session: a deepagents graph on a thread id, run turn by turn.

A turn runs on its own daemon thread (`start`/`resume` never block). When it ends, the
session's status is read back from the checkpoint alone — a pending interrupt means
`waiting`; the lifecycle call that ended the turn means `completed`, `background` or
`cancelled` — so the same rules hold in a process that picked the session up after a crash.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command

from lightscientist_jupyter.runtime.lifecycle import CANCEL_NOTICE, stop_call
from lightscientist_jupyter.runtime.observe import SessionObserver
from lightscientist_jupyter.runtime.record import save_record
from lightscientist_jupyter.runtime.redact import safe
from lightscientist_jupyter.runtime.types import FINAL_STATES, Progress, WorkerUpdate

RECURSION_LIMIT = 400


class WorkerSession:
    """A worker's graph, record and turn thread. Built and driven by `ExecutionRuntime`."""

    def __init__(self, record: dict[str, Any], folder: Path, *,
                 emit: Callable[..., None], report: Callable[[WorkerUpdate], None]):
        self.record = record
        self.folder = folder
        self.graph: Any = None
        self.cancel = threading.Event()
        self.hard_stop = threading.Event()
        self.finished = threading.Event()
        self.finished.set()
        self.removed = False
        self._emit = emit
        self._report = report
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self.observer = SessionObserver(self._emit_event, self._progress)
        self.observer.files_written = list(record.get("files_written") or [])
        self.observer.commands = list(record.get("commands") or [])
        progress = record.get("progress") or {}
        self.observer.model_calls = progress.get("model_calls", 0)
        self.observer.tool_calls = progress.get("tool_calls", 0)
        self._steps = progress.get("steps", 0)

    # ------------------------------------------------------------------ properties

    @property
    def id(self) -> str:
        return self.record["id"]

    @property
    def status(self) -> str:
        return self.record["status"]

    @property
    def config(self) -> dict[str, Any]:
        return {"configurable": {"thread_id": self.record["thread_id"]},
                "callbacks": [self.observer], "recursion_limit": RECURSION_LIMIT}

    def progress(self) -> Progress:
        o = self.observer
        return Progress(model_calls=o.model_calls, tool_calls=o.tool_calls,
                        steps=self._steps, input_chars=o.input_chars)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ------------------------------------------------------------------ turns

    def start_turn(self, inp: Any, *, resumed: bool) -> None:
        """Run one turn of the graph on a new thread."""
        with self._lock:
            self.finished.clear()
            self._set(status="running", question=None, check_after_s=None)
            self._emit_event("session.start", ("resumed" if resumed else "started")
                             + f" ({self.record.get('role')}"
                             + (f", stage {self.record['stage']})" if self.record.get("stage") else ")"),
                             {"resumed": resumed, "role": self.record.get("role")})
            self._thread = threading.Thread(target=self._turn, args=(inp,), daemon=True,
                                            name=f"ls-worker-{self.id}")
            self._thread.start()

    def _turn(self, inp: Any) -> None:
        try:
            for chunk in self.graph.stream(inp, self.config, stream_mode="updates"):
                if isinstance(chunk, dict) and "__interrupt__" not in chunk:
                    self._steps += len(chunk)
            self._conclude()
        except Exception as exc:  # a worker failure never escapes its thread
            self._fail(f"{type(exc).__name__}: {safe(str(exc), 600)}")
        finally:
            self.finished.set()

    def _conclude(self) -> None:
        snapshot = self.graph.get_state({"configurable": {"thread_id": self.record["thread_id"]}})
        messages = snapshot.values.get("messages", []) if snapshot.values else []
        with self._lock:
            if self.status in FINAL_STATES:
                return
            if snapshot.interrupts:
                value = snapshot.interrupts[0].value
                question = value.get("question") if isinstance(value, dict) else str(value)
                self._set(status="waiting", question=question)
                self._emit_event("worker.waiting", f"asks: {safe(question, 200)}",
                                 {"question": safe(question, 1000)})
                self._send(question=question)
                return
            call = stop_call(messages)
            name = call["name"] if call else None
            if self.cancel.is_set():
                return  # `ExecutionRuntime.cancel` settles the final state
            if name == "complete_stage":
                args = call["args"]
                result = {"kind": "complete_stage", "summary": str(args.get("summary", "")),
                          "outputs": [str(o) for o in args.get("outputs") or []],
                          "next_stage": args.get("next_stage")}
                self._set(status="completed", result=result)
            elif name == "suspend":
                args = call["args"]
                after = float(args.get("check_after_s") or 30.0)
                self._set(status="background", check_after_s=after,
                          result={"kind": "suspend", "reason": str(args.get("reason", ""))})
                self._emit_event("worker.background", f"suspended: {args.get('reason', '')} "
                                 f"(check after {after:g} s)",
                                 {"reason": str(args.get("reason", "")), "check_after_s": after})
            else:
                text = _last_ai_text(messages)
                if self.record.get("role") == "supervisor":
                    self._set(status="background", result={"kind": "reply", "text": text})
                else:
                    self._set(status="completed", result={"kind": "final_message", "text": text})
            self._send(check_after_s=self.record.get("check_after_s"))
            self._emit_event("session.end", f"turn ended: {self.status}",
                             {"status": self.status})

    def _fail(self, error: str) -> None:
        with self._lock:
            if self.status in FINAL_STATES:
                return
            self._set(status="failed", error=error)
            self._emit_event("session.end", f"failed: {error}", {"status": "failed",
                                                               "error": error})
            self._send(error=error)

    # ------------------------------------------------------------------ cancellation

    def finalize_input(self) -> Any:
        """The input that asks an idle session to call `finalize_cancel`."""
        if self.status == "waiting":
            return Command(resume=CANCEL_NOTICE)
        return {"messages": [HumanMessage(CANCEL_NOTICE)]}

    def finalize_notes(self) -> str | None:
        """The notes of a `finalize_cancel` call that ended the latest turn, if any."""
        snapshot = self.graph.get_state({"configurable": {"thread_id": self.record["thread_id"]}})
        call = stop_call(snapshot.values.get("messages", []) if snapshot.values else [])
        if call and call["name"] == "finalize_cancel":
            return str(call["args"].get("notes", ""))
        return None

    def settle_cancelled(self, result: dict[str, Any]) -> None:
        with self._lock:
            self._set(status="cancelled", result=result)
            self._emit_event("worker.cancelled", result.get("notes", "cancelled")[:200],
                             {"result": result})
            self._send()

    # ------------------------------------------------------------------ record keeping

    def _set(self, **changes: Any) -> None:
        self.record.update(changes)
        self.record["progress"] = self.progress().to_dict()
        self.record["files_written"] = list(self.observer.files_written)
        self.record["commands"] = list(self.observer.commands)
        self.record["updated_at"] = time.time()
        save_record(self.folder, self.record)

    def _send(self, **extra: Any) -> None:
        r = self.record
        self._report(WorkerUpdate(worker_id=self.id, status=r["status"], progress=self.progress(),
                                  stage=r.get("stage"), task_id=r.get("task_id"),
                                  result=r.get("result"), at=time.time(), **extra))

    def _progress(self) -> None:
        self._send()

    def _emit_event(self, type: str, message: str, data: dict[str, Any]) -> None:
        self._emit(type, message, worker_id=self.id, stage=self.record.get("stage"),
                   task_id=self.record.get("task_id"), data=data)


def _last_ai_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, AIMessage) and isinstance(message.content, str):
            return message.content.strip()
    return ""
