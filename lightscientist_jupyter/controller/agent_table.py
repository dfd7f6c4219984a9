"""The stage table's `[agents.NAME]` tables and the stages' `agent` keys, validated.

Each problem names the agent or the stage, the key and its line, like every other problem of
the loader (`controller.loader`), which reports them all together.
"""

from __future__ import annotations

from typing import Any, Protocol

from lightscientist_jupyter.values.agents import AGENT_KEYS, AgentSpec, parse_agent


class TableLines(Protocol):
    """Where a table's stages, agents and their keys stand in its file (the loader's)."""

    def of(self, stage: str | None, key: str | None = None) -> str:
        """` (line N)` of a stage's key (else of its header), or ''."""
        ...

    def of_agent(self, name: str, key: str | None = None) -> str:
        """` (line N)` of an agent's key (else of its header), or ''."""
        ...


def agents_table(
    raw_agents: Any, raw_stages: dict[str, Any], lines: TableLines, problems: list[str]
) -> dict[str, AgentSpec]:
    """The valid agents by name; every problem of the agents, and every stage naming an
    agent the table does not declare, is appended to `problems`."""
    agents: dict[str, AgentSpec] = {}
    declared: list[str] = []
    if raw_agents is not None and not isinstance(raw_agents, dict):
        problems.append(
            "top-level key 'agents' must be a table of [agents.NAME] tables"
            f"{lines.of(None, 'agents')}"
        )
    elif raw_agents is not None:
        declared = list(raw_agents)
        for name, raw in raw_agents.items():
            if not isinstance(raw, dict):
                problems.append(f"agent '{name}'{lines.of_agent(name)}: must be a table")
                continue
            for key in raw:
                if key not in AGENT_KEYS:
                    problems.append(
                        f"agent '{name}', unknown key '{key}'{lines.of_agent(name, key)}; "
                        f"expected {', '.join(AGENT_KEYS)}"
                    )
            spec, found = parse_agent(name, raw)
            for key, text in found:
                at = f", key '{key}'" if key is not None else ""
                problems.append(f"agent '{name}'{at}{lines.of_agent(name, key)}: {text}")
            if spec is not None:
                agents[name] = spec
    for stage_id, raw in raw_stages.items():
        name = raw.get("agent") if isinstance(raw, dict) else None
        if isinstance(name, str) and name not in declared:
            known = f"its agents: {', '.join(declared)}" if declared else "it has no [agents.NAME]"
            problems.append(
                f"stage '{stage_id}', key 'agent'{lines.of(stage_id, 'agent')}: "
                f"'{name}' is not an agent of this table ({known})"
            )
    return agents
