"""`%lightscientist jobs`: the project's jobs, from a notebook.

    %lightscientist jobs           # a DataFrame, one row per job
    %lightscientist jobs --json    # the list `lightscientist jobs --json` prints

The operations are `app.jobs.job_rows` and, for the frame, `api.jobs`.
"""

from __future__ import annotations

import argparse
from typing import Any

from lightscientist_jupyter import api
from lightscientist_jupyter.app import jobs
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.workspace import Workspace


def jobs_table(m: MagicSession, args: argparse.Namespace) -> Any:
    where = m.workspace_of(args)
    return jobs.job_rows(Workspace.at(where)) if args.json else api.jobs(where)
