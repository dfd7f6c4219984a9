"""The workers' job tools: `submit_job`, `list_jobs`, `job_status` (see `jobs.manager`).

`submit_job` ends the worker's turn when the job started: the worker is `background` until
layer 2 resumes it with the job's end (status, exit code, wall time, log tail). A refused job
(a bad resource, an unreachable cluster, resources the cluster lacks) is a plain tool result
and the turn goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, tool

from lightscientist_jupyter.runtime.jobs.manager import JobManager, JobRefused, log_tail
from lightscientist_jupyter.runtime.sandbox import spawn
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.workspace import Workspace

SUBMITTED = "job"
"""The key of a successful `submit_job`'s artifact (its job id): the call ends the turn."""


@dataclasses.dataclass(frozen=True)
class JobContext:
    """Whose job a `submit_job` starts: the worker, its stage's sandbox, where its id goes."""

    worker_id: str
    confinement: Callable[[], spawn.Confinement]
    on_submit: Callable[[str], None]
    stage: str | None = None
    task_id: str | None = None


def for_worker(
    workspace: Workspace,
    policy: spawn.ShellPolicy,
    record: WorkerRecord,
    on_submit: Callable[[str], None],
) -> JobContext:
    """The job context of a worker of `workspace`: its jobs run in its stage's sandbox and
    limits (`policy`), and their ids go to `on_submit` (its record's `jobs`)."""
    home = workspace.workers_dir / record.id / "home"
    return JobContext(
        record.id,
        lambda: policy.confinement(workspace.root, home),
        on_submit,
        stage=record.stage,
        task_id=record.task_id,
    )


def job_tools(jobs: JobManager, context: Callable[[], JobContext]) -> list[BaseTool]:
    """The three job tools; `context` says, at each call, whose job it is (the worker whose
    turn is running: the tools are shared by every worker of a runtime)."""

    @tool(response_format="content_and_artifact")
    def submit_job(
        command: str, name: str, resources: dict[str, Any] | None = None, folder: str = ""
    ) -> tuple[str, dict[str, str] | None]:
        """Run a long command (an experiment batch, a training run) as a job: it runs until
        it ends (hours if need be), not the shell's timeout. Use it instead of `nohup … &`.

        `name` names its log, `jobs/<name>.log` in the workspace. `resources` (optional):
        {"cpus": 2, "gpus": 1, "memory": "8G", "<custom resource>": 1} for a cluster.
        `folder`: its working directory (default: the workspace root). After a successful
        submit your turn ends; you are resumed when the job ends, with its status, exit code,
        wall time and the tail of its log.
        """
        who = context()
        try:
            job = jobs.submit(
                who.worker_id,
                command,
                name,
                resources=resources,
                folder=folder,
                confinement=who.confinement(),
                stage=who.stage,
                task_id=who.task_id,
            )
        except JobRefused as exc:
            return f"Job not submitted: {exc}", None
        who.on_submit(job.id)
        where = f"the Ray cluster at {job.address}" if job.backend == "ray" else "this machine"
        # named by its name, which the worker chose: ids are handed out in the order workers
        # running at once happen to submit, so a replay's worker would read another one
        return (
            f"Submitted job {job.name} on {where}; its log is {job.log}. Your turn "
            "ends now: you will be resumed when the job ends.",
            {SUBMITTED: job.id},
        )

    @tool
    def list_jobs() -> str:
        """List the project's jobs: id, name, worker, status, exit code, wall time, log."""
        found = jobs.refresh()
        return "\n".join(job.line() for job in found) or "No jobs yet."

    @tool
    def job_status(job: str) -> str:
        """One job's status (by id or name), exit code, wall time and the tail of its log."""
        jobs.refresh()
        found = jobs.find(job)
        if found is None:
            known = ", ".join(f"{j.id} ({j.name})" for j in jobs.all()) or "none"
            return f"No job '{job}'; the jobs are: {known}"
        tail = log_tail(jobs.workspace.root / found.log) or "(empty)"
        note = f"\n{found.note}" if found.note else ""
        return f"{found.line()}{note}\nLast lines of {found.log}:\n{tail}"

    return [submit_job, list_jobs, job_status]
