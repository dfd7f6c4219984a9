"""The messages that cross the layer 1 / layer 2 boundary.

Layer 1 (the controller) builds a `StageTask` and hands it down; layer 2 answers with a
`StageResult` through the controller's `finish_stage` tool. They live here, in the layer that
receives the task, so that imports keep pointing down.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal


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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


StageStatus = Literal["completed", "failed"]


@dataclasses.dataclass(frozen=True)
class StageResult:
    """What layer 2 reports when it finishes a stage."""

    status: StageStatus
    summary: str
    """Five to ten lines."""
    outputs: tuple[str, ...]
    next_stage: str | None = None
    """The suggested next stage; layer 1 decides."""
