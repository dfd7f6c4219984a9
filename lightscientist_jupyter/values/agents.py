"""A coding agent that works stages, as a stage table's `[agents.NAME]` declares it.

    [agents.codex]
    command = ["codex-acp"]            # any agent speaking the Agent Client Protocol on stdio
    env = ["OPENAI_API_KEY"]           # the only variables of ours it is given
    permissions = "ask"                # ask | allow | deny: its permission requests
    network = true                     # what its sandbox may reach

A stage names one with `agent = "codex"`. Layer 1 reads the table (`controller.loader`),
layer 3 starts the agent (`runtime.acp`); this module is the leaf both share, and it reads
and writes nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from lightscientist_jupyter.vocab import AgentPermissions

AGENT_KEYS = ("command", "env", "permissions", "network")
_PROGRAM = 'the program and its arguments (e.g. command = ["codex-acp"])'
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
AGENT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
"""An agent's name: letters, digits, '_' and '-' (it appears in events and file names)."""


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """One `[agents.NAME]` table, validated."""

    name: str
    command: tuple[str, ...]
    """The program and its arguments; never empty."""
    env: tuple[str, ...] = ()
    """The names of the variables passed through to it; nothing else of ours reaches it."""
    permissions: AgentPermissions = AgentPermissions.ASK
    network: bool = False
    """Whether its sandbox may use the network (an agent usually needs its provider)."""

    def to_dict(self) -> dict[str, Any]:
        """As JSON, in its table's keys and its name (a worker's record keeps it, so that
        another process can start the agent again)."""
        return {
            "name": self.name,
            "command": list(self.command),
            "env": list(self.env),
            "permissions": str(self.permissions),
            "network": self.network,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> AgentSpec:
        """`to_dict`'s form read back; ValueError naming what is wrong."""
        name = str(raw.get("name") or "")
        spec, problems = parse_agent(name, {k: v for k, v in raw.items() if k in AGENT_KEYS})
        if spec is None:
            raise ValueError(f"agent '{name}': " + "; ".join(text for _, text in problems))
        return spec


Problem = tuple[str | None, str]
"""A problem of an agent's table: the key it is about (None: the table itself), and what is
wrong, for the loader to say with the key's line."""


def parse_agent(name: str, raw: Mapping[str, Any]) -> tuple[AgentSpec | None, list[Problem]]:
    """The agent `raw` declares, or None with every problem of its keys (each with the key;
    a key it does not know is the caller's to report)."""
    problems: list[Problem] = []
    if not AGENT_NAME.match(name):
        problems.append((None, "names use letters, digits, '_' and '-'"))
    command = raw.get("command")
    if command is None:
        problems.append((None, f"missing required key 'command', {_PROGRAM}"))
    elif not isinstance(command, list) or not command:
        problems.append(("command", f"must be a non-empty list of strings, {_PROGRAM}"))
    elif not all(isinstance(part, str) for part in command) or not command[0].strip():
        problems.append(("command", "every entry must be a string, the first the program"))
    env = raw.get("env", [])
    if not isinstance(env, list) or not all(isinstance(v, str) for v in env):
        problems.append(("env", 'must be a list of variable names (e.g. env = ["OPENAI_API_KEY"])'))
    else:
        bad = [v for v in env if not _ENV_NAME.match(v)]
        if bad:
            problems.append(("env", f"'{bad[0]}' is not a variable name"))
    permissions = raw.get("permissions", str(AgentPermissions.ASK))
    choices = ", ".join(f'"{p}"' for p in AgentPermissions)
    if not isinstance(permissions, str) or permissions not in set(AgentPermissions):
        shown = f'"{permissions}"' if isinstance(permissions, str) else repr(permissions)
        problems.append(("permissions", f"must be one of {choices}, not {shown}"))
    network = raw.get("network", False)
    if not isinstance(network, bool):
        problems.append(("network", f"must be true or false, not {network!r}"))
    if problems:
        return None, problems
    return AgentSpec(
        name=name,
        command=tuple(command or ()),
        env=tuple(env),
        permissions=AgentPermissions(permissions),
        network=network,
    ), []
