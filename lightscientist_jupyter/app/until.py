"""`--until STAGE`: stop with status `paused` once STAGE finishes (`resume` goes on)."""

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


def pause_if_finished(controller: ResearchController, until: str | None, since: int) -> bool:
    """Pause the project when `until` finished after the first `since` transitions; whether
    it did."""
    if until is None:
        return False
    moves = controller.state.history[since:]
    if not any(m.get("from") == until for m in moves):
        return False
    if controller.status == "done":
        return False
    controller.pause(f"paused after {until} (--until); `lightscientist resume` goes on")
    return True
