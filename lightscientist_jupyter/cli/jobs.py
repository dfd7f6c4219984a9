"""The command line's `jobs`: the project's jobs and their state (see `app.jobs`)."""

from __future__ import annotations

import argparse
import json

from lightscientist_jupyter.app import jobs
from lightscientist_jupyter.workspace import Workspace


def cmd_jobs(args: argparse.Namespace) -> int:
    rows = jobs.job_rows(Workspace.at(args.workspace or "."))
    print(json.dumps(rows, ensure_ascii=False) if args.json else "\n".join(jobs.render(rows)))
    return 0


HANDLERS = {"jobs": cmd_jobs}
