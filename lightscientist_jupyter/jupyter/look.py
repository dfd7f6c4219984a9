"""The one status vocabulary of the dashboard and the side panel, in words a person uses,
and the state each stage of the graph is drawn in (`stage_states`: the dashboard draws it,
the server sends it to the panel).

The side panel spells the same table in `labextension/src/dom.ts` (`STATUS_WORDS`);
`tests/jupyter/test_look.py` keeps the two equal. Colours are not here: they are classes of
`dashboard/style/theme.css` (`ls-chip[data-status=…]`), from JupyterLab's theme variables.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any, Literal

from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.vocab import ProjectStatus

STATUS_WORDS: dict[str, str] = {
    "running": "running",
    "waiting_user": "waiting for you",
    "done": "done",
    "failed": "failed",
    "cancelled": "cancelled",
    "stopped": "stopped",
    "paused": "paused",
    "interrupted": "interrupted",
    "starting": "starting",
}


DOOR_WORDS: dict[str, str] = {
    "cli": "from the command line",
    "magic": "with %lightscientist",
    "api": "from Python",
    "widget": "from the dashboard",
    "dashboard": "from the dashboard",
    "panel": "from the side panel",
}
"""Where a reply came from (`vocab.ReplySource`), as a sentence goes on: "approved … from
the side panel"."""


def verdict_words(decision: Mapping[str, Any]) -> str:
    """How a decision was answered: "approved" or "rejected", for a question "answered yes"
    or "answered no" (the gate card's folded line, the dashboard's verdict, the timeline)."""
    yes = bool(decision.get("approve"))
    if decision.get("kind") == "question":
        return "answered yes" if yes else "answered no"
    return "approved" if yes else "rejected"


def reply_words(approve: bool, kind: str, stage: str) -> str:
    """A reply just sent, in words: "Approved idea.gate", "Answered yes to experiment.loop"."""
    verdict = verdict_words({"approve": approve, "kind": kind})
    return f"{verdict.capitalize()} {'to ' if kind == 'question' else ''}{stage}"


def door_words(source: object) -> str:
    """`cli` → "from the command line"; an unknown door is named as it is."""
    return DOOR_WORDS.get(str(source), f"via {source}")


def status_words(status: str | None) -> str:
    """`waiting_user` → "waiting for you"; an unknown status is shown as it is."""
    if not status:
        return "?"
    return STATUS_WORDS.get(str(status), str(status))


def chip(text: str, *, status: str | None = None, title: str = "", cls: str = "") -> str:
    """One `ls-chip` (with its status dot when `status` is given), text escaped."""
    attrs = f' data-status="{html.escape(str(status))}"' if status else ""
    attrs += f' title="{html.escape(title)}"' if title else ""
    classes = f"ls-chip {cls}".strip()
    return f'<span class="{classes}"{attrs}>{html.escape(text)}</span>'


StageState = Literal["pending", "visited", "current", "waiting", "failed", "done"]
"""How a stage is drawn."""
_SHOWN_AS: dict[str, StageState] = {
    ProjectStatus.WAITING_USER: "waiting",
    ProjectStatus.FAILED: "failed",
    ProjectStatus.CANCELLED: "failed",
}
"""The drawing state of the current stage by project status (otherwise `current`)."""


def stage_states(table: StageTable, state: Any | None) -> dict[str, StageState]:
    """The drawing state of every stage from a `ProjectState` (or None: all pending)."""
    states: dict[str, StageState] = {s: "pending" for s in [*table.ids(), DONE]}
    if state is None:
        return states
    for step in state.history:
        if step.get("to") in states:
            states[step["to"]] = "visited"
    current = state.stage
    if current == DONE or state.status == ProjectStatus.DONE:
        states[DONE] = "done"
    elif current in states:
        states[current] = _SHOWN_AS.get(state.status, "current")
    return states
