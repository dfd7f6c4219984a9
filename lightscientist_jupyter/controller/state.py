"""The controller's state and its file, `.lightscientist/state.json`.

The state is the whole truth of layer 1: goal, mode, current stage, status, visit counts,
transition history, the pending decision and the answered ones. It is written by atomic
replace after every change, so a crash leaves the previous complete state, never half of one.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic
from lightscientist_jupyter.errors import NO_PROJECT_REMEDY, ControllerError
from lightscientist_jupyter.values.permission import PermissionRequest, permission_of
from lightscientist_jupyter.vocab import (
    STORED_PROJECT_STATUSES,
    DecisionKind,
    Mode,
    ProjectStatus,
)

STATE_VERSION = 1

FINAL_STATUSES: tuple[ProjectStatus, ...] = (
    ProjectStatus.DONE,
    ProjectStatus.FAILED,
    ProjectStatus.CANCELLED,
)
"""Kept for the modules that import it; `vocab.FINAL_PROJECT_STATUSES` is the same set."""


@dataclasses.dataclass(frozen=True)
class PendingDecision:
    """A question waiting for a human: a gate to approve, or a project-level question."""

    id: str
    kind: DecisionKind
    stage: str
    question: str
    """What the human is asked, in one or two sentences."""
    summary: str = ""
    """For a gate: the worker's summary of what is being approved."""
    outputs: tuple[str, ...] = ()
    """For a gate: the files being approved, relative to the workspace."""
    proposed_next: str | None = None
    """For a gate: where an approval moves the project."""
    default_reject: str | None = None
    """For a gate: where a rejection without a target sends the project."""
    options: tuple[str, ...] = ()
    """For a question: the answers offered (free text is accepted too)."""
    requested_at: float = 0.0
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    """For a budget: `scope` (project or `stage X`), `key`, `limit`, `spent`."""
    permission: PermissionRequest | None = None
    """For a question that is a coding agent's permission request: the request (the tool
    call, an edit's texts, the agent's own options, which answer it)."""

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["kind"] = str(self.kind)  # plain JSON strings for events and the file
        d["outputs"] = list(self.outputs)
        d["options"] = list(self.options)
        d["permission"] = self.permission.to_dict() if self.permission is not None else None
        return d

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> PendingDecision:
        """Raises `ValueError` for an unknown `kind`."""
        fields = {f.name for f in dataclasses.fields(cls)}
        raw = {k: v for k, v in raw.items() if k in fields}
        raw["kind"] = DecisionKind(str(raw.get("kind")))
        raw["outputs"] = tuple(raw.get("outputs") or ())
        raw["options"] = tuple(raw.get("options") or ())
        raw["permission"] = permission_of(raw.get("permission"))
        return cls(**raw)


@dataclasses.dataclass
class ProjectState:
    """Layer 1's persistent state (mutated only by the controller, under its lock)."""

    goal: str
    mode: Mode
    stage: str
    stages_file: str
    status: ProjectStatus = ProjectStatus.RUNNING
    visits: dict[str, int] = dataclasses.field(default_factory=dict)
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Transitions: `{"from", "to", "by", "at"}`; `by` is start, finish, approve, reject, auto."""
    pending: PendingDecision | None = None
    decisions: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Answered decisions: `{"id", "kind", "stage", "approve", "comment", "to", "at", "source"}`."""
    feedback: str | None = None
    """A reviewer's comment waiting for the next worker of the current stage."""
    last_summary: dict[str, str] = dataclasses.field(default_factory=dict)
    """The latest accepted summary of each stage."""
    reason: str | None = None
    """Why the project failed or was cancelled."""
    created_at: float = dataclasses.field(default_factory=time.time)
    updated_at: float = dataclasses.field(default_factory=time.time)
    decision_counter: int = 0
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    """How the project runs: `model`, `base_url` (never a key)."""
    budget: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Limits set by `--budget` or a reply: `{"project": {usd, tokens, hours}, "stages":
    {stage: {usd, tokens}}}` (a stage's entry overrides the table's `budget`)."""
    usage: dict[str, Any] = dataclasses.field(default_factory=dict)
    """What the model calls cost (`controller.budget`): `total` and `visits` (per
    `stage#visit`) as `Usage.to_dict`, `runs` (run id -> seconds), `warned` (limits at 80 %)."""
    handoffs: list[str] = dataclasses.field(default_factory=list)
    """Stages handed to the researcher whenever the project enters them (`--handoff`, a
    table's `handoff = true`, `take STAGE`) until given back."""
    recall: dict[str, Any] = dataclasses.field(default_factory=dict)
    """What the current task recalled from the user's memory (`controller.memory_calls`):
    `{"task_id", "hits": [entry records]}`, kept so a resumed stage is told the same."""
    lessons: list[str] = dataclasses.field(default_factory=list)
    """The occasions lessons were drawn for (`done`): each once."""
    papers: list[str] = dataclasses.field(default_factory=list)
    """The cited works filed in the user's memory (a DOI, an arXiv id or a cite key)."""

    @property
    def visit(self) -> int:
        return self.visits.get(self.stage, 0)

    @property
    def task_id(self) -> str:
        return f"{self.stage}#{self.visit}"

    def answered(self, decision_id: str) -> dict[str, Any] | None:
        return next((d for d in self.decisions if d["id"] == decision_id), None)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["mode"], d["status"] = str(self.mode), str(self.status)
        d["pending"] = self.pending.to_dict() if self.pending else None
        return {"v": STATE_VERSION, **d}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ProjectState:
        """Raises `ValueError` for an unknown or absent mode or status, or an unknown
        decision kind."""
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in raw.items() if k in fields}
        values["mode"] = Mode(str(values.get("mode")))
        values["status"] = ProjectStatus(str(values.get("status")))
        if values.get("pending"):
            values["pending"] = PendingDecision.from_dict(values["pending"])
        return cls(**values)


