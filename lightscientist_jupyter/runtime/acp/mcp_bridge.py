"""The MCP server a coding agent starts: a pipe from its stdio to its worker's tool socket.

An ACP agent is given our tools as a stdio MCP server in `session/new` (every agent must
support those): this file, run by the kernel's interpreter as `python -I mcp_bridge.py
SOCKET`, inside the agent's sandbox. It speaks no MCP itself. It connects to the Unix socket
its worker's runtime listens on (`runtime.acp.tool_server`), sends the token it was given in
`LIGHTSCIENTIST_TOOLS_TOKEN` as its first line, then copies lines both ways: the agent's
requests to the runtime, the runtime's answers back.

It imports nothing but the standard library (and nothing of the package: inside the sandbox
only this file, the interpreter and its standard library need to be readable), reads no
other variable, and ends when either side closes. A socket it cannot reach is one line on
stderr and exit code 2, a connection the runtime cut off one line and exit code 1 (the agent
shows the server as failed), never a traceback.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

TOKEN_VARIABLE = "LIGHTSCIENTIST_TOOLS_TOKEN"


def connect(path: str) -> socket.socket:
    """A connection to the socket at `path`, through its folder's descriptor: a Unix socket's
    address is at most 107 bytes, and a workspace's worker folder may be deeper than that."""
    folder, name = os.path.split(path)
    fd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(f"/proc/self/fd/{fd}/{name}")
    finally:
        os.close(fd)
    return sock


def _to_socket(sock: socket.socket) -> None:
    """The agent's lines to the runtime, until the agent closes our stdin."""
    stdin = sys.stdin.buffer
    try:
        for line in stdin:
            sock.sendall(line)
    except OSError:
        pass  # the runtime closed: the other direction ends too
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: mcp_bridge.py SOCKET (the token in $LIGHTSCIENTIST_TOOLS_TOKEN)\n")
        return 2
    token = os.environ.get(TOKEN_VARIABLE, "")
    try:
        sock = connect(argv[0])
        sock.sendall(token.encode("ascii", "replace") + b"\n")
    except OSError as exc:
        sys.stderr.write(f"lightscientist tools: cannot reach {argv[0]}: {exc.strerror}\n")
        return 2
    threading.Thread(target=_to_socket, args=(sock,), daemon=True).start()
    stdout = sys.stdout.buffer
    try:
        with sock.makefile("rb") as answers:
            for line in answers:
                stdout.write(line)
                stdout.flush()
    except OSError as exc:  # the runtime ended the connection (its turn ended, or no token)
        sys.stderr.write(f"lightscientist tools: the connection ended ({exc.strerror})\n")
        return 1
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # at once: the thread copying stdin may hold stdin's lock, and an interpreter's shutdown
    # that waits for that lock aborts the process
    os._exit(code)
