"""The API's time travel: `history` (a DataFrame), `diff`, `rewind`, `fork` (see
`app.history`; the command line and the magic give the same answers)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lightscientist_jupyter.app import history as timeline
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:
    import pandas as pd

Where = str | os.PathLike[str]
COLUMNS = ["id", "stage", "visit", "event", "time", "added", "changed", "removed"]


def history(workspace: Where = ".") -> pd.DataFrame:
    """One row per snapshot, oldest first: id, stage, visit, event, time and the files
    added, changed and removed since the snapshot before it."""
    import pandas as pd

    rows = timeline.history(Workspace.at(workspace))
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "at"])
    frame["time"] = pd.to_datetime(frame["at"], unit="s")
    return frame[COLUMNS]


def diff(
    workspace: Where = ".",
    ref: str | None = None,
    ref2: str | None = None,
    *,
    stat: bool = False,
    paths: Sequence[str] = (),
    against: Where | None = None,
) -> str:
    """The diff `lightscientist diff` prints (with no ref: what the pending gate would
    approve against the last approved state)."""
    other = os.fspath(against) if against is not None else None
    return timeline.diff(Workspace.at(workspace), ref, ref2, stat=stat, paths=paths, against=other)


def rewind(workspace: Where = ".", to: str = "", *, source: ReplySource = ReplySource.API) -> str:
    """Set the files, PROCESS.md and state back to the start of `to` (STAGE[#VISIT]);
    returns what was done. Refused while a process runs the project."""
    return timeline.rewind(Workspace.at(workspace), to, source=source).message


def fork(workspace: Where, to: str, new_dir: Where) -> str:
    """A new workspace in `new_dir` at the start of `to` (STAGE[#VISIT]), ready to resume."""
    return timeline.fork(Workspace.at(workspace), to, new_dir).message