def save_state(path: Path, state: ProjectState) -> None:
    state.updated_at = time.time()
    write_json_atomic(path, state.to_dict())


def load_state(path: Path) -> ProjectState:
    """Read a state file; a missing or damaged one is a `ControllerError` naming the file."""
    try:
        raw = json.loads(read_text(path))
    except FileNotFoundError:
        raise ControllerError(
            f"no LightScientist project in {path.parent.parent} "
            f"({path} does not exist); {NO_PROJECT_REMEDY}"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ControllerError(
            f"{path} is not valid JSON ({exc}); restore the file from a backup or start a new "
            "project in another folder"
        ) from None
    if not isinstance(raw, dict):
        raise ControllerError(
            f"{path} holds {type(raw).__name__}, not a project state "
            "(a JSON object); restore it or start a new project in another "
            "folder"
        )
    problem = shape_problem(raw)
    if problem:
        raise ControllerError(f"{path}: {problem}; {REPAIR}")
    try:
        return ProjectState.from_dict(raw)
    except ValueError as exc:
        raise ControllerError(f"{path}: {exc}; {REPAIR}") from None


REPAIR = (
    "fix that key in the file or restore the file from a backup "
    "(`lightscientist status` reads it again)"
)

_STR, _NUM, _INT = "a string", "a number", "an integer"
_KEYS: dict[str, tuple[str, bool]] = {  # key -> (expected type, required)
    "goal": (_STR, True),
    "mode": (f"one of {', '.join(Mode)}", True),
    "stage": (_STR, True),
    "stages_file": (_STR, True),
    "status": (f"one of {', '.join(STORED_PROJECT_STATUSES)}", True),
    "visits": ("an object of stage -> integer", False),
    "history": ("a list of objects", False),
    "pending": ("null or an object with id, kind, stage and question", False),
    "decisions": ("a list of objects", False),
    "feedback": ("null or a string", False),
    "last_summary": ("an object of stage -> string", False),
    "reason": ("null or a string", False),
    "created_at": (_NUM, False),
    "updated_at": (_NUM, False),
    "decision_counter": (_INT, False),
    "settings": ("an object", False),
    "budget": ("an object", False),
    "usage": ("an object", False),
    "handoffs": ("a list of stage ids (strings)", False),
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _fits(key: str, v: Any) -> bool:
    match key:
        case "goal" | "stage" | "stages_file":
            return isinstance(v, str)
        case "mode":
            return v in set(Mode)
        case "status":
            return v in set(STORED_PROJECT_STATUSES)
        case "visits":
            return isinstance(v, dict) and all(_is_int(n) for n in v.values())
        case "history" | "decisions":
            return isinstance(v, list) and all(isinstance(x, dict) for x in v)
        case "pending":
            return v is None or (
                isinstance(v, dict)
                and v.get("kind") in set(DecisionKind)
                and all(isinstance(v.get(k), str) for k in ("id", "stage", "question"))
            )
        case "feedback" | "reason":
            return v is None or isinstance(v, str)
        case "last_summary":
            return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
        case "created_at" | "updated_at":
            return isinstance(v, int | float) and not isinstance(v, bool)
        case "decision_counter":
            return _is_int(v)
        case "handoffs":
            return isinstance(v, list) and all(isinstance(x, str) for x in v)
        case _:
            return isinstance(v, dict)


def shape_problem(raw: dict[str, Any]) -> str | None:
    """What is wrong with a state file's keys (the first problem), or None."""
    missing = [k for k, (_, required) in _KEYS.items() if required and k not in raw]
    if missing:
        return f"lacks key(s) {', '.join(missing)}"
    for key, (expected, _) in _KEYS.items():
        if key in raw and not _fits(key, raw[key]):
            shown = json.dumps(raw[key], ensure_ascii=True)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return f"key '{key}' should be {expected}, not {shown}"
    return None
