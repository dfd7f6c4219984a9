"""The stage table as plain frozen values; they know nothing of the TOML file format."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.review import ReviewSpec
from lightscientist_jupyter.values.search import SearchSpec

DONE = "done"
"""The pseudo-stage that ends a project."""


@dataclasses.dataclass(frozen=True)
class Stage:
    """One stage of the research flow."""

    id: str
    skill: Path
    """Absolute path of the Markdown brief a worker reads on demand."""
    outputs: tuple[str, ...]
    """Paths, relative to the workspace, that must exist and be non-empty to finish."""
    next: str
    """The default next stage (or `done`)."""
    allowed: tuple[str, ...]
    """Every stage this one may move to; contains `next`."""
    approval: bool = False
    """A gate: in manual mode, finishing it waits for a human reply."""
    max_visits: int | None = None
    """Entering the stage more often than this fails the project (a runaway loop)."""
    network: bool = False
    """Whether its workers' shell commands may use the network (else the sandbox has none)."""
    limits: Mapping[str, int | None] = dataclasses.field(default_factory=dict)
    """Resource limits of its workers' commands (`mem`, `cpu`, `procs`, `fsize`)."""
    budget: Mapping[str, float] = dataclasses.field(default_factory=dict)
    """What its model calls may spend over all its visits (`usd`, `tokens`)."""
    handoff: bool = False
    """The researcher does this stage by hand whenever the project enters it."""
    checks: tuple[str, ...] = ()
    """Deterministic checks run when it finishes (`citations:DOC`, `numbers:DOC[:FOLDERS]`)."""
    search: SearchSpec | None = None
    """A search stage: its variants run as a best-first tree of jobs (`controller.search`)."""
    review: ReviewSpec | None = None
    """A review stage: reviewers score the paper before its worker runs (`controller.review`)."""
    memory: bool = True
    """`memory = false`: its tasks recall nothing from the user's memory, its workers'
    `recall` searches the project's own record only, and its finish files nothing."""
    agent: str | None = None
    """The coding agent (`[agents.NAME]`) that works it; None: the built-in worker."""

    @property
    def phase(self) -> str:
        return self.id.split(".", 1)[0]


@dataclasses.dataclass(frozen=True)
class StageTable:
    """A validated research flow: every stage reachable from `start`, each able to reach `done`."""

    path: Path
    start: str
    stages: Mapping[str, Stage]
    literature: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """The `[literature]` table: `library` (absolute paths) and `references` (a workspace path)."""
    agents: Mapping[str, AgentSpec] = dataclasses.field(default_factory=dict)
    """The `[agents.NAME]` tables, by name: the coding agents stages may name."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stages", MappingProxyType(dict(self.stages)))
        object.__setattr__(self, "agents", MappingProxyType(dict(self.agents)))

    def __getitem__(self, stage_id: str) -> Stage:
        return self.stages[stage_id]

    def __contains__(self, stage_id: object) -> bool:
        return stage_id in self.stages

    def __iter__(self) -> Iterator[Stage]:
        return iter(self.stages.values())

    def __len__(self) -> int:
        return len(self.stages)

    def ids(self) -> list[str]:
        return list(self.stages)

    def agent_of(self, stage_id: str) -> AgentSpec | None:
        """The coding agent that works the stage; None for the built-in worker."""
        name = self.stages[stage_id].agent
        return self.agents[name] if name is not None else None

    def works(self, agent: str) -> list[str]:
        """The stages the agent works, in table order."""
        return [s.id for s in self if s.agent == agent]

    def gates(self) -> list[str]:
        return [s.id for s in self if s.approval]

    def edges(self) -> list[tuple[str, str]]:
        """Every allowed transition `(from, to)`, in table order."""
        return [(s.id, to) for s in self for to in s.allowed]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (for the side panel and `status --json`)."""
        return {
            "path": str(self.path),
            "start": self.start,
            "stages": [
                {
                    "id": s.id,
                    "skill": str(s.skill),
                    "outputs": list(s.outputs),
                    "next": s.next,
                    "allowed": list(s.allowed),
                    "approval": s.approval,
                    "max_visits": s.max_visits,
                }
                for s in self
            ],
        }
