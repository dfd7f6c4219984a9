"""Our tools served to one coding agent over MCP: a Unix socket of its worker, and a token.

An ACP agent gets MCP servers in `session/new` (and `session/load`). Every agent must support
a stdio server (a command it starts), and only that one can reach us from inside its sandbox
(an HTTP or SSE server, for agents that advertise `mcpCapabilities`, would need the host's
network, which the sandbox does not have). So the agent is given `mcp_bridge.py`, run by this
kernel's interpreter, and the bridge connects to this server: a Unix socket in the worker's
home (`workers/<id>/home/`, the one folder of `.lightscientist/` the worker's sandbox binds,
writable, at the same path). What reaches the socket must open with this turn's token (32
random bytes, given to the bridge in its environment by the `session/new` entry): another
worker's sandbox does not see this home at all, and a process of the host that finds the
socket has no token. The socket is `0600`, removed when the turn ends; each turn gets a new
token. The bridge's entry carries no variable but the token (no key of ours), and the bridge,
run with `-I`, reads no other: whatever else of its own environment the agent hands it is
ignored.

The protocol is the small part of MCP a tool server needs, written here: `initialize`,
`ping`, `tools/list` and `tools/call`, newline-delimited JSON-RPC 2.0 as MCP's stdio transport
frames it. The `mcp` package (2.3.0) would bring a web server stack (starlette, uvicorn,
sse-starlette, PyJWT, python-multipart, jsonschema) that a Unix socket does not use, and the
bridge inside the sandbox must import nothing but the standard library anyway.

Every call is served on a thread of its own (a `request_input` may wait for hours while the
agent pings); its tool's failure is a tool result marked `isError` with one line, never a
traceback; each call is a `tool.call` and a `tool.result` event of the worker, redacted like
every other (`data.via = "mcp"`).
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import os
import secrets
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.redact import redact, safe
from lightscientist_jupyter.runtime.acp import mcp_bridge
from lightscientist_jupyter.runtime.session.observe import EVENT_TEXT_LIMIT
from lightscientist_jupyter.vocab import EventType

SERVER_NAME = "lightscientist"
"""The server's name in `session/new` (agents show tools as `mcp__lightscientist__…`)."""
SOCKET_NAME = "lightscientist-tools.sock"
BRIDGE = Path(mcp_bridge.__file__).resolve()
"""The script the agent starts (readable inside its sandbox: `acp.launch.agent_sandbox`)."""
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""MCP versions whose tool messages this server speaks, newest first."""
TOKEN_WAIT_S = 5.0
"""How long a connection may take to send its token."""

Emit = Callable[[str, str, dict[str, Any]], None]


@dataclasses.dataclass(frozen=True)
class ToolAnswer:
    """What a tool call gives the agent: text, and whether it is an error it should act on."""

    text: str
    error: bool = False


@dataclasses.dataclass(frozen=True)
class McpTool:
    """One tool as MCP lists it, and what calling it does."""

    name: str
    description: str
    input_schema: dict[str, Any]
    """Its arguments' JSON schema (`inputSchema`)."""
    call: Callable[[dict[str, Any]], ToolAnswer]

    def listed(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }


