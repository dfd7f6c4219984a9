"""The values that cross layer 3's boundary: worker specs down, progress counters and
`WorkerUpdate`s up (the worker record is in `session.worker_record`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.vocab import Role, WorkerStatus

if TYPE_CHECKING:  # records are read without importing LangChain (the command line)
    from langchain_core.tools import BaseTool


@dataclasses.dataclass(frozen=True)
class Progress:
    """Counters of one worker session, cumulative over all its turns."""

    model_calls: int = 0
    tool_calls: int = 0
    steps: int = 0
    """Graph steps (model and tool nodes) executed."""
    input_chars: int = 0
    """Characters sent to the model by the latest call."""

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Progress:
        """The counters in `raw` (other keys are ignored; a missing counter is 0)."""
        return cls(**{f.name: int(raw.get(f.name) or 0) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class WorkerSpec:
    """What to start: one persistent session with its first message."""

    message: str
    """The first user message (task, skill path, PROCESS.md digest)."""
    role: Role = Role.WORKER
    stage: str | None = None
    task_id: str | None = None
    goal: str = ""
    system_prompt: str | None = None
    extra_tools: Sequence[BaseTool] = ()
    """Tools beyond the standard set (the supervisor's scheduling tools)."""
    file_tools: bool = True
    """Whether the session gets the workspace file tools and the shell."""
    worker_id: str | None = None
    """Reuse this id (and thread) instead of generating one."""
    max_input_messages: bool = False
    """Feed the model only the current turn (the supervisor's bounded input)."""
    labels: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Free-form tags (e.g. the probe candidate) kept in the record."""
    network: bool = False
    """Whether the worker's shell commands may use the network (the stage's `network`)."""
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The stage's resource limits (`values.limits` keys; None lifts one)."""
    memory: bool = True
    """Whether its `recall` tool may search the user's memory (the stage's `memory`, the
    run's `--no-memory`)."""
    agent: AgentSpec | None = None
    """The coding agent that works it over ACP (`runtime.acp.worker`); None: a deepagents
    session."""


@dataclasses.dataclass(frozen=True)
class WorkerUpdate:
    """One change of one worker, sent up to layer 2."""

    worker_id: str
    status: WorkerStatus
    progress: Progress
    stage: str | None = None
    task_id: str | None = None
    result: dict[str, Any] | None = None
    """For final states and lifecycle stops: what the worker delivered (see `WorkerSession`)."""
    question: str | None = None
    """For `waiting`: the question the worker asked."""
    permission: PermissionRequest | None = None
    """For `waiting` on a coding agent's permission request: the request."""
    check_after_s: float | None = None
    """For `background`: when the worker wants to be checked again."""
    error: str | None = None
    at: float = 0.0
