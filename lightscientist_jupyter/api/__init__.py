"""The Python API under the `%lightscientist` magic and beside the command line.

Two kinds of handle:

- `ProjectView` reads a project from its workspace on disk: status, events and workers as
  DataFrames, files. It works whoever runs the project (this kernel, `lightscientist` in a
  terminal, nobody), and its replies go to the inbox exactly as `lightscientist reply`
  writes them.
- `Run` is a project run by *this* process on a daemon thread: `start` and `resume` return
  one at once; `wait` blocks until a status is reached.

    >>> from lightscientist_jupyter import api
    >>> run = api.start("Does warmup help a small MLP?", workspace="study", mode="auto")
    >>> run.wait()
    'done'
    >>> api.events("study", tail=5, layer=1)       # a pandas DataFrame

With the extension loaded (`%load_ext lightscientist_jupyter`, or the LightScientist
kernel), a view or a run shown in a cell is its live dashboard.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lightscientist_jupyter.api.frames import events_frame, memory_frame, workers_frame
from lightscientist_jupyter.api.handoff import deliver, give_back, take
from lightscientist_jupyter.api.history import diff, fork, history, rewind
from lightscientist_jupyter.api.running import (
    Run,
    current,
    on_stop_all,
    open_project,
    resume,
    runs,
    session_defaults,
    start,
    stop_all,
    use_session_defaults,
)
from lightscientist_jupyter.api.usage import estimate, usage
from lightscientist_jupyter.api.views import ProjectView
from lightscientist_jupyter.app import memory as memories
from lightscientist_jupyter.app.commands import (
    LocalCancel,
    ModelCheck,
    Sent,
    check_model,
    worker_records,
)
from lightscientist_jupyter.app.ops.catalog import OPERATIONS, Door, Outcome
from lightscientist_jupyter.controller import StageTable, load_table, shipped_stages
from lightscientist_jupyter.errors import BadInput, Conflict
from lightscientist_jupyter.vocab import CancelSource, ReplySource

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BadInput",
    "Conflict",
    "ProjectView",
    "Sent",
    "Run",
    "ModelCheck",
    "cancel",
    "check",
    "check_model",
    "deliver",
    "give_back",
    "take",
    "current",
    "diff",
    "fork",
    "history",
    "jobs",
    "memory",
    "tree",
    "rewind",
    "events",
    "events_frame",
    "on_stop_all",
    "perform",
    "session_defaults",
    "use_session_defaults",
    "open_project",
    "reply",
    "resume",
    "runs",
    "shipped_stages",
    "stages",
    "start",
    "status",
    "stop_all",
    "usage",
    "estimate",
    "worker_records",
    "workers",
    "workers_frame",
]

Where = str | os.PathLike[str]


def status(workspace: Where = ".") -> dict[str, object]:
    """The project's status, as `lightscientist status --json` prints it."""
    return open_project(workspace).status()


def events(
    workspace: Where = ".",
    tail: int = 20,
    layer: int | None = None,
    type: str | None = None,
    worker: str | None = None,
) -> pd.DataFrame:
    """The last `tail` events as a DataFrame (see `ProjectView.events`)."""
    return open_project(workspace).events(tail, layer=layer, type=type, worker=worker)


def workers(workspace: Where = ".") -> pd.DataFrame:
    """The workers as a DataFrame."""
    return open_project(workspace).workers()


def jobs(workspace: Where = ".") -> pd.DataFrame:
    """The project's jobs (`submit_job`) as a DataFrame, one row per job, as `lightscientist
    jobs` lists them; a job another process runs is there too."""
    import pandas as pd

    from lightscientist_jupyter.app import jobs as job_list
    from lightscientist_jupyter.workspace import Workspace

    rows = job_list.job_rows(Workspace.at(workspace))
    return pd.DataFrame(rows, columns=list(job_list.COLUMNS))


def tree(workspace: Where = ".") -> pd.DataFrame:
    """A search stage's tree (`experiment/tree.json`) as a DataFrame, one row per node in the
    order they were made: its record (`started`, `ended` as datetimes), its `depth` below its
    draft and whether it is the `best`; what `lightscientist tree` draws as text. Raises
    `BadInput` when the folder holds no project, `app.search.TreeUnavailable` (one line
    naming the file) when it holds no tree or a damaged one."""
    import pandas as pd

    from lightscientist_jupyter.app import search
    from lightscientist_jupyter.workspace import Workspace

    rows = search.node_rows(search.read_tree(Workspace.at(workspace)))
    frame = pd.DataFrame(rows, columns=list(search.COLUMNS))
    for column in ("started", "ended"):
        frame[column] = pd.to_datetime(frame[column], unit="s")
    return frame


