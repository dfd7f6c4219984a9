"""The values that pass through `machine.step`: actions in, effects out.

Each is a small frozen dataclass. An action is one request made of layer 1 (by layer 2, a
human or the run loop), carrying every outside fact the step needs, the time included; an
effect is one thing the controller must do after the step, in the order given.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lightscientist_jupyter.controller.process_log import ProcessEntry
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.vocab import EventType, MemoryKind, ProjectStatus, ReplySource

# ---------------------------------------------------------------------------- actions


@dataclasses.dataclass(frozen=True)
class Start:
    """Enter the stage a new project's state names (its first stage)."""

    at: float


@dataclasses.dataclass(frozen=True)
class Finish:
    """Layer 2's `finish_stage`: finish the current stage, optionally suggesting the next."""

    summary: str
    outputs: tuple[str, ...]
    """Outputs the supervisor names beyond the stage's required ones."""
    next_stage: str | None
    """The suggested next stage; None means the stage's default `next`."""
    missing: tuple[str, ...]
    """Required outputs the caller found missing or empty (`rules.missing_outputs`)."""
    at: float
    missing_listed: tuple[str, ...] = ()
    """Other outputs in `outputs` the caller found missing or empty (`rules.missing_files`)."""
    by: str = "supervisor"
    """Who did the stage: `supervisor` (its workers) or `researcher` (a `deliver`)."""
    failed_checks: tuple[str, ...] = ()
    """Problems the stage's `checks` found (`checks.problems`), each naming its item."""
    via: str = ""
    """For a `deliver`: the front door it came from (a `ReplySource`), so that a refusal
    tells the researcher how to deliver again there."""


@dataclasses.dataclass(frozen=True)
class Ask:
    """Layer 2's `request_user_decision`: a project-level question for the human."""

    question: str
    options: tuple[str, ...]
    at: float
    permission: PermissionRequest | None = None
    """A coding agent's permission request the question is (its options answer it)."""


@dataclasses.dataclass(frozen=True)
class Reply:
    """A human's answer to the pending decision (a gate or a question)."""

    approve: bool
    comment: str
    to_stage: str | None
    """For a gate rejection: where to go back to; None means the stage before the gate."""
    decision_id: str | None
    """The decision the reply is for; None means whatever is pending."""
    source: ReplySource
    """The door the reply came through, recorded with the decision."""
    at: float
    budget: dict[str, float] | None = None
    """For a budget decision: the new limits (`reply y --budget …`)."""


@dataclasses.dataclass(frozen=True)
class End:
    """Stop the project for good (`failed` or `cancelled`), or until a resume (`stopped`,
    which keeps the pending decision); a final status is kept."""

    status: ProjectStatus
    reason: str


@dataclasses.dataclass(frozen=True)
class Reopen:
    """Set a failed or cancelled project running again at its current stage (a failed one
    says what failed before: the stage starts again from its start)."""


@dataclasses.dataclass(frozen=True)
class Take:
    """The researcher takes a stage: the current one now (None), or `stage` when reached."""

    stage: str | None
    source: ReplySource
    at: float


@dataclasses.dataclass(frozen=True)
class Deliver:
    """The researcher delivers the stage they took: `finish` (by `researcher`) is checked
    exactly as a worker's finish."""

    finish: Finish
    source: ReplySource


@dataclasses.dataclass(frozen=True)
class GiveBack:
    """The researcher returns the stage they took to the workers."""

    written: tuple[str, ...]
    """Files the researcher wrote meanwhile (the caller looked), named in the workers' task."""
    source: ReplySource
    at: float
    workers_wrote: tuple[str, ...] = ()
    """Files the workers running when the researcher took the stage wrote before they
    stopped: named apart, never as the researcher's."""


@dataclasses.dataclass(frozen=True)
class Charge:
    """One model call's usage (`runtime.metering.meter.UsageMeter`'s line): add it, check
    budgets."""

    call: dict[str, Any]
    at: float


@dataclasses.dataclass(frozen=True)
class SetBudget:
    """`--budget` of `research` / `resume`: set limits (`controller.budget.set_budget`)."""

    limits: dict[str, float]


@dataclasses.dataclass(frozen=True)
class KeepSettings:
    """Run settings given to `resume` that later runs keep (`--checkpoints`, redacted)."""

    values: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Revise:
    """A review stage's round ended below its `accept` with rounds left (`controller.review`):
    the paper goes back to `target` with the reviewers' required changes as its feedback."""

    stage: str
    """The review stage the round belongs to (a step at another stage is refused)."""
    target: str
    summary: str
    """One line: the round, its mean against the bar."""
    feedback: str
    """The next visit's task feedback: the required changes."""
    at: float


# fmt: skip below: the formatter would give each of the thirteen names a line of its own
Action = (
    Start | Finish | Ask | Reply | End | Reopen | Charge | SetBudget | KeepSettings | Take
    | Deliver | GiveBack | Revise
)  # fmt: skip

# ---------------------------------------------------------------------------- effects


@dataclasses.dataclass(frozen=True)
class SaveState:
    """Write the new state to `state.json` (atomically) and wake whoever waits for a change.
    `soon`: only usage totals changed (the ledger holds the call); writing them may wait a
    moment and be folded into the next write (see `ResearchController._save`)."""

    soon: bool = False


@dataclasses.dataclass(frozen=True)
class Emit:
    """Emit one event on the bus."""

    type: EventType
    message: str
    stage: str | None
    task_id: str | None = None
    """None leaves the bus's own task id."""
    data: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class AppendProcess:
    """Append an entry to `PROCESS.md` (skipped there when its key is already written)."""

    entry: ProcessEntry


@dataclasses.dataclass(frozen=True)
class NotifyAnswer:
    """Tell the answer listeners (the supervisor) that a project-level question was answered."""

    answer: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Respond:
    """What the caller is told: whether the action took effect, and a message to act on."""

    ok: bool
    message: str
    decision_id: str | None = None
    answer: dict[str, Any] | None = None
    """For an answered question: the decision as recorded."""


@dataclasses.dataclass(frozen=True)
class TakeSnapshot:
    """Record the workspace in its history (`history.snapshots`), once the step's other
    effects are carried out, so the snapshot holds the state and PROCESS.md they wrote."""

    stage: str
    visit: int
    event: str
    """start, finish, approved or rejected."""


@dataclasses.dataclass(frozen=True)
class HandOverNotebook:
    """Write the notebook the researcher does the handed `stage` in
    (`controller.handoff_notebook.write`), unless a file is already at its place."""

    stage: str


@dataclasses.dataclass(frozen=True)
class FileMemory:
    """File a stage visit's result in the user's memory (`controller.memory_calls`), once the
    step's snapshots are taken: a finished stage's entry as a `finding`, a rejected gate's
    as a `lesson` with the researcher's reason. The controller skips it when memory is off
    for the run or the stage."""

    kind: MemoryKind
    key: str
    """Unique within the project (`finding:idea.select#1`, `lesson:reject:d3`)."""
    stage: str
    visit: int
    text: str


Effect = (
    SaveState
    | Emit
    | AppendProcess
    | NotifyAnswer
    | Respond
    | TakeSnapshot
    | HandOverNotebook
    | FileMemory
)
