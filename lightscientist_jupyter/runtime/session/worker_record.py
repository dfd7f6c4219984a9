"""The worker record: one typed value for what is known of one worker session.

Layer 3 keeps it for each session and writes it to `workers/<id>/worker.json`; layer 2 keeps
its own copy per worker, folded from `WorkerUpdate`s, in `.lightscientist/supervisor.json`.
Both use this one type. `to_dict` writes the JSON keys that the readers of `worker.json`
(the API, the notebook widgets, the server extension, the tests) know; `from_dict` reads them
back and ignores keys it does not know, so a record written by another version still loads.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypedDict, cast

from lightscientist_jupyter.runtime.types import Progress
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.permission import PermissionRequest, permission_of
from lightscientist_jupyter.vocab import RESUMABLE_WORKER_STATUSES, Role, WorkerStatus


class ProgressDict(TypedDict):
    """`Progress` as JSON."""

    model_calls: int
    tool_calls: int
    steps: int
    input_chars: int


class WorkerRecordDict(TypedDict):
    """One `workers/<id>/worker.json`."""

    id: str
    thread_id: str
    role: str
    stage: str | None
    task_id: str | None
    goal: str
    status: str
    labels: dict[str, Any]
    created_at: float
    updated_at: float
    progress: ProgressDict
    result: dict[str, Any] | None
    question: str | None
    check_after_s: float | None
    error: str | None
    files_written: list[str]
    commands: list[str]
    system_prompt: str | None
    file_tools: bool
    current_turn_only: bool
    workspace: str
    network: bool
    limits: dict[str, Any]
    memory: bool
    usage: dict[str, Any]
    held: str | None
    jobs: list[str]
    answers_before: int
    agent: dict[str, Any] | None
    agent_session: str | None
    permission: dict[str, Any] | None


def new_thread_id(worker_id: str, at: float) -> str:
    """A new LangGraph thread for the session `worker_id`, started at Unix time `at`."""
    return f"{worker_id}-{int(at * 1000)}"


@dataclasses.dataclass(frozen=True)
class WorkerRecord:
    """One worker session: who it is, where it stands, what it delivered."""

    id: str
    thread_id: str = ""
    """The LangGraph thread that holds its checkpoints."""
    role: Role = Role.WORKER
    stage: str | None = None
    task_id: str | None = None
    goal: str = ""
    status: WorkerStatus = WorkerStatus.RUNNING
    labels: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Free-form tags from the spec (`label` names a sub-task, e.g. 'probe c1')."""
    created_at: float = 0.0
    updated_at: float = 0.0
    """Unix time of the latest change (in layer 2's copy: of the latest update it heard)."""
    progress: Progress = Progress()
    result: dict[str, Any] | None = None
    """What the worker delivered (see `WorkerSession`), for final states and lifecycle stops."""
    question: str | None = None
    """While `waiting`: the question the worker asked."""
    check_after_s: float | None = None
    """While `background`: when the worker wants to be checked again."""
    error: str | None = None
    files_written: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    system_prompt: str | None = None
    """None: the default worker prompt."""
    file_tools: bool = True
    """Whether the session has the workspace file tools and the shell."""
    current_turn_only: bool = False
    """Whether the model sees only the current turn (the supervisor's bounded input)."""
    workspace: str = ""
    network: bool = False
    """Whether its shell commands may use the network (from the spec, kept for a restart)."""
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Its stage's resource limits (from the spec, kept for a restart)."""
    memory: bool = True
    """Whether its `recall` tool searches the user's memory (from the spec)."""
    usage: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Its model calls' totals over all its turns (`values.usage.Usage.to_dict`)."""
    held: str | None = None
    """Why its turn is held before a model call (a spent budget); a resume continues it."""
    jobs: tuple[str, ...] = ()
    """The ids of the jobs it submitted (`runtime.jobs.manager`), so a resume finds them again."""
    answers_before: int = 0
    """Model answers held by its earlier threads (the supervisor agent's thread is renewed
    every few turns: `prune.renewal`), so that a recording numbers its calls on."""
    agent: AgentSpec | None = None
    """The coding agent that works it over ACP (`runtime.acp.worker`), kept so that another
    process can start it again; None: a deepagents session."""
    agent_session: str | None = None
    """The agent's ACP session id, for `session/load` after a restart."""
    permission: PermissionRequest | None = None
    """While `waiting` on a coding agent's permission request (`runtime.acp.worker`): the
    request, whose `question` is the question."""

    @property
    def label(self) -> str:
        return str(self.labels.get("label") or "")

    @property
    def suspension(self) -> WorkerStatus | None:
        """`waiting` (needs an answer) or `background` (resume with a message), else None."""
        return self.status if self.status in RESUMABLE_WORKER_STATUSES else None

    def to_dict(self) -> WorkerRecordDict:
        raw = dataclasses.asdict(self)  # the fields are in the file's key order
        raw.update(
            role=str(self.role),
            status=str(self.status),
            files_written=list(self.files_written),
            commands=list(self.commands),
            jobs=list(self.jobs),
            agent=self.agent.to_dict() if self.agent is not None else None,
            permission=self.permission.to_dict() if self.permission is not None else None,
        )
        return cast(WorkerRecordDict, raw)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> WorkerRecord:
        return cls(
            id=str(raw["id"]),
            thread_id=str(raw.get("thread_id") or ""),
            role=Role(raw.get("role") or Role.WORKER),
            stage=raw.get("stage"),
            task_id=raw.get("task_id"),
            goal=str(raw.get("goal") or ""),
            status=WorkerStatus(raw.get("status") or WorkerStatus.RUNNING),
            labels=dict(raw.get("labels") or {}),
            created_at=float(raw.get("created_at") or 0.0),
            updated_at=float(raw.get("updated_at") or 0.0),
            progress=Progress.from_dict(raw.get("progress") or {}),
            result=raw.get("result"),
            question=raw.get("question"),
            permission=permission_of(raw.get("permission")),
            check_after_s=raw.get("check_after_s"),
            error=raw.get("error"),
            files_written=tuple(raw.get("files_written") or ()),
            commands=tuple(raw.get("commands") or ()),
            system_prompt=raw.get("system_prompt"),
            file_tools=bool(raw.get("file_tools", True)),
            current_turn_only=bool(raw.get("current_turn_only", False)),
            network=bool(raw.get("network", False)),
            limits=dict(raw.get("limits") or {}),
            memory=bool(raw.get("memory", True)),
            workspace=str(raw.get("workspace") or ""),
            usage=dict(raw.get("usage") or {}),
            held=raw.get("held"),
            jobs=tuple(raw.get("jobs") or ()),
            answers_before=int(raw.get("answers_before") or 0),
            agent=AgentSpec.from_dict(raw["agent"]) if raw.get("agent") else None,
            agent_session=raw.get("agent_session"),
        )
