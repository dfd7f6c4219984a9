"""`agents check NAME`: can this coding agent be started and spoken to?

It starts the agent a stage table declares (`--stages FILE`, else the table of the project in
the workspace, else the shipped one), initializes it over the Agent Client Protocol and says
what the agent said of itself — its name, version, protocol version and capabilities — or
the one line that says what failed (`errors.AgentFailed`). The agent starts where a run would
start it (`--sandbox`, auto by default): in the same bubblewrap sandbox, with the network its
table allows it, so a program the sandbox does not show fails here and not in a run. It opens
no session and writes nothing in the workspace: its working folder, its home and its stderr
log are a temporary folder's.
"""

from __future__ import annotations

import dataclasses
import shlex
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.errors import AgentFailed, BadInput
from lightscientist_jupyter.runtime.sandbox import bwrap
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:
    from lightscientist_jupyter.runtime.acp.session import AgentInfo


@dataclasses.dataclass(frozen=True)
class AgentsRequest:
    """`agents ACTION NAME`: the argparse destinations of `arguments.agents`."""

    action: str = "check"
    agent: str = ""
    """The agent's name (`[agents.NAME]`)."""
    stages: str | None = None
    workspace: str | None = None
    sandbox: str | None = None
    """`--sandbox`: auto (None), bwrap or none, as for a run."""


@dataclasses.dataclass(frozen=True)
class AgentCheck:
    """What `agents check` found."""

    ok: bool
    message: str
    """One line: the agent and what it said of itself, or what failed."""
    spec: AgentSpec
    info: AgentInfo | None = None
    where: str = ""
    """Where it was started: `in bubblewrap, no network`, or `unsandboxed: WHY`."""

    def lines(self) -> list[str]:
        """The check as the command line prints it: the line, then the details."""
        if self.info is None:
            return [self.message]
        info = self.info
        lines = [
            self.message,
            f"  command:      {shlex.join(self.spec.command)}",
            f"  started:      {self.where}",
            f"  protocol:     ACP version {info.protocol_version}",
            f"  capabilities: {capability_text(info.capabilities)}",
        ]
        if info.missing_env:
            lines.append(f"  not set here: {', '.join(info.missing_env)} (it starts without)")
        return lines


def check(
    name: str,
    *,
    stages: str | None = None,
    workspace: str = ".",
    timeout: float | None = None,
    sandbox: str | None = None,
) -> AgentCheck:
    """Start agent `name` of the table where a run would (`sandbox`: auto, bwrap or none),
    initialize it (within `timeout` seconds, default the session's), end it."""
    # the protocol's models take half a second to import: only a check pays for them
    from lightscientist_jupyter.runtime.acp.launch import agent_sandbox
    from lightscientist_jupyter.runtime.acp.session import ANSWER_TIMEOUT_S, AcpSession

    ws = Workspace.at(workspace)
    state = load_state(ws.state_file) if ws.state_file.is_file() else None
    table = load_table(stages or (state.stages_file if state is not None else None))
    spec = table.agents.get(name)
    if spec is None:
        known = ", ".join(table.agents) or "none"
        raise BadInput(
            f"the stage table {table.path} declares no agent '{name}' (its agents: {known})"
        )
    try:
        choice = bwrap.resolve(sandbox, network=spec.network)
    except bwrap.SandboxUnavailable as exc:
        return AgentCheck(False, f"agent '{name}': {exc}", spec)
    policy = ShellPolicy(
        sandbox=choice.active == "bwrap", network=spec.network, host_network=choice.net == "host"
    )
    where = _where(choice, spec.network)
    with tempfile.TemporaryDirectory(prefix="ls-agent-check-") as scratch:
        root, home = Path(scratch) / "workspace", Path(scratch) / "home"
        root.mkdir()
        session = AcpSession(
            spec,
            root,
            home=home,
            log=Path(scratch) / "agent.log",
            emit=lambda type_, message, data: None,
            timeout=timeout or ANSWER_TIMEOUT_S,
            sandbox=agent_sandbox(spec, policy, root, home),
        )
        try:
            info = session.initialize()
        except AgentFailed as exc:
            return AgentCheck(False, f"{exc}; sandbox: {where}", spec, where=where)
        finally:
            session.close()
    title = f" ({info.title})" if info.title and info.title != info.name else ""
    return AgentCheck(
        True,
        f"agent '{name}': {info.name} {info.version or '(no version)'}{title}, "
        f"ACP version {info.protocol_version}, answered initialize",
        spec,
        info,
        where,
    )


def _where(choice: bwrap.SandboxChoice, network: bool) -> str:
    """Where the check starts the agent, in words."""
    if choice.active != "bwrap":
        return f"unsandboxed: {choice.reason}"
    if not network:
        return "in bubblewrap, no network"
    if choice.net == "host":
        return f"in bubblewrap, with the host's network: {choice.net_reason}"
    return "in bubblewrap, with a network of its own (the internet, not the host)"


def capability_text(capabilities: dict[str, Any], prefix: str = "") -> str:
    """The capabilities an agent claims, as `loadSession, promptCapabilities.image…` (`none`
    when it claims nothing): every flag that is true, and every empty table inside another
    (ACP's way of saying "supported", as `sessionCapabilities.list: {}`)."""
    named = []
    for key, value in capabilities.items():
        if value is True or (value == {} and prefix):
            named.append(prefix + key)
        elif isinstance(value, dict) and value:
            inner = capability_text(value, f"{prefix}{key}.")
            if inner != "none":
                named.append(inner)
    return ", ".join(named) or "none"
