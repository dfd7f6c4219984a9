"""One coding agent's ACP session, driven from plain threads.

The protocol library is asyncio; the runtime is threads. An `AcpSession` keeps an event loop
on a thread of its own, and its methods block the calling thread until the agent answers:
`start` (`initialize`, then `session/new` in the workspace, or `session/load` of an earlier
session), `prompt` (one turn; it ends with the agent's stop reason, its last message as the
summary and the usage it reported), `cancel` from any other thread (`session/cancel`; past a
grace period the process group is ended), `close`.

Every way an agent fails is one `AgentFailed` line naming the agent and what happened: its
command is missing, it exited (with its code and the last line it wrote on stderr), it wrote
something else than JSON-RPC, it did not answer a request in time, or it refused one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.metadata
import threading
import time
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar, cast

import acp
from acp import schema

from lightscientist_jupyter.errors import AgentFailed
from lightscientist_jupyter.runtime.acp.client import AgentClient, Emit, model_of
from lightscientist_jupyter.runtime.acp.launch import AgentProcess, missing_env
from lightscientist_jupyter.runtime.acp.permissions import AskPermission
from lightscientist_jupyter.runtime.sandbox.spawn import Confinement
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.usage import Usage

T = TypeVar("T")
OUR_VERSION = importlib.metadata.version("lightscientist-jupyter")
"""What `initialize` tells the agent of us (read from the installed distribution: the
package's `__version__` sits above the layers)."""

ANSWER_TIMEOUT_S = 30.0
"""How long an agent may take to answer `initialize`, `session/new` or `session/load`."""
GRACE_S = 5.0
"""How long a cancelled turn may take to end before the agent's process group is ended."""
EXIT_WAIT_S = 2.0
"""How long a closed connection waits for the agent's exit code, to say how it ended."""


@dataclasses.dataclass(frozen=True)
class AgentInfo:
    """What an agent said of itself in `initialize`."""

    name: str
    """Its name (`agentInfo`), or the table's name for it when it gives none."""
    title: str | None
    version: str | None
    protocol_version: int
    capabilities: dict[str, Any]
    """Its `agentCapabilities`, as JSON."""
    missing_env: tuple[str, ...] = ()
    """Variables its table lists that are not set here: it runs without them."""

    @property
    def load_session(self) -> bool:
        return bool(self.capabilities.get("loadSession"))


@dataclasses.dataclass(frozen=True)
class TurnResult:
    """How one prompt turn ended."""

    stop_reason: str
    """`end_turn`, `cancelled`, `max_tokens`, `max_turn_requests` or `refusal`."""
    summary: str
    """The agent's last message."""
    usage: Usage | None
    """The tokens it reported for the turn (`PromptResponse.usage`); None when it reported
    none: "not reported", never zero."""
    tool_calls: int
    """Its tool calls so far in this session."""
    session_cost_usd: float | None = None
    """The session's whole cost so far, when the agent reported one in USD (`usage_update`)."""
    model: str | None = None
    """The model the agent says its session runs (its config option of category `model`)."""


class AcpSession:
    """One agent process and its session, in `workspace`.

    Args:
        spec: the agent, as the stage table declares it.
        workspace: the session's `cwd`.
        home: the agent's `HOME` (its own settings and sessions live there).
        log: where its stderr goes.
        emit: where its layer-3 events go (`emit(type, message, data)`).
        ask: answers its permission requests under `permissions = "ask"`.
        timeout: how long it may take to answer a request other than a prompt.
        grace: how long a cancelled turn may take before its process group is ended.
        sandbox: where its process runs (`launch.agent_sandbox`); None: unsandboxed.
        mcp_servers: the MCP servers its sessions get (`session/new`, `session/load`), as
            ACP's `McpServerStdio` in JSON (`tool_server.ToolServer.stdio_server`).
    """

    def __init__(
        self,
        spec: AgentSpec,
        workspace: Path,
        *,
        home: Path,
        log: Path,
        emit: Emit,
        ask: AskPermission | None = None,
        timeout: float = ANSWER_TIMEOUT_S,
        grace: float = GRACE_S,
        sandbox: Confinement | None = None,
        mcp_servers: Sequence[dict[str, Any]] = (),
    ):
        self.spec = spec
        self.mcp_servers = [schema.McpServerStdio.model_validate(s) for s in mcp_servers]
        self.sandbox = sandbox
        self.workspace = workspace
        self.home = home
        self.log = log
        self.timeout = timeout
        self.grace = grace
        self.client = AgentClient(spec.name, emit, spec.permissions, ask, workspace)
        self.info: AgentInfo | None = None
        self.session_id: str | None = None
        self._process: AgentProcess | None = None
        self._conn: Any = None
        self._cancelled = threading.Event()
        self._turn_over = threading.Event()
        self._turn_over.set()
        self._gate = threading.Lock()
        """Orders a turn's start and a cancel: one of them comes first."""
        self._cancel_next = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, daemon=True, name=f"ls-acp-{spec.name}"
        )
        self._thread.start()

    # ------------------------------------------------------------------ API

    def initialize(self) -> AgentInfo:
        """Start the agent and `initialize` it (what `agents check` does)."""
        return self._run(self._initialize())

    def start(self, load: str | None = None) -> str:
        """Start the agent, initialize it, and open a session in the workspace: a new one,
        or `load` (an earlier session's id) when the agent can load sessions. Returns the
        session's id."""
        if self.info is None:
            self.initialize()
        return self._run(self._open(load))

    def prompt(self, text: str, timeout: float | None = None) -> TurnResult:
        """One turn: send `text`, block until the agent ends the turn (or `timeout`)."""
        if self.session_id is None:
            raise AgentFailed(f"agent '{self.spec.name}': no session to prompt (start it first)")
        with self._gate:
            if self._cancel_next:  # cancelled before it began (`cancel(next_turn=True)`)
                self._cancel_next = False
                return TurnResult("cancelled", "", None, self.client.tool_calls)
            self._turn_over.clear()
            self._cancelled.clear()  # a cancel is of the turn it reaches
        try:
            return self._run(self._prompt(self.session_id, text, timeout))
        finally:
            self._turn_over.set()

    def cancel(self, *, next_turn: bool = False) -> bool:
        """Ask the turn to stop (`session/cancel`); past the grace period, end the agent's
        process group. Returns whether the agent stopped by itself. With `next_turn`, a
        cancel that comes while no turn runs cancels the next one before it begins (a
        worker's cancel that meets its turn still starting)."""
        with self._gate:
            if next_turn and self._turn_over.is_set():
                self._cancel_next = True
                return True
        self._cancelled.set()
        deadline = time.monotonic() + self.grace
        if self._conn is not None and self.session_id is not None:
            try:  # within the grace period too: an agent that reads nothing cannot hold it
                self._run(self._send_cancel(self.session_id, self.grace))
            except AgentFailed:
                pass  # gone already: the turn ends with the connection
        if self._turn_over.wait(max(0.0, deadline - time.monotonic())):
            return True
        if self._process is not None:
            self._process.end(grace=1.0)
        self._turn_over.wait(EXIT_WAIT_S)
        return False

    def kill(self) -> None:
        """End the agent's process group now, from any thread (its turn then ends with the
        connection); `close` still ends the session's loop."""
        if self._process is not None:
            self._process.end(grace=0.5)

    def close(self) -> None:
        """End the agent's process group and the session's loop."""
        if self._loop.is_closed():
            return
        try:
            self._run(self._shutdown(), wait=self.grace + 2 * EXIT_WAIT_S)
        except TimeoutError:
            pass  # the group was killed; what lingers is the kernel's to reap
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(EXIT_WAIT_S)
        if not self._thread.is_alive():
            self._loop.close()

    def alive(self) -> bool:
        """Whether any process of the agent's group still runs."""
        return self._process is not None and self._process.alive()

    # ------------------------------------------------------------------ on the loop

    async def _initialize(self) -> AgentInfo:
        self._process = await AgentProcess.start(
            self.spec, self.workspace, self.home, self.log, self.sandbox
        )
        # AgentClient has only what we offer: the client capabilities we send offer no
        # file system and no terminals, and the library's router answers any such request
        # "method not found"
        client = cast(acp.Client, self.client)
        self._conn = acp.connect_to_agent(client, self._process.stdin, self._process.reader)
        self.client.cancelling = asyncio.Event()
        answer = await self._ask(
            "initialize",
            self._conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(),
                client_info=schema.Implementation(
                    name="lightscientist", title="LightScientist", version=OUR_VERSION
                ),
            ),
            self.timeout,
        )
        capabilities = answer.agent_capabilities or schema.AgentCapabilities()
        given = answer.agent_info
        self.info = AgentInfo(
            name=given.name if given else self.spec.name,
            title=given.title if given else None,
            version=given.version if given else None,
            protocol_version=answer.protocol_version,
            capabilities=capabilities.model_dump(mode="json", by_alias=True, exclude_none=True),
            missing_env=tuple(missing_env(self.spec)),
        )
        return self.info

    async def _shutdown(self) -> None:
        if self._conn is not None:
            try:
                await self._conn.close()
            except ConnectionError:
                pass  # the agent is gone already (ended, or killed by `kill`)
        process = self._process
        if process is not None:
            process.stdin.close()
            await asyncio.to_thread(process.end, 1.0)
            await process.finish(EXIT_WAIT_S)

    async def _open(self, load: str | None) -> str:
        cwd = str(self.workspace)
        assert self.info is not None  # initialized first
        if load is not None and self.info.load_session:
            self.client.replaying = True
            try:
                loading = self._conn.load_session(
                    cwd=cwd, session_id=load, mcp_servers=self.mcp_servers
                )
                loaded = await self._ask("session/load", loading, self.timeout)
            finally:
                self.client.replaying = False
            self.session_id = load
            options = loaded.config_options if loaded is not None else None
        else:
            opening = self._conn.new_session(cwd=cwd, mcp_servers=self.mcp_servers)
            opened = await self._ask("session/new", opening, self.timeout)
            self.session_id = opened.session_id
            options = opened.config_options
        self.client.model = model_of(options) or self.client.model
        return self.session_id

    async def _prompt(self, session_id: str, text: str, timeout: float | None) -> TurnResult:
        if self.client.cancelling is not None:
            self.client.cancelling.clear()
        try:
            answer = await self._ask(
                "session/prompt",
                self._conn.prompt(session_id=session_id, prompt=[acp.text_block(text)]),
                timeout,
            )
            stop = str(answer.stop_reason)
            reported = answer.usage
        except AgentFailed:
            if not self._cancelled.is_set():
                raise
            stop, reported = "cancelled", None  # ended by the cancel: not a failure
        self.client.end_message()
        return TurnResult(
            stop_reason=stop,
            summary=self.client.last_message,
            usage=_usage(reported),
            tool_calls=self.client.tool_calls,
            session_cost_usd=self.client.cost_usd,
            model=self.client.model,
        )

    async def _send_cancel(self, session_id: str, limit: float) -> None:
        if self.client.cancelling is not None:
            self.client.cancelling.set()
        await self._ask("session/cancel", self._conn.cancel(session_id=session_id), limit)

    async def _ask(self, what: str, call: Coroutine[Any, Any, T], limit: float | None) -> T:
        """`call`'s answer within `limit` seconds, or the one line that says why there is
        none."""
        try:
            return await asyncio.wait_for(call, limit)
        except TimeoutError:
            raise self._failed(f"did not answer {what} within {limit or 0:g} s") from None
        except acp.RequestError as exc:
            raise self._failed(f"refused {what}: {exc}") from None
        except ConnectionError:
            raise await self._gone(what) from None

    async def _gone(self, what: str) -> AgentFailed:
        """Why the connection closed during `what`: what it wrote, or how it exited."""
        process = self._process
        assert process is not None  # a connection has a process
        if process.problem is not None:
            return self._failed(process.problem)
        code = await process.exit_code(EXIT_WAIT_S)
        if code is None:
            return self._failed(f"closed its output during {what}")
        said = process.last_words()
        return self._failed(
            f"exited with code {code} during {what}" + (f" (it said: {said})" if said else "")
        )

    def _failed(self, what: str) -> AgentFailed:
        return AgentFailed(f"agent '{self.spec.name}' {what}")

    def _run(self, coro: Coroutine[Any, Any, T], wait: float | None = None) -> T:
        """Run `coro` on the session's loop; block this thread for its result."""
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(wait)


def _usage(reported: schema.Usage | None) -> Usage | None:
    """Our `Usage` of a turn's reported tokens, its cost unknown (never zero) until it is
    priced."""
    if reported is None:
        return None
    return Usage(
        input_tokens=reported.input_tokens,
        output_tokens=reported.output_tokens,
        cached_tokens=reported.cached_read_tokens or 0,
        unpriced_calls=1,
    )