class ToolServer:
    """The MCP server of one worker's turn, on a Unix socket in `folder`.

    Args:
        folder: the worker's home (bound into its sandbox at the same path).
        tools: what it serves.
        agent: the agent's name (in events and in lines of failure).
        emit: the worker's layer-3 events (`emit(type, message, data)`).
        version: our version, as `initialize` tells it.
    """

    def __init__(
        self, folder: Path, tools: Sequence[McpTool], *, agent: str, emit: Emit, version: str
    ):
        self.folder = folder
        self.tools = {tool.name: tool for tool in tools}
        self.agent = agent
        self.emit = emit
        self.version = version
        self.token = secrets.token_hex(32)
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()

    @property
    def path(self) -> Path:
        return self.folder / SOCKET_NAME

    def start(self) -> None:
        """Listen on the socket (a socket of an earlier turn is replaced)."""
        mkdirs(self.folder)
        with NO_LINKS.open_dir(self.folder) as fd:  # a link for the folder is refused
            try:
                os.unlink(SOCKET_NAME, dir_fd=fd)  # whatever a crash, or the agent, left there
            except FileNotFoundError:
                pass
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            # through the folder's descriptor: an address is at most 107 bytes
            listener.bind(f"/proc/self/fd/{fd}/{SOCKET_NAME}")
            os.chmod(SOCKET_NAME, 0o600, dir_fd=fd)
        listener.listen(4)
        self._listener = listener
        threading.Thread(target=self._accept, daemon=True, name="ls-mcp-accept").start()

    def stdio_server(self) -> dict[str, Any]:
        """The server as `session/new` offers it (ACP's `McpServerStdio`, as JSON): the
        bridge, run by this interpreter in isolated mode, given the token and nothing else."""
        return {
            "name": SERVER_NAME,
            "command": sys.executable,
            "args": ["-I", str(BRIDGE), str(self.path)],
            "env": [{"name": mcp_bridge.TOKEN_VARIABLE, "value": self.token}],
        }

    def close(self) -> None:
        """Stop listening, close every connection, remove the socket."""
        self._closed.set()
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._connections = self._connections, []
        for sock in [*([listener] if listener else []), *connections]:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        try:
            with NO_LINKS.open_dir(self.folder) as fd:
                os.unlink(SOCKET_NAME, dir_fd=fd)
        except OSError:
            pass  # gone already

    # ------------------------------------------------------------------ connections

    def _accept(self) -> None:
        while not self._closed.is_set():
            listener = self._listener
            if listener is None:
                return
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                if self._closed.is_set():
                    conn.close()
                    return
                self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        """One bridge: its token first, then its requests, each answered on its own thread."""
        write_lock = threading.Lock()

        def send(message: dict[str, Any]) -> None:
            data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
            with write_lock:
                try:
                    conn.sendall(data)
                except OSError:
                    pass  # the bridge is gone: nobody waits for the answer

        try:
            with conn.makefile("rb") as lines:
                conn.settimeout(TOKEN_WAIT_S)
                given = lines.readline().strip()
                if not hmac.compare_digest(given, self.token.encode("ascii")):
                    return  # not this worker's bridge: nothing is said to it
                conn.settimeout(None)
                for line in lines:
                    if line.strip():
                        self._handle(line, send)
        except OSError:
            pass  # closed, or no token in time
        finally:
            conn.close()

    def _handle(self, line: bytes, send: Callable[[dict[str, Any]], None]) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            send(_error(None, -32700, "parse error: a line that is not JSON"))
            return
        if not isinstance(message, dict) or "method" not in message:
            return  # an answer to a request we never make, or nothing
        method, ident = message["method"], message.get("id")
        if ident is None:
            return  # a notification (`notifications/initialized`, a cancel): nothing to do
        params = message.get("params") or {}
        if method == "tools/call":
            threading.Thread(target=lambda: send(self._call(ident, params)), daemon=True).start()
        elif method == "initialize":
            send(_result(ident, self._initialize(params)))
        elif method == "ping":
            send(_result(ident, {}))
        elif method == "tools/list":
            send(_result(ident, {"tools": [tool.listed() for tool in self.tools.values()]}))
        else:
            send(_error(ident, -32601, f"method not found: {method}"))

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "title": "LightScientist", "version": self.version},
            "instructions": (
                "The tools of the research project whose stage you work. Deliver with "
                "complete_stage; ask with request_input when you cannot decide."
            ),
        }

    def _call(self, ident: Any, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params.get("name") or "")
        tool = self.tools.get(name)
        if tool is None:
            known = ", ".join(self.tools)
            return _error(ident, -32602, f"unknown tool '{safe(name, 80)}'; the tools are: {known}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            return _error(ident, -32602, f"{name}: the arguments must be an object")
        self.emit(
            EventType.TOOL_CALL,
            f"{name}({safe(args, 160)})",
            {"tool": name, "args": safe(args, EVENT_TEXT_LIMIT), "agent": self.agent, "via": "mcp"},
        )
        try:
            answer = tool.call(args)
        except Exception as exc:  # a tool's failure is the agent's to read, in one line
            answer = ToolAnswer(f"{name} failed: {type(exc).__name__}: {safe(str(exc), 600)}", True)
        data: dict[str, Any] = {"tool": name, "agent": self.agent, "via": "mcp"}
        if answer.error:
            data["error"] = safe(answer.text, EVENT_TEXT_LIMIT)
            said = f"{name} failed: {safe(answer.text, 160)}"
        else:
            data["result"] = safe(answer.text, EVENT_TEXT_LIMIT)
            said = f"{name} → {safe(answer.text, 160)}"
        self.emit(EventType.TOOL_RESULT, said, data)
        content = [{"type": "text", "text": redact(answer.text)}]
        return _result(ident, {"content": content, "isError": answer.error})


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
