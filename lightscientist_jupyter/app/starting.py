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

Between the two, a kernel's `start` marks the folder (`mark_starting`): the project shows as
`starting` until its state is written, and the mark goes whatever the creation's outcome.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightscientist_jupyter.app import literature, sandboxing, usage
from lightscientist_jupyter.app import until as until_stage
from lightscientist_jupyter.app.replies import check as check_replies
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.controller.goal import check_goal
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.jobs import limit as job_limit
from lightscientist_jupyter.runtime.models.resolver import check_spec
from lightscientist_jupyter.workspace import STATE_DIR, Workspace, folder_problem


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


# ------------------------------------------------------------------ a project being created


def mark_starting(ws: Workspace, goal: str, mode: str) -> Callable[[], None]:
    """Say in the folder that this process is creating a project there (`starting.json`:
    the goal, the mode, the pid): a kernel's run creates it on its own thread, a second or
    so after `%lightscientist research` returned, and until then `status`, the side panel
    and the project list show it `starting` instead of no project at all. Returns what
    takes the mark away again (and the folders it made, when they stayed empty)."""
    made = [d for d in (ws.root, ws.state_dir) if not d.exists()]
    ws.root.mkdir(parents=True, exist_ok=True)  # checked by `check_new`, as `create` makes it
    files = Beneath(ws.root)
    files.makedirs(STATE_DIR)
    mark = {
        "goal": goal,
        "mode": mode,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
    }
    files.write_text_atomic(_mark_path(ws), json.dumps(mark), durable=False)

    def unmark() -> None:
        files.unlink(_mark_path(ws))
        for folder in reversed(made):  # a creation that failed leaves the folder as it was
            with contextlib.suppress(OSError):
                folder.rmdir()

    return unmark


def starting(ws: Workspace) -> dict[str, Any] | None:
    """The mark of a project being created here (`mark_starting`), while there is no state
    yet and the process that wrote the mark lives; else None."""
    if ws.exists():
        return None
    try:
        mark = json.loads(Beneath(ws.root).read_text(_mark_path(ws)))
        os.kill(int(mark["pid"]), 0)  # a kernel that died while creating it: no project
    except PermissionError:
        pass  # a process of another user's: it lives
    except (OSError, ValueError, TypeError, KeyError, PathRefused):
        return None
    return mark if isinstance(mark, dict) else None


def _mark_path(ws: Workspace) -> str:
    return ws.starting_file.relative_to(ws.root).as_posix()