def memory(
    query: str | None = None, k: int = memories.SEARCH_K, kind: str | None = None
) -> pd.DataFrame:
    """The user's memory (`$LIGHTSCIENTIST_MEMORY`) as a DataFrame, one row per entry: every
    entry, the newest first, or with `query` the `k` that match it best, the best first, with
    their `score`; `kind` (lesson, finding, paper) keeps one kind. What `lightscientist
    memory` and `memory search` list. Raises `MemoryUnavailable` (one line naming the store)
    when it cannot be opened, `BadInput` for an unknown kind or a `k` below 1."""
    action = None if query is None else "search"
    request = memories.MemoryRequest(action, query=query or "", k=k, kind=kind)
    outcome = memories.perform(request)
    columns = [*memories.COLUMNS, "score"] if action else memories.COLUMNS
    return memory_frame(outcome.records(), columns)


def check(
    workspace: Where = ".", paths: list[str] | None = None, results: list[str] | None = None
) -> pd.DataFrame:
    """The provenance report of `paths` (the paper by default), as `lightscientist check`
    prints it: one row per citation and per decimal number, with where it traces to and
    whether it resolves (`ok`), and for a number a notebook printed, that notebook and cell
    id (`notebook`, `cell`; None otherwise). `results` names the folders whose files may
    hold the numbers.
    Like the command, it reads the folder's files alone (no project state is needed). Raises
    `BadInput` for a document outside the workspace or a missing one."""
    import pandas as pd

    from lightscientist_jupyter.app import literature
    from lightscientist_jupyter.workspace import Workspace

    report = literature.check(Workspace.at(workspace).root, paths or [], results)
    rows = [
        {
            "check": name,
            "what": i.what,
            "trace": i.trace,
            "ok": i.ok,
            "notebook": i.notebook,
            "cell": i.cell,
        }
        for name, items in report.sections
        for i in items
    ]
    return pd.DataFrame(rows, columns=["check", "what", "trace", "ok", "notebook", "cell"])


def reply(
    workspace: Where = ".",
    approve: bool = True,
    comment: str = "",
    to: str | None = None,
    *,
    source: ReplySource = ReplySource.API,
    resume_if_idle: bool = False,
    budget: dict[str, float] | None = None,
) -> Sent:
    """Answer the pending decision: directly when this kernel runs the project, else through
    the inbox (and, with `resume_if_idle`, resuming a project nobody runs); `budget` raises
    the limits at a budget decision."""
    return open_project(workspace).reply(
        approve, comment, to, source=source, resume_if_idle=resume_if_idle, budget=budget
    )


def cancel(workspace: Where = ".", worker_id: str | None = None) -> str:
    """Cancel one worker or the whole run, wherever it runs; returns what was done."""
    return perform("cancel", workspace=os.fspath(workspace), worker_id=worker_id).message


def perform(name: str, **keywords: object) -> Outcome:
    """Carry out the operation `name` of `app.ops.catalog.OPERATIONS` that every door performs
    alike (`cancel`, `check-model`…) with its request's keywords, as the notebook does (the
    session's defaults apply); returns its outcome (`ok`, `message`, and what the operation
    tells besides). `BadInput` for input to fix, as the command line's one line says it."""
    operation = OPERATIONS.get(name)
    if operation is None or operation.perform is None:
        performed = [n for n, op in OPERATIONS.items() if op.perform is not None]
        raise BadInput(f"'{name}' is not an operation to perform; one of {', '.join(performed)}")
    request = operation.request_from(dict(keywords))
    return operation.perform(request, _notebook_door())


def _notebook_door() -> Door:
    """The kernel's door: the session's defaults, and its own runs take a cancel at once."""

    def runs_here(root: Path) -> LocalCancel | None:
        run = current(root)
        return run.cancel if run is not None else None

    return Door(CancelSource.NOTEBOOK, session_defaults(), runs_here)


def stages(path: Where | None = None) -> StageTable:
    """Load and validate a stage table (the shipped default, `research.toml`, by default).

    The shipped tables live in `shipped_stages()`: copy one with its `skills/` to change it.
    """
    return load_table(path)
