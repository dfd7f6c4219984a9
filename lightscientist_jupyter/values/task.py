"""The messages that cross the layer 1 / layer 2 boundary.

Layer 1 (the controller) builds a `StageTask` and hands it down; layer 2 answers with a
`StageResult`, and moves the project only through the `StageHost` it was handed (the
controller's two tools). They live in this leaf, below both layers, so that the layer that
builds a task and the one that receives it import them alike and imports keep pointing
down.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from typing import Any, Protocol

from lightscientist_jupyter.memory.entries import Entry
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.values.review import MetaRecord, ReviewSpec
from lightscientist_jupyter.values.search import Expansion, SearchSpec, Tree
from lightscientist_jupyter.vocab import StageOutcome

LESSONS_STAGE = "lessons"
"""The stage a project's lessons worker is filed under (`supervisor.lessons`); no table's."""


@dataclasses.dataclass(frozen=True)
class StageTask:
    """Everything a supervisor needs to run one stage; the skill is a path, never inlined."""

    goal: str
    stage: str
    skill_path: str
    outputs: tuple[str, ...]
    """Required output paths, relative to the workspace."""
    default_next: str
    allowed_next: tuple[str, ...]
    workspace: str
    process_md: str
    visit: int = 1
    """How many times this stage has been entered, this time included."""
    feedback: str | None = None
    """A reviewer's comment from a rejected gate, for the next worker to act on."""
    task_id: str = ""
    """`<stage>#<visit>`: names this run of the stage in events and records."""
    network: bool = False
    """The stage's `network`: its workers' commands may use the network."""
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The stage's `limits` for its workers' commands."""
    search: SearchSpec | None = None
    """A search stage's `search` table: layer 2 runs its nodes before its worker."""
    review: ReviewSpec | None = None
    """A review stage's `review` table: layer 2 runs its reviewers before its worker."""
    recalled: tuple[Entry, ...] = ()
    """Entries of earlier projects recalled from the user's memory for this task (layer 1,
    `controller.memory_calls`); its workers' and the supervisor's headers carry them."""
    memory: bool = True
    """Whether the stage uses the user's memory: its workers get the `recall` tool."""
    agent: AgentSpec | None = None
    """The coding agent that works the stage (its `agent` key); None: the built-in worker."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def next_stage_refusal(
    stage: str, next_stage: str, allowed: Sequence[str], default: str
) -> str | None:
    """Why `next_stage` cannot follow `stage`, or None when it may: layer 1's words when it
    refuses a finish (`controller.rules`), and a coding agent's when its `complete_stage`
    names a stage its task does not allow (`runtime.acp.worker_tools`)."""
    if next_stage in allowed:
        return None
    return (
        f"'{next_stage}' is not an allowed next stage of '{stage}'; choose one "
        f"of {', '.join(allowed)} (default: {default})"
    )


@dataclasses.dataclass(frozen=True)
class StageResult:
    """What layer 2 reports when it stops working on a stage."""

    status: StageOutcome
    summary: str
    """Five to ten lines (or the reason of a failure)."""
    outputs: tuple[str, ...] = ()
    next_stage: str | None = None
    """The suggested next stage; layer 1 decided."""


class FinishReply(Protocol):
    """Layer 1's answer to a finish: accepted (the project moved) or refused, and why."""

    @property
    def accepted(self) -> bool: ...

    @property
    def message(self) -> str: ...


class StageHost(Protocol):
    """Layer 1 as layer 2 sees it: two tools, a search stage's tree, a review stage's
    rounds, and where the project stands."""

    def search_next(self, live: Collection[str] = ()) -> list[Expansion]:
        """The nodes of the search to start now (`live`: the nodes layer 2 watches)."""
        ...

    def search_node_started(self, node: str, job: str | None = None) -> None: ...

    def search_node_ended(
        self,
        node: str,
        *,
        metric: float | None,
        summary: str = "",
        files: Sequence[str] = (),
        cancelled: bool = False,
        job: str | None = None,
    ) -> str | None:
        """Record how node `node` ended; returns why the search is over, or None."""
        ...

    def search_tree(self) -> Tree | None: ...

    def search_over(self) -> str | None:
        """Why the search is over, or None while it goes on."""
        ...

    def review_round_over(self) -> MetaRecord:
        """Aggregate the round's reviews (the reviewers have all ended) and act on it."""
        ...

    def finish_stage(
        self, summary: str, outputs: Sequence[str] = (), next_stage: str | None = None
    ) -> FinishReply: ...

    def request_user_decision(
        self,
        question: str,
        options: Sequence[str] = (),
        permission: PermissionRequest | None = None,
    ) -> str: ...

    @property
    def mode(self) -> str:
        """The project's `Mode` (`auto`: nothing is asked of the researcher but a budget)."""

    @property
    def task_id(self) -> str: ...

    @property
    def status(self) -> str:
        """The project's `ProjectStatus`."""

    @property
    def pending_kind(self) -> str | None:
        """The `DecisionKind` of a pending human decision, else None."""

    @property
    def pending_question(self) -> str | None:
        """The question of a pending human decision, else None."""

    def settled_status(self) -> str:
        """`status` once a step of layer 1 in progress has carried out all its effects: a
        reply that set the project running has queued its `user_answered` event by then."""
        ...
