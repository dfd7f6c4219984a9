"""Jobs: a worker's long command, run apart from its turn until it ends.

`submit_job` (see `jobs.tools`) hands a command to the `JobManager`. Without a cluster the job
runs here (`jobs.local`) as a background process of the sandboxed command runner: the same clean
environment, sandbox and limits as `execute` (but no CPU-seconds limit), its own process
group, bounded by a wall-time limit (`wall_limit_s`, hours by default) instead of the
command timeout; it lives on while its worker is suspended, and a cancel of the worker (or
the end of the run) stops it — its whole process tree (`proctree.end_tree`): its sandbox is
made without `--die-with-parent`, so that it outlives a run that is killed. With a Ray
address the job goes to the cluster (`jobs.ray`). Either way its whole output lands in the
workspace at `jobs/<name>.log`.

Each job's record is `.lightscientist/jobs/<id>.json` (`Job`), so a later process — a
`resume` after the run was killed — finds it again: a local job whose process group still
runs is watched on, one whose exit status file is there ended with that status, any other
was lost with the run. Layer 2 polls (`refresh`) and resumes the worker when its jobs ended.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS, list_dir, mkdirs, write_json_atomic
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs import local as local_jobs
from lightscientist_jupyter.runtime.jobs.record import (
    DEFAULT_WALL_S,
    LOG_DIR,
    Job,
    JobRefused,
    ended_message,
    log_tail,
    parse_resources,
)
from lightscientist_jupyter.runtime.sandbox import shell, spawn
from lightscientist_jupyter.runtime.sandbox.proctree import end_tree
from lightscientist_jupyter.vocab import EventType, JobStatus

__all__ = ["Job", "JobManager", "JobRefused", "ended_message", "log_tail"]
from lightscientist_jupyter.workspace import Workspace

_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class JobManager:
    """The jobs of one workspace: submits, watches, stops, and reads them back.

    Args:
        workspace: the project workspace.
        bus: where `job.submitted` / `job.finished` go.
        groups: the runtime's process groups (a worker's cancel and the run's end stop its
            local jobs through them).
        wall_limit_s: the longest a job may run.
        ray_address: the Ray cluster's address (None: jobs run locally).
    """

    def __init__(
        self,
        workspace: Workspace,
        bus: EventBus,
        groups: shell.ProcessGroups,
        *,
        wall_limit_s: float = DEFAULT_WALL_S,
        ray_address: str | None = None,
    ):
        self.workspace = workspace
        self.bus = bus
        self.groups = groups
        self.wall_limit_s = wall_limit_s
        self.ray_address = ray_address
        """The Ray cluster jobs go to (`--ray`, RAY_ADDRESS); None: they run here."""
        self.folder = workspace.state_dir / "jobs"
        self._lock = threading.RLock()
        self.watched: set[str] = set()
        """Local jobs a thread of this process watches (`jobs.local`)."""
        self.stopping: set[str] = set()
        """Jobs a cancel is stopping."""

    # ------------------------------------------------------------------ submit

    def submit(
        self,
        worker_id: str,
        command: str,
        name: str,
        *,
        resources: Mapping[str, Any] | None = None,
        folder: str = "",
        confinement: spawn.Confinement | None = None,
        stage: str | None = None,
        task_id: str | None = None,
    ) -> Job:
        """Start a job for `worker_id`; raises JobRefused with a line for the worker."""
        if not command.strip():
            raise JobRefused("submit_job needs a command")
        wanted = parse_resources(resources)
        cwd = self._folder(folder)
        with self._lock:
            try:
                job_id, name = self._reserve(name or "job")
            except PathRefused as exc:  # `jobs/` or the state folder is a link
                raise JobRefused(str(exc)) from None
            job = Job(
                id=job_id,
                name=name,
                worker_id=worker_id,
                command=command,
                stage=stage,
                task_id=task_id,
                folder=str(cwd.relative_to(self.workspace.root))
                if cwd != self.workspace.root
                else "",
                resources=wanted,
                submitted_at=time.time(),
                wall_limit_s=self.wall_limit_s,
            )
            if self.ray_address:  # a Ray cluster (runtime.jobs.ray)
                job = self._start_ray(job, cwd)
            else:
                job = self._start_local(job, cwd, confinement)
            self._save(job)
        self.bus.emit(
            EventType.JOB_SUBMITTED,
            f"{job.id} {job.name}: {command[:120]}",
            worker_id=worker_id,
            stage=stage,
            task_id=task_id,
            data={"job": job.to_dict()},
        )
        return job

    def _folder(self, folder: str) -> Path:
        from lightscientist_jupyter.runtime.session.workspace_files import confine

        if not folder.strip() or folder.strip() in ("/", "."):
            return self.workspace.root
        try:
            rel = confine(self.workspace.root, folder)
            if Beneath(self.workspace.root).lstat(rel) is None:
                raise JobRefused(f"folder '{folder}' is not a folder of the workspace")
            with Beneath(self.workspace.root).open_dir(rel):  # a folder, through no link
                return self.workspace.root / rel
        except (PathRefused, NotADirectoryError) as exc:
            raise JobRefused(f"folder: {exc}") from None

    def _reserve(self, wanted: str) -> tuple[str, str]:
        """A new job id (`j<n>`) and a log name no other job has (nor any file or folder in
        `jobs/`; a link there is left for the log's opening to refuse)."""
        mkdirs(self.folder)
        base = _NAME.sub("-", wanted).strip(".-")[:60] or "job"
        names = {job.name for job in self.all()}
        taken = {e.name for e in list_dir(self.workspace.root / LOG_DIR) if not e.is_symlink()}
        name, k = base, 2
        while name in names or f"{name}.log" in taken:
            name, k = f"{base}-{k}", k + 1
        n = len([e for e in list_dir(self.folder) if fnmatch.fnmatch(e.name, "j*.json")]) + 1
        while True:
            try:
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
                os.close(NO_LINKS.open_fd(self.folder / f"j{n}.json", flags))
                return f"j{n}", name
            except FileExistsError:
                n += 1

    def _start_ray(self, job: Job, cwd: Path) -> Job:
        from lightscientist_jupyter.runtime.jobs import ray as ray_jobs

        try:
            return ray_jobs.submit(self, job, cwd)
        except JobRefused:
            NO_LINKS.unlink(self.folder / f"{job.id}.json")
            raise

    def _start_local(self, job: Job, cwd: Path, conf: spawn.Confinement | None) -> Job:
        """Start the job's sandbox, its output going to `jobs/<name>.log` (a new file: a link
        or anything else already there refuses the job, naming it)."""
        try:
            return local_jobs.start(self, job, cwd, conf)
        except PathRefused as exc:
            NO_LINKS.unlink(self.folder / f"{job.id}.json")
            raise JobRefused(str(exc)) from None

    def record_end(
        self,
        job_id: str,
        status: JobStatus,
        code: int | None,
        note: str = "",
        *,
        ended_at: float | None = None,
    ) -> None:
        """Record the job's end: at `ended_at` (the job's own end, seen afterwards: a run that
        was not watching it) or now."""
        now = time.time()
        with self._lock:  # a job that ended as it started waits for `submit` to save it
            job = self.get(job_id)
        if job is None or not job.running:
            return
        # nothing writes to its log any more: redacted before the job is said to have ended
        shell.redact_log(self.workspace.root / job.log)
        with self._lock:
            job = self.get(job_id)
            if job is None or not job.running:
                return
            end = now if ended_at is None else min(max(ended_at, job.submitted_at), now)
            job = dataclasses.replace(
                job, status=status, exit_code=code, ended_at=end, note=note or job.note
            )
            self._save(job)
        self.bus.emit(
            EventType.JOB_FINISHED,
            f"{job.id} {job.name}: {status}"
            + ("" if code is None else f" (exit {code})")
            + f" after {job.wall_s():.1f} s",
            worker_id=job.worker_id,
            stage=job.stage,
            task_id=job.task_id,
            data={"job": job.to_dict()},
        )

    # ------------------------------------------------------------------ read, poll, stop

    def all(self) -> list[Job]:
        """Every job of the workspace, in submission order."""
        jobs = []
        for entry in list_dir(self.folder):
            if not fnmatch.fnmatch(entry.name, "j*.json"):
                continue
            try:
                raw = json.loads(NO_LINKS.read_text(self.folder / entry.name))
                jobs.append(Job.from_dict(raw))
            except (OSError, ValueError, TypeError, KeyError):
                continue  # a reserved id not written yet, or a torn file of a dead run
        return sorted(jobs, key=lambda j: (j.submitted_at, j.id))

    def get(self, job_id: str) -> Job | None:
        try:
            raw = json.loads(NO_LINKS.read_text(self.folder / f"{job_id}.json"))
            return Job.from_dict(raw)
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def find(self, ref: str) -> Job | None:
        """A job by id or by name."""
        return self.get(ref) or next((j for j in self.all() if j.name == ref), None)

    def of_worker(self, worker_id: str) -> list[Job]:
        return [j for j in self.all() if j.worker_id == worker_id]

    def refresh(self) -> list[Job]:
        """Bring every running job's record up to date (a local job no thread here watches:
        adopted, or settled from its status file); returns them all."""
        for job in self.all():
            if not job.running:
                continue
            if job.backend == "ray":
                from lightscientist_jupyter.runtime.jobs import ray as ray_jobs

                ray_jobs.refresh(self, job)
            elif job.id not in self.watched:
                self._settle_orphan(job)
        return self.all()

    def _settle_orphan(self, job: Job) -> None:
        """A local job started by another process (a run that was killed). One that ended
        meanwhile ended when its exit status was written, however much later this run looks."""
        if self._settled_by_its_status(job):
            return
        pgid = job.pgid
        alive = (
            pgid is not None
            and shell._start_time(pgid) in (job.pgid_start, None)
            and shell.group_alive(pgid)
        )
        if alive and pgid is not None:
            if time.time() - job.submitted_at > job.wall_limit_s:
                end_tree(pgid)
                self.record_end(job.id, JobStatus.TIMED_OUT, None, "stopped at its wall-time limit")
            else:
                self.groups.add(
                    pgid, job.worker_id, time.monotonic() + job.wall_limit_s, end=end_tree
                )
            return
        if self._settled_by_its_status(job):  # it wrote its status and ended just now
            return
        self.record_end(
            job.id,
            JobStatus.LOST,
            None,
            "its process ended with the run that started it (its wall time runs to its log's "
            "last line)",
            ended_at=_mtime(self.workspace.root / job.log),
        )

    def _settled_by_its_status(self, job: Job) -> bool:
        """Record the end of an orphan that wrote its exit status; False when it has not."""
        code = local_jobs.exit_code(self, job)
        if code is None:
            return False
        status = JobStatus.SUCCEEDED if code == 0 else JobStatus.FAILED
        self.record_end(job.id, status, code, ended_at=_mtime(local_jobs.status_file(self, job)))
        return True

    def mark_reported(self, job_ids: list[str]) -> None:
        with self._lock:
            for job_id in job_ids:
                job = self.get(job_id)
                if job is not None and not job.reported:
                    self._save(dataclasses.replace(job, reported=True))

    def stop_owner(self, worker_id: str) -> list[Job]:
        """Stop every running job of the worker (its cancel); returns them."""
        return self._stop([j for j in self.of_worker(worker_id) if j.running])

    def stop_all(self) -> list[Job]:
        """Stop every running job of the workspace (the project's cancel)."""
        return self._stop([j for j in self.all() if j.running])

    def _stop(self, jobs: list[Job]) -> list[Job]:
        for job in jobs:
            self.stopping.add(job.id)
            if job.backend == "ray":
                from lightscientist_jupyter.runtime.jobs import ray as ray_jobs

                ray_jobs.stop(self, job)
            elif job.pgid is not None:
                end_tree(job.pgid)
                if job.id not in self.watched:
                    self.record_end(job.id, JobStatus.STOPPED, None, "stopped by a cancel")
        deadline = time.monotonic() + 15.0  # a sandbox's teardown is slow on a loaded machine
        while time.monotonic() < deadline and any((self.get(j.id) or j).running for j in jobs):
            time.sleep(0.05)
        return [self.get(j.id) or j for j in jobs]

    def _save(self, job: Job) -> None:
        write_json_atomic(self.folder / f"{job.id}.json", job.to_dict())


def _mtime(path: Path) -> float | None:
    """When `path` was last written (None when it cannot be read)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return None
