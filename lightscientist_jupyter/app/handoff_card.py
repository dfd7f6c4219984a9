"""What the researcher is handed with a stage: the card's data and a skeleton cell.

The same task a worker would get — the goal, the stage's skill, the PROCESS.md digest, the
required outputs (each with whether it is ready on disk), the allowed next stages — as one
plain dict, drawn by the dashboard's hand-over card and by the side panel (from disk, so it
works without a kernel); and a ready-to-edit Python cell that names the output paths and
loads the previous stages' results with pandas (beside the stage's own notebook, which
`controller.handoff_notebook` writes and the cell names).
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter._fs import missing_files, read_text
from lightscientist_jupyter.controller.goal import prompt_goal
from lightscientist_jupyter.controller.handoff_notebook import (
    code_cells,
    earlier_results,
    notebook_path,
    read_brief,
)
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.supervisor.prompts import process_digest
from lightscientist_jupyter.vocab import DecisionKind
from lightscientist_jupyter.workspace import Workspace

SKILL_CHARS = 20_000
"""A skill file longer than this is cut (the card links the file)."""


def card(ws: Workspace, state: ProjectState, table: StageTable) -> dict[str, Any] | None:
    """The hand-over card of the stage the researcher holds, or None when none is handed."""
    pending = state.pending
    if pending is None or pending.kind != DecisionKind.HANDOFF or pending.stage not in table:
        return None
    stage = table[pending.stage]
    missing = {m.rsplit(" (", 1)[0] for m in missing_files(stage.outputs, ws.root)}
    try:
        skill = stage.skill.read_text(encoding="utf-8")[:SKILL_CHARS]
    except OSError:
        skill = f"(the skill file {stage.skill} cannot be read)"
    try:
        digest = process_digest(read_text(ws.process_md))
    except OSError:
        digest = ""
    return {
        "decision_id": pending.id,
        "stage": stage.id,
        "visit": state.visit,
        "goal": prompt_goal(state.goal),
        "skill_path": str(stage.skill),
        "skill": skill,
        "digest": digest,
        "outputs": [{"path": p, "ready": p not in missing} for p in stage.outputs],
        "default_next": stage.next,
        "allowed_next": list(stage.allowed),
        "feedback": state.feedback or "",
        "skeleton": skeleton(ws, state, table, stage.id),
    }


def skeleton(ws: Workspace, state: ProjectState, table: StageTable, stage_id: str) -> str:
    """A cell to start from: the code cells of the stage's notebook as one, with the
    workspace's absolute path, and how to deliver."""
    stage = table[stage_id]
    earlier = earlier_results(ws, state, table, stage_id)
    cells = code_cells(stage, read_brief(stage), earlier, str(ws.root))
    lines = [
        f"# LightScientist: '{stage_id}' is yours. Write its outputs, then deliver.",
        f"# (the same task as a notebook, open it in JupyterLab: {notebook_path(stage)})",
        "\n\n".join(source for _id, source in cells),
        "",
        f'# then: %lightscientist deliver --summary "what you did" --next {stage.next}',
        f"# (allowed next stages: {', '.join(stage.allowed)})",
    ]
    return "\n".join(lines) + "\n"
