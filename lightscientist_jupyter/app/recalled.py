"""What a stage was given from the user's memory, for the dashboard's gate card and the side
panel: the entries layer 1 recalled for the task header of the stage's current visit.

Read back from the project's event log: the latest `memory.recall` event whose data says it
was `"for": "task"` of that visit (its `task_id`, `stage#visit`). Reading goes back from the
end of the log no further than the time the project entered the visit (`read_tail`'s
`since`), so a stage that was given nothing costs only its own lines. Events are a side
channel: a hit of another shape is left out, and a log that cannot be read shows nothing
recalled, never an error.
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePath
from typing import Any

from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.events import read_tail
from lightscientist_jupyter.vocab import DecisionKind, EventType
from lightscientist_jupyter.workspace import Workspace

SHOWN_MAX = 20
"""The most entries shown (a task header recalls a handful)."""
SLACK_S = 1.0
"""Reading goes back this much before the visit began: an event's time is cut to the
microsecond, and the step's may come from another process's clock."""


@dataclasses.dataclass(frozen=True)
class Recalled:
    """An entry of the user's memory a stage's task was given."""

    id: int
    kind: str
    project: str
    """The folder's name of the project it came from, `-` for none."""
    text: str
    """As the event holds it (at most 200 characters)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def recalled_for(ws: Workspace, state: ProjectState) -> list[Recalled]:
    """The entries the current visit of the project's stage was given, in the order of its
    task header; none when it was given none (or the log does not say)."""
    task_id = state.task_id

    def keep(raw: dict[str, Any]) -> bool:
        data = raw.get("data")
        return (
            raw.get("type") == EventType.MEMORY_RECALL
            and isinstance(data, dict)
            and data.get("for") == "task"
            and data.get("task_id") == task_id
        )

    entered = entered_at(state)
    since = None if entered is None else entered - SLACK_S
    try:
        found = read_tail(ws.events_file, 1, keep, since=since)
    except OSError:  # a link planted as the log, say: the event views name it, not this card
        return []
    hits = found[0]["data"].get("hits") if found else None
    if not isinstance(hits, list):
        return []
    shown = [_recalled(hit) for hit in hits]
    return [r for r in shown if r is not None][:SHOWN_MAX]


def at_decision(ws: Workspace, state: ProjectState) -> list[Recalled]:
    """`recalled_for` while a gate or a stage's question waits (what its card shows), else
    none: the log is read only then."""
    pending = state.pending
    if pending is None or pending.kind not in (DecisionKind.GATE, DecisionKind.QUESTION):
        return []
    return recalled_for(ws, state)


def entered_at(state: ProjectState) -> float | None:
    """When the project entered its current stage's visit (its last step into the stage),
    None when its history does not say."""
    for step in reversed(state.history):
        if step.get("to") == state.stage:
            at = step.get("at")
            return float(at) if isinstance(at, int | float) else None
    return None


def _recalled(hit: Any) -> Recalled | None:
    if not isinstance(hit, dict):
        return None
    entry_id, kind, project, text = (hit.get(k) for k in ("id", "kind", "project", "text"))
    if not isinstance(entry_id, int) or not isinstance(kind, str) or not isinstance(text, str):
        return None
    name = PurePath(project).name if isinstance(project, str) and project else ""
    return Recalled(entry_id, kind, name or "-", text)
