"""A deterministic coding agent speaking the Agent Client Protocol on stdio, for the tests.

Run as a subprocess (`python tests/support/fake_acp_agent.py [FLAGS]`); built with the agent
side of `agent-client-protocol` (`acp.run_agent`). It answers `initialize`, `session/new`,
`session/load`, `session/prompt` and `session/cancel`. A prompt is its whole script: it acts
on the lines of the task text that start with a verb below and ignores the rest, so the
same text always gives the same session updates and the same files.

    write PATH: TEXT      write TEXT (and a newline) to PATH, relative to the session's cwd
    ask                   ask `session/request_permission` before each write (allow / reject),
                          with the edit's diff and its file
    env PATH              write the names and values of its environment to PATH, one a line
    read PATH: OUT        try to read PATH (any path, as the agent's own process can); write
                          what it read, or why it could not, to OUT
    run OUT: COMMAND      run COMMAND with /bin/sh in the session's cwd (as an agent's own
                          terminal does); write its output to OUT
    sleep SECONDS         wait (a cancel ends the wait and the turn: stop reason `cancelled`)
    stubborn SECONDS      wait, deaf to a cancel (its process group has to be ended)
    usage IN OUT          report that many input and output tokens in the prompt's answer
    say TEXT              its last message (default: which files it wrote)
    exit CODE             end the process at once with CODE, in the middle of the turn
    input PATH: QUESTION  ask QUESTION with the `request_input` tool of the MCP server the
                          session was given; write its answer to PATH
    call TOOL: JSON       call that server's TOOL with the JSON object of arguments; each
                          answer written to `notes/call-N.txt`
    tools PATH            write the tools that server lists (`tools/list`, as JSON) to PATH
    complete NEXT: TEXT   deliver with that server's `complete_stage`: TEXT the summary, the
                          header's outputs, NEXT the next stage; several lines call it in turn
                          (after the writes), each answer written to `notes/complete-N.txt`

With no `write` line, it writes each path of the task header's `outputs: [...]` line.
Each turn sends, in order: a plan, a message chunk, for each write a tool call and its
result, the plan again (every entry completed), and its last message. It knows our tools
only as any agent would: the stdio MCP servers of `session/new` / `session/load`, started
as their entries say (its own environment, and theirs), spoken to in MCP's JSON-RPC.

Flags, each a way an agent goes wrong: `--exit CODE` (exit at start, after a line on
stderr), `--garbage` (write a line that is not JSON-RPC, then nothing), `--silent` (read
everything, answer nothing), `--no-load` (advertise no `session/load`). `--model NAME` says
its sessions run the model NAME (a config option of category `model`, as Codex and Claude
Code name theirs).

Sessions are kept in `$HOME/.fake-acp/<session id>.json` (the prompts and the replies), so a
new process can `session/load` one, replaying its history as `session/update`s first.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import acp
from acp import schema

NAME, VERSION = "fake-acp-agent", "1.0.0"
_OUTPUTS = re.compile(r"^outputs:\s*(\[.*\])\s*$", re.MULTILINE)


class FakeAgent:
    """The agent side: one instance per process, any number of sessions."""

    def __init__(self, *, load: bool = True, model: str | None = None):
        self.load = load
        self.model = model
        self.client: Any = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.cancelled: dict[str, asyncio.Event] = {}
        self.servers: dict[str, list[Any]] = {}
        """The MCP servers each session was given."""

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, acp.PROTOCOL_VERSION),
            agent_info=schema.Implementation(name=NAME, title="Fake ACP agent", version=VERSION),
            agent_capabilities=schema.AgentCapabilities(
                load_session=self.load,
                prompt_capabilities=schema.PromptCapabilities(embedded_context=True),
            ),
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> schema.NewSessionResponse:
        session_id = f"fake-{uuid.uuid4().hex[:12]}"
        self.sessions[session_id] = {"cwd": cwd, "history": []}
        self.servers[session_id] = list(mcp_servers or [])
        self.cancelled[session_id] = asyncio.Event()
        self._save(session_id)
        return schema.NewSessionResponse(session_id=session_id, config_options=self._options())

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> schema.LoadSessionResponse:
        path = _store() / f"{session_id}.json"
        if not self.load or not path.is_file():
            raise acp.RequestError.resource_not_found(session_id)
        session = json.loads(path.read_text(encoding="utf-8"))
        session["cwd"] = cwd
        self.sessions[session_id] = session
        self.servers[session_id] = list(mcp_servers or [])
        self.cancelled[session_id] = asyncio.Event()
        for role, text in session["history"]:
            update = (
                acp.update_user_message_text(text)
                if role == "user"
                else acp.update_agent_message_text(text)
            )
            await self.client.session_update(session_id=session_id, update=update)
        return schema.LoadSessionResponse(config_options=self._options())

    def _options(self) -> list[Any] | None:
        """Its sessions' config options: the model, when it names one."""
        if self.model is None:
            return None
        choice = schema.SessionConfigSelectOption(value=self.model, name=self.model)
        return [
            schema.SessionConfigOptionSelect(
                id="model",
                name="Model",
                category="model",
                type="select",
                current_value=self.model,
                options=[choice],
            )
        ]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if session_id in self.cancelled:
            self.cancelled[session_id].set()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(session_id)
        cancelled = self.cancelled[session_id]
        cancelled.clear()
        text = "\n".join(getattr(block, "text", "") for block in prompt)
        session["history"].append(("user", text))
        self._save(session_id)
        turn = _Turn(self.client, session_id, Path(session["cwd"]), cancelled)
        turn.servers = self.servers.get(session_id, [])
        try:
            reply, stop = await turn.run(text)
        finally:
            await turn.close()
        session["history"].append(("agent", reply))
        self._save(session_id)
        usage = _directive(text, "usage")
        if usage:
            given, taken = (int(n) for n in usage[-1].split())
            tokens = schema.Usage(
                input_tokens=given, output_tokens=taken, total_tokens=given + taken
            )
            return schema.PromptResponse(stop_reason=stop, usage=tokens)
        return schema.PromptResponse(stop_reason=stop)

    def _save(self, session_id: str) -> None:
        folder = _store()
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.sessions[session_id])
        (folder / f"{session_id}.json").write_text(text, encoding="utf-8")


