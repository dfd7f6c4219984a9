"""What the researcher is handed with a stage: the card's data and a skeleton cell.

The same task a worker would get — the goal, the stage's skill, the PROCESS.md digest, the
required outputs (each with whether it is ready on disk), the allowed next stages — as one
plain dict, drawn by the dashboard's hand-over card and by the side panel (from disk, so it
works without a kernel); and a ready-to-edit Python cell that names the output paths and
loads the previous stages' results with pandas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import missing_files, read_text
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller.goal import prompt_goal
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import DONE, StageTable
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


def earlier_results(
    ws: Workspace, state: ProjectState, table: StageTable, stage_id: str
) -> list[str]:
    """Outputs of the stages visited before `stage_id` that are on disk, oldest first."""
    seen: list[str] = []
    for step in state.history:
        sid = step.get("to")
        if sid and sid != DONE and sid != stage_id and sid in table and sid not in seen:
            seen.append(sid)
    tree = Beneath(ws.root)
    return [o for sid in seen for o in table[sid].outputs if tree.is_file(o)]


def skeleton(ws: Workspace, state: ProjectState, table: StageTable, stage_id: str) -> str:
    """A cell to start from: the previous results loaded, the outputs to write, the deliver."""
    stage = table[stage_id]
    lines = [
        f"# LightScientist: '{stage_id}' is yours. Write its outputs, then deliver.",
        "from pathlib import Path",
        "",
        "import pandas as pd",
        "",
        f"root = Path({str(ws.root)!r})",
        "",
        "# what the earlier stages left",
    ]
    for rel in earlier_results(ws, state, table, stage_id):
        name = _name(rel)
        if rel.endswith(".csv"):
            lines.append(f"{name} = pd.read_csv(root / {rel!r})")
        else:
            lines.append(f"{name} = (root / {rel!r}).read_text()")
    lines += ["", "# the outputs to write (each must exist and be non-empty)"]
    for rel in stage.outputs:
        lines.append(f"{_name(rel)}_path = root / {rel!r}")
    lines.append("")
    for rel in stage.outputs:
        if rel.endswith(".csv"):
            lines.append(f"# pd.DataFrame(...).to_csv({_name(rel)}_path, index=False)")
        else:
            lines.append(f'# {_name(rel)}_path.write_text("...")')
    lines += [
        "",
        f'# then: %lightscientist deliver --summary "what you did" --next {stage.next}',
        f"# (allowed next stages: {', '.join(stage.allowed)})",
    ]
    return "\n".join(lines) + "\n"


def _name(rel: str) -> str:
    stem = Path(rel).stem
    name = "".join(c if c.isalnum() else "_" for c in stem).strip("_") or "data"
    return name if not name[0].isdigit() else f"f_{name}"
