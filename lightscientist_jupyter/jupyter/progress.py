"""Progress in a person's terms, for both screens: "stage 7 of 14" and the wall time spent in
each stage (all its visits), from the state's transitions.

A stage's time runs from each transition into it to the next transition out of it; the
current stage's open visit runs to now while the project is running or waits for a reply
(the time at a gate counts: that is where the wall clock went), else to its last update.
The side panel gets `view()` from the server (`server.data.project_detail`), the dashboard's
run controls from `run_controls.run_view`; both say the same.
"""

from __future__ import annotations

import time

from lightscientist_jupyter.controller import ProjectState, StageTable
from lightscientist_jupyter.jupyter.server.answers import Progress

OPEN_STATUSES = ("running", "waiting_user")


def duration(seconds: float) -> str:
    """12s, 3m05s, 1h02m."""
    seconds = int(max(0.0, seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def view(state: ProjectState, table: StageTable, now: float | None = None) -> Progress:
    """Stage n of m, the time in the current visit, and the stages with time spent, in table
    order."""
    now = time.time() if now is None else now
    ids = table.ids()
    spent: dict[str, float] = {}
    current_s = 0.0
    moves = state.history
    for i, move in enumerate(moves):
        stage = move.get("to")
        start = move.get("at")
        if stage not in ids or not isinstance(start, (int, float)):
            continue
        if i + 1 < len(moves):
            end = moves[i + 1].get("at", start)
        else:
            end = now if state.status in OPEN_STATUSES else state.updated_at
        seconds = max(0.0, float(end) - float(start))
        spent[stage] = spent.get(stage, 0.0) + seconds
        if i + 1 == len(moves) and stage == state.stage:
            current_s = seconds
    position = [ids.index(state.stage) + 1, len(ids)] if state.stage in ids else None
    return {
        "position": position,
        "current_s": round(current_s, 1),
        "stages": [
            {"stage": s, "seconds": round(spent[s], 1), "visits": state.visits.get(s, 1)}
            for s in ids
            if s in spent
        ],
    }
