"""`%lightscientist jobs`: the project's jobs, from a notebook.

    %lightscientist jobs           # a DataFrame, one row per job
    %lightscientist jobs --json    # the list `lightscientist jobs --json` prints

The operation is `app.jobs.job_rows`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.app import jobs
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:
    from lightscientist_jupyter.jupyter.magic import LightScientistMagics


def jobs_table(m: LightScientistMagics, args: argparse.Namespace) -> Any:
    rows = jobs.job_rows(Workspace.at(m.workspace_of(args)))
    if args.json:
        return rows
    import pandas as pd

    return pd.DataFrame(rows, columns=list(jobs.COLUMNS))
