"""`--until STAGE`: stop with status `paused` once STAGE finishes (`resume` goes on).

The request is kept in the project's settings (`pause_after`) until the pause happens, so
that it outlives the process that was asked — a kernel restarted, a run killed — and the
screens can say "pausing after STAGE" after a reload."""

from __future__ import annotations

from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import BadInput


def check(table: StageTable, until: str | None) -> str | None:
    """`until` itself, once it is known to be a stage of `table` (`BadInput` if not)."""
    if until and until not in table:
        raise BadInput(
            f"--until '{until}' is not a stage of {table.path}; choose one of "
            f"{', '.join(table.ids())}"
        )
    return until or None


KEY, SINCE = "pause_after", "pause_since"
"""The project settings that hold a pause request: the stage, and how many transitions the
project had made when it was asked (a finish of that stage after them serves it, even one a
reply made while no process ran the project)."""


def requested(controller: ResearchController) -> str | None:
    """The kept pause request, while it names a stage of the project's table."""
    stage = controller.state.settings.get(KEY)
    return str(stage) if stage and stage in controller.table else None


def since(controller: ResearchController) -> int:
    """Where to look for the finish that serves the request: its `pause_since`, else now."""
    now = len(controller.state.history)
    kept = controller.state.settings.get(SINCE)
    return min(now, int(kept)) if requested(controller) and isinstance(kept, int) else now


def keep(controller: ResearchController, stage: str | None) -> None:
    """Keep (or, with None, drop) the pause request."""
    if controller.state.settings.get(KEY) != stage:
        at = len(controller.state.history) if stage else None
        controller.keep_settings({KEY: stage, SINCE: at})


def for_run(controller: ResearchController, until: str | None) -> str | None:
    """The stage a run pauses after: `until` (checked, and kept as the request), else the
    request kept from before, else None."""
    if not until:
        return requested(controller)
    keep(controller, check(controller.table, until))
    return until


def pause_if_finished(controller: ResearchController, until: str | None, since: int) -> bool:
    """Pause the project when `until` finished after the first `since` transitions; whether
    it did."""
    if until is None:
        return False
    moves = controller.state.history[since:]
    if not any(m.get("from") == until for m in moves):
        return False
    keep(controller, None)  # the request is served (or the project ended first)
    if controller.status == "done":
        return False
    controller.pause(f"paused after {until} (--until); `lightscientist resume` goes on")
    return True