class _Turn:
    """One prompt turn: its updates, its files, its answer."""

    def __init__(self, client: Any, session_id: str, cwd: Path, cancelled: asyncio.Event):
        self.client = client
        self.session_id = session_id
        self.cwd = cwd
        self.cancelled = cancelled
        self.servers: list[Any] = []
        self.mcp: McpClient | None = None

    async def tools(self) -> McpClient:
        """Its first stdio MCP server, started (and initialized) at its first use."""
        if self.mcp is None:
            stdio = [s for s in self.servers if isinstance(s, schema.McpServerStdio)]
            if not stdio:
                raise RuntimeError("this session was given no stdio MCP server")
            self.mcp = await McpClient.start(stdio[0], self.cwd)
        return self.mcp

    async def close(self) -> None:
        if self.mcp is not None:
            await self.mcp.close()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Call a tool as an agent does: a tool call update, the call, its result."""
        call_id = f"mcp-{uuid.uuid4().hex[:6]}"
        await self.send(acp.start_tool_call(call_id, f"lightscientist: {name}", kind="other"))
        answer = await (await self.tools()).call(name, arguments)
        status = "failed" if answer.get("isError") else "completed"
        text = "\n".join(c.get("text", "") for c in answer.get("content") or [])
        await self._result(call_id, status, text)
        return text

    async def send(self, update: Any) -> None:
        await self.client.session_update(session_id=self.session_id, update=update)

    async def run(self, text: str) -> tuple[str, str]:
        writes = [_split_write(line) for line in _directive(text, "write")]
        if not writes:
            found = _OUTPUTS.search(text)
            paths = json.loads(found.group(1)) if found else []
            writes = [(p, f"{p}, written by {NAME}") for p in paths]
        steps = ["read the task", *(f"write {path}" for path, _ in writes), "report"]
        await self.send(acp.update_plan([acp.plan_entry(s) for s in steps]))
        first = next((line for line in text.splitlines() if line.strip()), "")
        await self.send(acp.update_agent_message_text(f"Working on: {first.strip()}"))
        for line in _directive(text, "env"):
            shown = "".join(f"{k}={v}\n" for k, v in sorted(os.environ.items()))
            self._write(line.strip(), shown)
        for argument in _directive(text, "read"):
            path, out = _split_write(argument)
            try:
                seen = f"read {path}: {Path(path).read_text(encoding='utf-8')}"
            except OSError as exc:
                seen = f"cannot read {path}: {exc.strerror}"
            self._write(out, seen + "\n")
        for argument in _directive(text, "run"):
            out, command = _split_write(argument)
            ran = await asyncio.create_subprocess_shell(
                command,
                cwd=self.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            output, _ = await ran.communicate()
            self._write(out, output.decode("utf-8", "replace"))
        for path in _directive(text, "tools"):
            listed = await (await self.tools()).request("tools/list", {})
            self._write(path, json.dumps(listed["tools"]))
        for n, argument in enumerate(_directive(text, "call"), start=1):
            name, arguments = _split_write(argument)
            self._write(f"notes/call-{n}.txt", await self.call_tool(name, json.loads(arguments)))
        for argument in _directive(text, "input"):
            path, question = _split_write(argument)
            self._write(path, await self.call_tool("request_input", {"question": question}))
        for code in _directive(text, "exit"):
            sys.stderr.write(f"{NAME}: exiting with {code} in the middle of a turn\n")
            sys.stderr.flush()
            os._exit(int(code))
        for seconds in _directive(text, "sleep"):
            try:
                await asyncio.wait_for(self.cancelled.wait(), float(seconds))
            except TimeoutError:
                pass
        for seconds in _directive(text, "stubborn"):
            await asyncio.sleep(float(seconds))
        if self.cancelled.is_set():
            return "cancelled before writing anything", "cancelled"
        wrote: list[str] = []
        for n, (path, content) in enumerate(writes, start=1):
            if await self._write_step(
                f"write-{n}", path, content, ask=bool(_directive(text, "ask"))
            ):
                wrote.append(path)
            if self.cancelled.is_set():
                return f"cancelled after writing {', '.join(wrote) or 'nothing'}", "cancelled"
        found = _OUTPUTS.search(text)
        outputs = json.loads(found.group(1)) if found else []
        for n, argument in enumerate(_directive(text, "complete"), start=1):
            target, summary = _split_write(argument)
            delivery = {"summary": summary, "outputs": outputs, "next_stage": target}
            answer = await self.call_tool("complete_stage", delivery)
            self._write(f"notes/complete-{n}.txt", answer + "\n")
        done = [acp.plan_entry(s, status="completed") for s in steps]
        await self.send(acp.update_plan(done))
        said = _directive(text, "say")
        reply = said[-1] if said else f"Wrote {', '.join(wrote) or 'nothing'}."
        await self.send(acp.update_agent_message_text(reply))
        return reply, "end_turn"

    async def _write_step(self, call_id: str, path: str, content: str, *, ask: bool) -> bool:
        where = self.cwd / path
        await self.send(
            acp.start_edit_tool_call(call_id, f"Write {path}", str(where), content + "\n")
        )
        if ask:
            # as Claude Code's and Codex's adapters ask: the edit's diff and its file
            before = where.read_text(encoding="utf-8") if where.is_file() else None
            edit = schema.FileEditToolCallContent(
                type="diff", path=str(where), old_text=before, new_text=content + "\n"
            )
            answer = await self.client.request_permission(
                session_id=self.session_id,
                tool_call=schema.ToolCallUpdate(
                    tool_call_id=call_id,
                    title=f"Write {path}",
                    kind="edit",
                    status="pending",
                    content=[edit],
                    locations=[schema.ToolCallLocation(path=str(where))],
                ),
                options=[
                    schema.PermissionOption(
                        option_id="allow", name="Allow once", kind="allow_once"
                    ),
                    schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
            outcome = answer.outcome
            if getattr(outcome, "option_id", None) != "allow":
                await self._result(call_id, "failed", f"permission refused for {path}")
                return False
        problem = self._write(path, content + "\n")
        if problem:
            await self._result(call_id, "failed", problem)
            return False
        await self._result(call_id, "completed", f"wrote {len(content) + 1} bytes to {path}")
        return True

    def _write(self, path: str, content: str) -> str | None:
        where = (self.cwd / path).resolve()
        if not where.is_relative_to(self.cwd.resolve()):
            return f"{path} is outside the session's folder"
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(content, encoding="utf-8")
        return None

    async def _result(self, call_id: str, status: str, text: str) -> None:
        content = [acp.tool_content(acp.text_block(text))]
        await self.send(acp.update_tool_call(call_id, status=status, content=content))


class McpClient:
    """A stdio MCP server the agent started: MCP's JSON-RPC, one message a line."""

    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.next_id = 0

    @classmethod
    async def start(cls, server: schema.McpServerStdio, cwd: Path) -> McpClient:
        env = {**os.environ, **{v.name: v.value for v in server.env}}
        process = await asyncio.create_subprocess_exec(
            server.command,
            *server.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=env,
        )
        client = cls(process)
        await client.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": NAME, "version": VERSION},
            },
        )
        await client.notify("notifications/initialized")
        return client

    async def notify(self, method: str) -> None:
        assert self.process.stdin is not None
        line = json.dumps({"jsonrpc": "2.0", "method": method}) + "\n"
        self.process.stdin.write(line.encode())
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the MCP server closed without answering {method}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']['message']}")
        return dict(answer["result"])

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


def _directive(text: str, verb: str) -> list[str]:
    """The arguments of every line of `text` that starts with `verb`, in order."""
    found = []
    for line in text.splitlines():
        head, _, rest = line.strip().partition(" ")
        if head == verb:
            found.append(rest.strip())
    return found


def _split_write(argument: str) -> tuple[str, str]:
    path, _, content = argument.partition(":")
    return path.strip(), content.strip()


def _store() -> Path:
    return Path(os.environ.get("HOME") or ".") / ".fake-acp"


def main(argv: list[str]) -> int:
    if "--exit" in argv:
        sys.stderr.write(f"{NAME}: cannot start (a test asked it to exit)\n")
        return int(argv[argv.index("--exit") + 1])
    if "--garbage" in argv:
        print("Hello! I am a chat bot, not an ACP agent.", flush=True)
        time.sleep(600)
        return 0
    if "--silent" in argv:
        for _line in sys.stdin:
            pass
        return 0
    model = argv[argv.index("--model") + 1] if "--model" in argv else None
    asyncio.run(acp.run_agent(FakeAgent(load="--no-load" not in argv, model=model)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
