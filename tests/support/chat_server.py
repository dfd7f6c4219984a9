"""A scripted OpenAI-compatible chat server for tests: the only stand-in for a real model.

`ChatServer` is a tiny HTTP server (standard library, 127.0.0.1 or the address `host` names,
a random port, its own thread) that answers `POST /v1/chat/completions` from a per-test
script, as JSON or as `stream=True` server-sent events, so the real `ChatOpenAI` client
drives our layers. It also answers `POST /v1/responses` (the Responses API, the only one
Codex speaks), streamed, from the same script: what a real coding agent from the npm registry
needs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """A scripted reply: one tool call."""
    return {"tool": name, "args": args}


def tool_calls(*calls: dict[str, Any]) -> dict[str, Any]:
    """A scripted reply: several tool calls in one message (each made with `tool_call`)."""
    return {"tools": list(calls)}


def _calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """A reply's tool calls, with their ids' suffixes (the first call's id is `call_<n>`)."""
    calls = reply.get("tools") or ([reply] if "tool" in reply else [])
    return [{**c, "suffix": f"_{i}" if i else ""} for i, c in enumerate(calls)]


def answer(text: str) -> dict[str, Any]:
    """A scripted reply: a final text answer."""
    return {"text": text}


def http_error(
    status: int, message: str = "scripted failure", *, echo: str | None = None
) -> dict[str, Any]:
    """A scripted reply: an HTTP error status; with `echo` (a header's name) the message
    repeats that header of the request, as a careless provider or proxy does."""
    return {"status": status, "message": message, "echo": echo}


class ChatServer:
    """An OpenAI-compatible chat-completions server that plays a script, one reply per request.

    When the script runs out, the last reply repeats (so `[http_error(500)]` always fails).
    `requests` keeps every request body it received, in order. `answer_with(decide)` replaces
    the script by a function of each request body (for sessions that run side by side).
    """

    USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.script: list[dict[str, Any]] = []
        self.decide: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server._answer(self, body)

            def log_message(self, *args: Any) -> None:  # keep the test output quiet
                pass

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, args=(0.05,), daemon=True, name="chat-server"
        )
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def play(self, *replies: dict[str, Any]) -> ChatServer:
        self.script = list(replies)
        return self

    def answer_with(self, decide: Callable[[dict[str, Any]], dict[str, Any]]) -> ChatServer:
        self.decide = decide
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
        if self.decide is not None:
            reply = self.decide(body)
        route = handler.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/v1/responses"):
            self._send(handler, 404, {"error": {"message": f"no route {handler.path}"}})
        elif "status" in reply:
            message = reply["message"]
            if reply.get("echo"):
                message += f" ({reply['echo']}: {handler.headers.get(reply['echo'])})"
            self._send(
                handler, reply["status"], {"error": {"message": message, "type": "server_error"}}
            )
        elif route == "/v1/responses":
            self._respond(handler, reply, n)
        elif body.get("stream"):
            self._stream(handler, reply, n)
        else:
            self._send(handler, 200, self._completion(reply, n, body))

    def _completion(self, reply: dict[str, Any], n: int, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
        finish = "stop"
        if _calls(reply):
            message["tool_calls"] = [
                {
                    "id": f"call_{n}{c['suffix']}",
                    "type": "function",
                    "function": {"name": c["tool"], "arguments": json.dumps(c["args"])},
                }
                for c in _calls(reply)
            ]
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "m"),
            "usage": self.USAGE,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }

    def _stream(self, handler: BaseHTTPRequestHandler, reply: dict[str, Any], n: int) -> None:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            data = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(data)}\n\n".encode()

        parts = [chunk({"role": "assistant", "content": ""})]
        for i, call in enumerate(_calls(reply)):
            arguments = json.dumps(call["args"])
            half = len(arguments) // 2  # the arguments arrive in two pieces, as real servers do
            parts.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": f"call_{n}{call['suffix']}",
                                "type": "function",
                                "function": {"name": call["tool"], "arguments": arguments[:half]},
                            }
                        ]
                    }
                )
            )
            parts.append(
                chunk({"tool_calls": [{"index": i, "function": {"arguments": arguments[half:]}}]})
            )
        if _calls(reply):
            parts.append(chunk({}, "tool_calls"))
        else:
            text = reply["text"]
            parts += [chunk({"content": text[:3]}), chunk({"content": text[3:]}), chunk({}, "stop")]
        parts.append(b"data: [DONE]\n\n")
        self._send_events(handler, b"".join(parts))

    def _respond(self, handler: BaseHTTPRequestHandler, reply: dict[str, Any], n: int) -> None:
        """The Responses API's stream: the reply's tool calls as `function_call` items, or
        its text as a `message` item (its text in one delta), then `response.completed` with
        the usage."""

        def event(kind: str, **data: Any) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

        items = [
            {
                "type": "function_call",
                "id": f"fc_{n}{c['suffix']}",
                "call_id": f"call_{n}{c['suffix']}",
                "name": c["tool"],
                "arguments": json.dumps(c["args"]),
            }
            for c in _calls(reply)
        ]
        text = reply.get("text") or ""
        if not items:
            content = [{"type": "output_text", "text": text, "annotations": []}]
            items = [{"type": "message", "id": f"msg_{n}", "role": "assistant", "content": content}]
        parts = [event("response.created", response={"id": f"resp_{n}"})]
        for i, item in enumerate(items):
            empty = {"content": []} if item["type"] == "message" else {"arguments": ""}
            parts.append(event("response.output_item.added", output_index=i, item=item | empty))
            if item["type"] == "message":
                parts.append(
                    event(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=i,
                        content_index=0,
                        delta=text,
                    )
                )
            parts.append(event("response.output_item.done", output_index=i, item=item))
        usage = {
            "input_tokens": self.USAGE["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": self.USAGE["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": self.USAGE["total_tokens"],
        }
        parts.append(event("response.completed", response={"id": f"resp_{n}", "usage": usage}))
        self._send_events(handler, b"".join(parts))

    @staticmethod
    def _send_events(handler: BaseHTTPRequestHandler, payload: bytes) -> None:
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
