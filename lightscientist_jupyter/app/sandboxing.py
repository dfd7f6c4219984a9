"""A run's sandbox settings: `--sandbox`, `--allow-network`, `--limits`.

`research` checks them before any work and keeps them in the project's settings (as it keeps
the model), so `resume` uses them unless told otherwise. Opening a run turns them into the
workers' `ShellPolicy`; when `auto` finds no working bubblewrap the run says so with a
`sandbox.unavailable` event and in `.lightscientist/sandbox.json`, which `status` reads.
"""

from __future__ import annotations

import json
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.controller import ResearchController, StageTable
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.sandbox import bwrap
from lightscientist_jupyter.runtime.sandbox.bwrap import SandboxChoice
from lightscientist_jupyter.runtime.sandbox.cgroups import CommandCgroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values.limits import parse_spec
from lightscientist_jupyter.workspace import Workspace

CHOICE_FILE = "sandbox.json"


def settings(
    table: StageTable, sandbox: str | None, allow_network: bool | None, limits: str | None
) -> dict[str, Any]:
    """The settings a new project keeps; raises (one line naming the option) when one is
    wrong or `--sandbox bwrap` cannot be had here (for the network too, when a stage of
    `table` or `allow_network` allows it)."""
    bwrap.resolve(sandbox, network=bool(allow_network) or _stage_network(table))
    parse_spec(limits or "")
    return {"sandbox": sandbox or "auto", "allow_network": bool(allow_network), "limits": limits}


def open_policy(
    ws: Workspace,
    bus: EventBus,
    controller: ResearchController,
    *,
    sandbox: str | None = None,
    allow_network: bool | None = None,
    limits: str | None = None,
) -> tuple[ShellPolicy, SandboxChoice]:
    """The workers' shell policy of this run (the options given now win over those the
    project keeps)."""
    stored = controller.state.settings
    network = bool(stored.get("allow_network")) if allow_network is None else allow_network
    uses_network = network or _stage_network(controller.table)
    choice = bwrap.resolve(sandbox or stored.get("sandbox"), network=uses_network)
    overrides = parse_spec(limits if limits is not None else stored.get("limits") or "")
    policy = ShellPolicy(
        sandbox=choice.active == "bwrap",
        network=network,
        host_network=choice.net == "host",
        overrides=overrides,
        cgroups=CommandCgroups(),
    )
    write_json_atomic(ws.state_dir / CHOICE_FILE, {**choice.to_dict(), "network": network})
    bwrap.announce(bus, choice)
    return policy, choice


def _stage_network(table: StageTable) -> bool:
    """Whether a stage's commands, or the coding agent working it, may use the network."""
    agents = (table.agent_of(stage.id) for stage in table)
    return any(stage.network for stage in table) or any(a.network for a in agents if a)


def status_info(ws: Workspace, stored: dict[str, Any]) -> dict[str, Any]:
    """`status`'s `sandbox`: the mode asked for, and what the latest run used (with a
    `warning` when it ran unsandboxed under `auto`)."""
    info: dict[str, Any] = {
        "mode": stored.get("sandbox") or "auto",
        "network": bool(stored.get("allow_network")),
        "limits": stored.get("limits") or "",
        "active": None,
        "warning": None,
    }
    try:
        last = json.loads(read_text(ws.state_dir / CHOICE_FILE))
    except (OSError, ValueError):
        return info
    if isinstance(last, dict):
        info["active"] = last.get("active")
        info["warning"] = last.get("warning")
    return info
