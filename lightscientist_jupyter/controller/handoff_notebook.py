"""The notebook a stage handed to the researcher starts from: `<stage>.ipynb`.

When a stage becomes the researcher's (a `take`, or the project entering a stage marked for
them), the machine asks for this notebook (the `HandOverNotebook` effect) and the controller
writes it: a Markdown cell with the task a worker would get (the goal, the skill's brief,
the outputs to write, any feedback), a code cell loading what the earlier stages left on
disk, and one cell per output to fill in. It sits in the folder the stage's outputs share, so
its paths are computed from there: run in JupyterLab, whose kernel starts in the notebook's
folder, it finds the workspace one or more levels up.

It is the researcher's notebook, not a worker's: it carries no `written_by` mark, and a file
already at its place (a second visit, or one the researcher changed) is never written over.
`build` is pure; `write` alone touches the disk, through the guarded path.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller.goal import prompt_goal
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import DONE, Stage, StageTable
from lightscientist_jupyter.values import notebook
from lightscientist_jupyter.workspace import Workspace

BRIEF_CHARS = 6_000
"""A skill longer than this is cut in the task cell, which then names the whole file."""
PRINT_CHARS = 800
"""Characters of a text input the inputs cell prints."""
TEXT_SUFFIXES = (".md", ".txt", ".py", ".tex", ".bib", ".log", ".rst", ".yaml", ".yml", ".toml")
"""Inputs read as text (and printed shortened); others are named by path only."""


def notebook_path(stage: Stage) -> str:
    """Where the stage's notebook goes, relative to the workspace: `<stage>.ipynb` in the
    folder all its outputs share (the workspace's root when they share none)."""
    folders = [posixpath.dirname(out.lstrip("/")) for out in stage.outputs]
    common = posixpath.commonpath(folders) if folders else ""
    return posixpath.join(common, f"{stage.id}{notebook.SUFFIX}")


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


def read_brief(stage: Stage) -> str:
    """The text of the stage's skill file, '' when it cannot be read."""
    try:
        return stage.skill.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def variable_name(rel: str) -> str:
    """A Python name for the file `rel` (its stem, made an identifier)."""
    stem = PurePosixPath(rel).stem
    name = "".join(c if c.isalnum() else "_" for c in stem).strip("_") or "data"
    return name if not name[0].isdigit() else f"f_{name}"


def build(
    stage: Stage,
    goal: str,
    skill: str,
    earlier: Sequence[str],
    feedback: str = "",
) -> Any:
    """The notebook of `stage` (pure): `skill` is its brief's text ('' when unreadable),
    `earlier` the earlier stages' results on disk (workspace-relative)."""
    cells = [("task", "markdown", _task(stage, goal, skill, feedback))]
    cells += [(cell_id, "code", source) for cell_id, source in code_cells(stage, skill, earlier)]
    return notebook.new_notebook(cells, written_by=None)


def code_cells(
    stage: Stage, skill: str, earlier: Sequence[str], root: str | None = None
) -> list[tuple[str, str]]:
    """The `(id, source)` of the code cells: `inputs`, then `output-1`… With `root` (the
    workspace's absolute path) they run from anywhere, as the card's single cell does; else
    they find the workspace from the notebook's folder."""
    if root is None:
        where = notebook_path(stage)
        up = "/".join([".."] * len(PurePosixPath(where).parent.parts)) or "."
        head = [
            f"# The workspace is {up!r} from this notebook's folder (JupyterLab runs it there);",
            "# every path below is relative to the workspace.",
        ]
        found = [f'assert (root / {where!r}).exists(), "run this notebook from its own folder"']
    else:
        up, head, found = root, ["# every path below is relative to the workspace"], []
    names = _names([*earlier, *stage.outputs])
    tables = any(p.endswith(".csv") for p in [*earlier, *stage.outputs])
    imports = [
        *(["import json"] if any(p.endswith(".json") for p in earlier) else []),
        "from pathlib import Path",
        "",
        *(["import pandas as pd", ""] if tables else []),
        f"root = Path({up!r})",
        *found,
        "",
    ]
    cells = [("inputs", "\n".join([*head, *imports, *_loads(earlier, names)]))]
    for index, rel in enumerate(stage.outputs, start=1):
        cells.append((f"output-{index}", _output(stage, rel, names[rel], skill)))
    return cells


def write(ws: Workspace, state: ProjectState, table: StageTable, stage_id: str) -> bool:
    """Write the notebook of `stage_id` unless a file is at its place; True when written."""
    tree = Beneath(ws.root)
    where = notebook_path(table[stage_id])
    if tree.lstat(where) is not None:
        return False
    tree.write_text_atomic(where, _text(ws, state, table, stage_id))
    return True


def untouched(ws: Workspace, state: ProjectState, table: StageTable, stage_id: str) -> bool:
    """Whether the notebook of `stage_id` is on disk just as `write` made it: the researcher
    has neither changed nor run it (a give-back then does not name it as theirs)."""
    try:
        text = Beneath(ws.root).read_text(notebook_path(table[stage_id]))
    except (OSError, UnicodeDecodeError):
        return False
    return text == _text(ws, state, table, stage_id)


def _text(ws: Workspace, state: ProjectState, table: StageTable, stage_id: str) -> str:
    stage = table[stage_id]
    earlier = earlier_results(ws, state, table, stage_id)
    goal = prompt_goal(state.goal)
    return notebook.dumps(build(stage, goal, read_brief(stage), earlier, state.feedback or ""))


def _names(paths: Sequence[str]) -> dict[str, str]:
    """A distinct variable name per path (`brief`, `brief_2`… for files of one stem)."""
    names: dict[str, str] = {}
    for rel in dict.fromkeys(paths):
        base = name = variable_name(rel)
        n = 1
        while name in names.values():
            n += 1
            name = f"{base}_{n}"
        names[rel] = name
    return names


def _task(stage: Stage, goal: str, skill: str, feedback: str) -> str:
    lines = [
        f"# `{stage.id}`: yours to do by hand",
        "",
        f"**Goal.** {goal}",
        "",
        "**Write** (each a non-empty file; paths from the workspace's root):",
        *[f"- `{out}`" for out in stage.outputs],
        "",
        "Fill the cells below, run the notebook to the end, then deliver:",
        "",
        f'`%lightscientist deliver --summary "what you did and found" --next {stage.next}`',
        f"(allowed next stages: {', '.join(stage.allowed)}). Name this notebook with",
        "`--output` to deliver it too: it must then have run every cell without an error.",
    ]
    if feedback:
        lines += ["", "## Feedback for this stage", "", feedback]
    lines += ["", f"## The brief (`{stage.skill}`)", ""]
    if not skill:
        lines.append(f"(the skill file {stage.skill} cannot be read)")
    elif len(skill) > BRIEF_CHARS:
        lines += [skill[:BRIEF_CHARS], "", f"… (the rest is in `{stage.skill}`)"]
    else:
        lines.append(skill.rstrip())
    return "\n".join(lines)


def _loads(earlier: Sequence[str], names: dict[str, str]) -> list[str]:
    if not earlier:
        return ["# the earlier stages left no results on disk"]
    lines = ["# what the earlier stages left"]
    for rel in earlier:
        name = names[rel]
        if rel.endswith(".csv"):
            lines += [f"{name} = pd.read_csv(root / {rel!r})", f"display({name}.head())"]
        elif rel.endswith(".json"):
            lines.append(f"{name} = json.loads((root / {rel!r}).read_text(encoding='utf-8'))")
        elif rel.endswith(TEXT_SUFFIXES):
            lines += [
                f"{name} = (root / {rel!r}).read_text(encoding='utf-8')",
                f"print({'--- ' + rel!r}, {name}[:{PRINT_CHARS}], sep='\\n')",
            ]
        else:
            lines.append(f"{name}_path = root / {rel!r}")
    return lines


def _said(skill: str, rel: str) -> str:
    """The first line of the brief's Write section naming `rel` ('' when none does)."""
    writing = False
    for line in skill.splitlines():
        if line.startswith("#"):
            writing = "write" in line.lower()
        elif writing and rel in line:
            return line.strip()[:200]
    return ""


def _output(stage: Stage, rel: str, name: str, skill: str) -> str:
    said = _said(skill, rel)
    lines = [f"# {rel}: a required output of {stage.id!r}; write it here (non-empty)."]
    if said:
        lines.append(f"# the brief: {said}")
    lines.append(f"{name}_path = root / {rel!r}")
    if rel.endswith(".csv"):
        lines.append(f"# pd.DataFrame(...).to_csv({name}_path, index=False)")
    else:
        lines.append(f'# {name}_path.write_text("...", encoding="utf-8")')
    return "\n".join(lines)
