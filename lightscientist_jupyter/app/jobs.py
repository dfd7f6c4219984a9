"""The project's jobs for the front doors (`lightscientist jobs`, `%lightscientist jobs`).

Read from the jobs' records (`.lightscientist/jobs/`, see `runtime.jobs.manager`), so a run in
another process is seen too; reading changes nothing (the run that watches a job settles it).
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.app.commands import require_project
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs.manager import Job, JobManager
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.workspace import Workspace

COLUMNS = ("id", "name", "worker_id", "stage", "backend", "status", "exit_code", "wall_s", "log")


def project_jobs(ws: Workspace) -> list[Job]:
    """Every job of the project, in submission order (`BadInput` when there is no project)."""
    require_project(ws)
    return JobManager(ws, EventBus(), ProcessGroups()).all()


def job_rows(ws: Workspace) -> list[dict[str, Any]]:
    """One dict per job: its record, with its wall time so far (`wall_s`)."""
    return [{**job.to_dict(), "wall_s": round(job.wall_s(), 1)} for job in project_jobs(ws)]


def render(rows: list[dict[str, Any]]) -> list[str]:
    """The jobs as text lines, for the command line."""
    if not rows:
        return ["no jobs yet (workers submit them with submit_job)"]
    head = f"{'job':<6}{'name':<22}{'worker':<9}{'status':<11}{'exit':>5}{'wall s':>9}  log"
    lines = [head]
    for r in rows:
        code = "" if r["exit_code"] is None else str(r["exit_code"])
        lines.append(
            f"{r['id']:<6}{r['name'][:21]:<22}{r['worker_id']:<9}{r['status']:<11}{code:>5}"
            f"{r['wall_s']:>9.1f}  {r['log']}"
        )
    return lines
