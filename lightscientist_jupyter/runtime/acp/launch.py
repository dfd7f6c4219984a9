"""Start a coding agent's process, and end it.

The agent runs in a process group of its own (so ending it ends whatever it started), with
an environment of only the variables its table lists plus a minimal `PATH`, `HOME` and
`LANG`: nothing else of ours, no key it was not given, reaches it. In a sandbox with a
network of its own (`network = true`), its program starts only once that network is wired:
the handshake and `netstack.attach` a command's sandbox gets. Its stderr goes to a log file;
its stdout is read line by line, and every line must be a JSON-RPC message before the
protocol library sees it — the library skips a line that is not JSON, so an agent that speaks
something else would otherwise look like one that never answers. In a sandboxed run it starts
inside bubblewrap (`agent_sandbox`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

from lightscientist_jupyter._fs import NO_LINKS, mkdirs, read_text
from lightscientist_jupyter.errors import AgentFailed
from lightscientist_jupyter.redact import safe
from lightscientist_jupyter.runtime.acp.tool_server import BRIDGE
from lightscientist_jupyter.runtime.sandbox import netstack
from lightscientist_jupyter.runtime.sandbox.bwrap import program_binds
from lightscientist_jupyter.runtime.sandbox.shell import group_alive, kill_group, redact_log
from lightscientist_jupyter.runtime.sandbox.spawn import Confinement, ShellPolicy
from lightscientist_jupyter.values.agents import AgentSpec

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
EXIT_WAIT_S = 2.0
"""How long a sandbox whose network failed may take to exit."""
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


def agent_sandbox(
    spec: AgentSpec, policy: ShellPolicy, root: Path, home: Path
) -> Confinement | None:
    """Where an agent runs, as its stage's commands do: the workspace writable, nothing else
    of the host, its program's files and our tools' bridge shown read-only, and with
    `network = true` the network its stage's commands would get (one of its own: the
    internet, not the host); None when the run's commands are not sandboxed."""
    if not policy.sandbox:
        return None
    root = root.resolve()
    conf = policy.confinement(root, home)
    prefix = conf.prefix
    try:
        program = find_program(spec)
    except AgentFailed:
        binds: list[str] = []  # its turn fails with that line when it starts the agent
    else:
        # the bridge of our tools' MCP server (`tool_server`): the agent starts it, with this
        # interpreter (whose environment `prefix` shows), inside the sandbox
        binds = program_binds([program, *spec.command[1:], str(BRIDGE)], root)
    # the agent's own limits are not the commands': only its sandbox and network are
    return Confinement((*prefix[:-1], *binds, prefix[-1]), network=conf.network)


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
        cls, spec: AgentSpec, cwd: Path, home: Path, log: Path, sandbox: Confinement | None = None
    ) -> AgentProcess:
        """Start the agent in `cwd`, its stderr appended to `log`; with `sandbox` (its
        `prefix` a `bwrap` argv up to its final `--`), inside that sandbox, with the
        sandbox's network."""
        program = find_program(spec)
        argv = [program, *spec.command[1:]]
        prefix = list(sandbox.prefix) if sandbox is not None else []
        mkdirs(home)
        mkdirs(log.parent)
        err = NO_LINKS.open_fd(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        handshake = None
        try:  # the child keeps its own descriptor
            if prefix and sandbox is not None and sandbox.network == "own":
                handshake = netstack.Handshake.open()
                prefix = handshake.sandbox_argv(prefix)
                wait = f'{handshake.wait_script()}\nexec "$@"'  # then the agent's program
                argv = ["/bin/bash", "-c", wait, "ls-agent", *argv]
            try:
                process = await asyncio.create_subprocess_exec(
                    *prefix,
                    *argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=err,
                    cwd=str(cwd),
                    env=agent_env(spec, home, program),
                    start_new_session=True,
                    limit=READ_LIMIT,
                    pass_fds=handshake.sandbox_fds if handshake else (),
                )
            except OSError as exc:
                if handshake is not None:
                    handshake.close_all()
                raise AgentFailed(
                    f"agent '{spec.name}': cannot start '{spec.command[0]}' ({exc.strerror})"
                ) from None
        finally:
            os.close(err)
        agent = cls(spec, process, log)
        if handshake is not None:
            note = await asyncio.to_thread(netstack.attach, process.pid, handshake)
            if note:  # its sandbox was ended before the agent's program ran
                agent.stdin.close()
                await agent.finish(EXIT_WAIT_S)
                raise AgentFailed(f"agent '{spec.name}': {note}")
        return agent

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
