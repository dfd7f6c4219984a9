"""Helpers of the layer-3 tests: the scripted chat server, update collection, stage tasks.

The only stand-in in these tests is the model: the offline scientist model, or `ChatServer`,
a tiny OpenAI-compatible HTTP server (standard library, 127.0.0.1, a random port, its own
thread) that answers `POST /v1/chat/completions` from a per-test script, as JSON or as
`stream=True` server-sent events. Everything else — deepagents graphs, SQLite checkpoints, the
shell, the event bus — is the real thing.
"""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langgraph.graph import END, START, MessagesState, StateGraph

from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.types import WorkerSpec, WorkerUpdate
from lightscientist_jupyter.supervisor.prompts import worker_message
from lightscientist_jupyter.supervisor.task import StageTask
from lightscientist_jupyter.workspace import Workspace

GOAL = "Does learning-rate warmup help a small MLP?"


# ----------------------------------------------------------------------------- the chat server

def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """A scripted reply: one tool call."""
    return {"tool": name, "args": args}


def answer(text: str) -> dict[str, Any]:
    """A scripted reply: a final text answer."""
    return {"text": text}


def http_error(status: int, message: str = "scripted failure") -> dict[str, Any]:
    """A scripted reply: an HTTP error status."""
    return {"status": status, "message": message}


class ChatServer:
    """An OpenAI-compatible chat-completions server that plays a script, one reply per request.

    When the script runs out, the last reply repeats (so `[http_error(500)]` always fails).
    `requests` keeps every request body it received, in order.
    """

    USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server._answer(self, body)

            def log_message(self, *args: Any) -> None:  # keep the test output quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True, name="chat-server")
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def play(self, *replies: dict[str, Any]) -> ChatServer:
        self.script = list(replies)
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ answering

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            n = len(self.requests)
            self.requests.append(body)
            reply = self.script[min(n, len(self.script) - 1)] if self.script else answer("ok")
        if handler.path.rstrip("/") != "/v1/chat/completions":
            self._send(handler, 404, {"error": {"message": f"no route {handler.path}"}})
        elif "status" in reply:
            self._send(handler, reply["status"], {"error": {"message": reply["message"],
                                                            "type": "server_error"}})
        elif body.get("stream"):
            self._stream(handler, reply, n)
        else:
            self._send(handler, 200, self._completion(reply, n, body))

    def _completion(self, reply: dict[str, Any], n: int, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
        finish = "stop"
        if "tool" in reply:
            message["tool_calls"] = [{"id": f"call_{n}", "type": "function", "function": {
                "name": reply["tool"], "arguments": json.dumps(reply["args"])}}]
            finish = "tool_calls"
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0,
                "model": body.get("model", "m"), "usage": self.USAGE,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}]}

    def _stream(self, handler: BaseHTTPRequestHandler, reply: dict[str, Any], n: int) -> None:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            data = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                    "model": "m", "choices": [{"index": 0, "delta": delta,
                                               "finish_reason": finish}]}
            return f"data: {json.dumps(data)}\n\n".encode()

        parts = [chunk({"role": "assistant", "content": ""})]
        if "tool" in reply:
            arguments = json.dumps(reply["args"])
            half = len(arguments) // 2  # the arguments arrive in two pieces, as real servers do
            parts.append(chunk({"tool_calls": [{"index": 0, "id": f"call_{n}", "type": "function",
                                                "function": {"name": reply["tool"],
                                                             "arguments": arguments[:half]}}]}))
            parts.append(chunk({"tool_calls": [{"index": 0,
                                                "function": {"arguments": arguments[half:]}}]}))
            parts.append(chunk({}, "tool_calls"))
        else:
            text = reply["text"]
            parts += [chunk({"content": text[:3]}), chunk({"content": text[3:]}),
                      chunk({}, "stop")]
        parts.append(b"data: [DONE]\n\n")
        payload = b"".join(parts)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


# ----------------------------------------------------------------------------- updates

class Updates:
    """Collects the `WorkerUpdate`s that worker threads report."""

    def __init__(self) -> None:
        self.items: list[WorkerUpdate] = []
        self._lock = threading.Lock()

    def __call__(self, update: WorkerUpdate) -> None:
        with self._lock:
            self.items.append(update)

    def of(self, worker_id: str) -> list[WorkerUpdate]:
        with self._lock:
            return [u for u in self.items if u.worker_id == worker_id]

    def statuses(self, worker_id: str) -> list[str]:
        return [u.status for u in self.of(worker_id)]


# ----------------------------------------------------------------------------- tasks, checkpoints

def stage_task(table: StageTable, ws: Workspace, stage: str, visit: int = 1) -> StageTask:
    s = table[stage]
    return StageTask(goal=GOAL, stage=stage, skill_path=str(s.skill), outputs=s.outputs,
                     default_next=s.next, allowed_next=s.allowed, workspace=str(ws.root),
                     process_md=str(ws.process_md), visit=visit, task_id=f"{stage}#{visit}")


def copy_skill(ws: Workspace, task: StageTask) -> str:
    """What `RuntimeSupervisor._copy_skill` does: workers read only the workspace."""
    target = ws.state_dir / "skills" / f"{task.stage}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(task.skill_path, target)
    return f"/.lightscientist/skills/{task.stage}.md"


def stage_spec(table: StageTable, ws: Workspace, stage: str, visit: int = 1) -> WorkerSpec:
    """The spec layer 2 would hand down for one worker of `stage`."""
    task = stage_task(table, ws, stage, visit)
    message = worker_message(task, skill=copy_skill(ws, task), digest="")
    return WorkerSpec(message=message, stage=stage, task_id=task.task_id, goal=GOAL)


def plain_spec(message: str = "Do the task.", **fields: Any) -> WorkerSpec:
    """A worker spec for a scripted real-model worker (no stage table involved)."""
    return WorkerSpec(message=message, stage=fields.pop("stage", "custom.stage"), **fields)


def checkpoint_messages(runtime: ExecutionRuntime, thread_id: str) -> list[Any]:
    """The messages a session's checkpoints hold, read back through a plain LangGraph graph on
    the same saver (checkpoints store changed channels only, so the graph reassembles them)."""
    graph = StateGraph(MessagesState)
    graph.add_node("noop", lambda state: {})
    graph.add_edge(START, "noop")
    graph.add_edge("noop", END)
    state = graph.compile(checkpointer=runtime.saver).get_state(
        {"configurable": {"thread_id": thread_id}})
    return list(state.values.get("messages", []))


def finish(runtime: ExecutionRuntime, worker_id: str, timeout: float = 30.0) -> dict[str, Any]:
    """Wait for the worker's current turn to end; returns its record."""
    assert runtime.wait(worker_id, timeout), f"worker {worker_id} still running after {timeout} s"
    return runtime.get(worker_id)
