"""The checks of a new project that need no model library: what `start` in a notebook refuses
at once, before the run's thread imports LangGraph, deepagents and the model provider.

`check_new` runs the checks `Project.create` makes before it writes anything — the goal, the
workspace folder, the stage table and start stage, the mode, the model spec (without
importing its provider), `--replies`, `--budget`/`--price` — so bad input is still one line
in the cell. `Project.create` makes them all again on the run's thread (and the model check,
which needs the provider), so what changed meanwhile is still caught there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightscientist_jupyter.app import usage
from lightscientist_jupyter.app.replies import check as check_replies
from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.controller.goal import check_goal
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.runtime import job_limit
from lightscientist_jupyter.runtime.models import check_spec
from lightscientist_jupyter.workspace import Workspace, folder_problem


def usable(root: str | Path, *, create: bool = False) -> Workspace:
    """The workspace at `root`, checked for a run (`BadInput` naming what to fix);
    `create` makes the folder when it is missing."""
    workspace = Workspace.at(root)
    problem = folder_problem(workspace.root, write=True)
    if problem is None and create:
        try:
            workspace.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            problem = f"the workspace {workspace.root} cannot be created ({exc.strerror})"
        else:
            problem = folder_problem(workspace.root, write=True)
    if problem:
        raise BadInput(problem)
    return workspace


def check_new(
    root: str | Path,
    goal: str,
    *,
    mode: str = "manual",
    stage: str | None = None,
    stages: Any = None,
    model: str | None = None,
    base_url: str | None = None,
    options: dict[str, Any] | None = None,
) -> StageTable:
    """Raise what `Project.create` would raise on this input before writing a file (the
    model check aside); the workspace folder is made when missing, as there. Returns the
    stage table."""
    options = options or {}
    check_goal(goal, options.get("max_goal_chars"))
    workspace = usable(root, create=True)
    table = load_table(stages)
    spec = check_spec(model, base_url=base_url)
    check_replies(options.get("replies"), spec)
    usage.check_options(options.get("budget"), options.get("price"))
    job_limit.settings(options.get("job_time_limit"))
    ResearchController.check_new(
        workspace,
        goal,
        mode=mode,
        table=table,
        start_stage=stage,
        max_goal_chars=options.get("max_goal_chars"),
    )
    return table
