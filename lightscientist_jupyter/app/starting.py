"""The checks of a new project, made before anything is written: bad input leaves the folder
exactly as it was (absent when it was absent), so the corrected command then works.

`check_new` checks the goal, the workspace folder (or where it would be made), the stage table,
the mode, the start stage, `--handoff` and `--until` stages, the model spec (without importing
its provider), `--replies`, `--budget`/`--price`, `--library`, the sandbox options,
`--job-time-limit` and the checkpoints URL (a SQLite path where the database can be). It needs
no model library, so `start` in a notebook refuses bad input at once, before the run's thread
imports LangGraph, deepagents and the model provider. `Project.create` runs it again on that
thread, then the checks that need the provider or the network (the model and its tool calls, a
PostgreSQL server), and only then makes the folder.

Between the two, a kernel's `start` marks the folder (`starting_mark.mark_starting`): the
project shows as `starting` until its state is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightscientist_jupyter.app import literature, sandboxing, usage
from lightscientist_jupyter.app import until as until_stage
from lightscientist_jupyter.app.replies import check as check_replies
from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.controller.goal import check_goal
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.jobs import limit as job_limit
from lightscientist_jupyter.runtime.models.resolver import check_spec
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
    """Raise what `Project.create` would raise on this input, the model check and a
    PostgreSQL server aside, without writing or making anything (`options`: the keyword
    options of `create`). Returns the stage table."""
    options = options or {}
    check_goal(goal, options.get("max_goal_chars"))
    workspace = usable(root)
    if stages is not None and not Path(stages).expanduser().is_file():
        raise BadInput(f"--stages {stages} is not a file; give the path of a stage table (TOML)")
    table = load_table(stages)
    ResearchController.check_new(
        workspace,
        goal,
        mode=mode,
        table=table,
        start_stage=stage,
        max_goal_chars=options.get("max_goal_chars"),
        handoffs=options.get("handoffs") or (),
    )
    until_stage.check(table, options.get("until"))
    spec = check_spec(model, base_url=base_url)
    check_replies(options.get("replies"), spec)
    usage.check_options(options.get("budget"), options.get("price"))
    literature.check_library(options.get("library"))
    sandboxing.settings(
        table, options.get("sandbox"), options.get("allow_network"), options.get("limits")
    )
    job_limit.settings(options.get("job_time_limit"))
    checkpoint_url.check_new(workspace, options.get("checkpoints"))
    return table
