"""Start a coding agent's process, and end it.

The agent runs in a process group of its own (so ending it ends whatever it started), with
an environment of only the variables its table lists plus a minimal `PATH`, `HOME` and
`LANG`: nothing else of ours, no key it was not given, reaches it. Its stderr goes to a log
file; its stdout is read line by line, and every line must be a JSON-RPC message before the
protocol library sees it — the library skips a line that is not JSON, so an agent that speaks
something else would otherwise look like one that never answers. In a sandboxed run it starts
inside bubblewrap (`agent_sandbox`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from lightscientist_jupyter._fs import NO_LINKS, mkdirs, read_text
from lightscientist_jupyter.errors import AgentFailed
from lightscientist_jupyter.redact import safe
from lightscientist_jupyter.runtime.acp.tool_server import BRIDGE
from lightscientist_jupyter.runtime.sandbox.bwrap import program_binds
from lightscientist_jupyter.runtime.sandbox.shell import group_alive, kill_group, redact_log
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values.agents import AgentSpec

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
READ_LIMIT = 50 * 1024 * 1024
"""The longest line an agent may write (the protocol library's own default): a message can
carry a whole file."""


def agent_env(spec: AgentSpec, home: Path, program: str) -> dict[str, str]:
    """The agent's whole environment: `PATH` (its program's folder first), `HOME`, `LANG`,
    and the variables its table lists that are set here."""
    env = {
        "PATH": f"{Path(program).parent}:{SYSTEM_PATH}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }
    env.update({name: os.environ[name] for name in spec.env if name in os.environ})
    return env


def missing_env(spec: AgentSpec) -> list[str]:
    """The variables its table lists that are not set here (it starts without them)."""
    return [name for name in spec.env if name not in os.environ]


def find_program(spec: AgentSpec) -> str:
    """The absolute path of the agent's program, looked up on this process's `PATH`."""
    program = spec.command[0]
    found = shutil.which(program)
    if found is None:
        where = "no such file" if os.sep in program else "not found on PATH"
        raise AgentFailed(f"agent '{spec.name}': command '{program}' {where}")
    return os.path.abspath(found)


def agent_sandbox(spec: AgentSpec, policy: ShellPolicy, root: Path, home: Path) -> tuple[str, ...]:
    """The `bwrap` argv (up to its final `--`) an agent runs in, as its stage's commands do:
    the workspace writable, nothing else of the host, its program's files and our tools'
    bridge shown read-only; empty when the run's commands are not sandboxed. Raises
    `AgentFailed` for an agent with `network = true` where its sandbox would need a network
    of its own: the user-mode stack commands get (`netstack`) is not wired to agents yet."""
    if not policy.sandbox:
        return ()
    if spec.network and not policy.host_network:
        raise AgentFailed(
            f"agent '{spec.name}': network = true needs a network of its own in the sandbox, "
            "which agents do not get yet; run with --sandbox none, or set network = false"
        )
    root = root.resolve()
    prefix = policy.confinement(root, home).prefix
    try:
        program = find_program(spec)
    except AgentFailed:
        return prefix  # its turn fails with that line when it starts the agent
    # the bridge of our tools' MCP server (`tool_server`): the agent starts it, with this
    # interpreter (whose environment `prefix` shows), inside the sandbox
    shown = program_binds([program, *spec.command[1:], str(BRIDGE)], root)
    return (*prefix[:-1], *shown, prefix[-1])


class AgentProcess:
    """A running agent: its process, its checked stdout (`reader`) and its stderr log."""

    def __init__(self, spec: AgentSpec, process: asyncio.subprocess.Process, log: Path):
        self.spec = spec
        self.process = process
        self.log = log
        self.reader = asyncio.StreamReader(limit=READ_LIMIT)
        """What the protocol library reads: the agent's stdout, JSON-RPC lines only."""
        self.problem: str | None = None
        """Set when the agent wrote a line that is not JSON-RPC (the reader then ends)."""
        self._pump = asyncio.get_running_loop().create_task(self._check_lines())

    @classmethod
    async def start(
        cls, spec: AgentSpec, cwd: Path, home: Path, log: Path, sandbox: Sequence[str] = ()
    ) -> AgentProcess:
        """Start the agent in `cwd`, its stderr appended to `log`; with `sandbox` (a
        `bwrap` argv up to its final `--`), inside that sandbox."""
        program = find_program(spec)
        mkdirs(home)
        mkdirs(log.parent)
        err = NO_LINKS.open_fd(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:  # the child keeps its own descriptor
            try:
                process = await asyncio.create_subprocess_exec(
                    *sandbox,
                    program,
                    *spec.command[1:],
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=err,
                    cwd=str(cwd),
                    env=agent_env(spec, home, program),
                    start_new_session=True,
                    limit=READ_LIMIT,
                )
            except OSError as exc:
                raise AgentFailed(
                    f"agent '{spec.name}': cannot start '{spec.command[0]}' ({exc.strerror})"
                ) from None
        finally:
            os.close(err)
        return cls(spec, process, log)

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None  # started with a pipe
        return self.process.stdin

    async def _check_lines(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None  # started with a pipe
        try:
            while line := await stdout.readline():
                if line.strip() and not _is_json_rpc(line):
                    self.problem = (
                        "speaks something else than JSON-RPC on its stdout (it wrote "
                        f"{safe(line.decode('utf-8', 'replace').strip(), 120)!r})"
                    )
                    break
                self.reader.feed_data(line)
        except (ValueError, ConnectionError) as exc:  # a line past READ_LIMIT, a broken pipe
            self.problem = f"wrote what cannot be read as lines ({exc})"
        finally:
            self.reader.feed_eof()

    async def exit_code(self, wait: float) -> int | None:
        """Its exit code, waiting up to `wait` seconds for it to exit; None if it runs on."""
        try:
            return await asyncio.wait_for(self.process.wait(), wait)
        except TimeoutError:
            return None

    async def finish(self, wait: float) -> None:
        """Wait up to `wait` seconds for its exit and for its output's last line (after
        `end`), so that nothing of it is left open."""
        await self.exit_code(wait)
        try:
            await asyncio.wait_for(asyncio.shield(self._pump), wait)
        except TimeoutError:
            self._pump.cancel()

    def last_words(self) -> str:
        """The last line it wrote on stderr, or ''."""
        try:
            lines = read_text(self.log, errors="replace").splitlines()
        except OSError:
            return ""
        last = next((line for line in reversed(lines) if line.strip()), "")
        return safe(last.strip(), 200)

    def end(self, grace: float) -> None:
        """End its process group: SIGTERM, `grace` seconds, SIGKILL (blocks; not on the
        loop's thread)."""
        kill_group(self.process.pid, grace)
        redact_log(self.log)  # what it wrote on stderr may name a key it was given

    def alive(self) -> bool:
        """Whether any process of its group still runs."""
        return group_alive(self.process.pid)


def _is_json_rpc(line: bytes) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0"
