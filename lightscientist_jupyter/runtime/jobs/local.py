"""Jobs run on this machine: a background process of the sandboxed command runner (the
`JobManager`'s local backend; `jobs.ray` is the cluster's).

The job's shell runs in the worker's sandbox without `--die-with-parent` (it outlives a
killed run; a cancel ends its whole process tree), without the CPU-seconds limit, its output
in a new file `jobs/<name>.log`, and writes its exit status into the worker's home, the one
place under `.lightscientist/` its sandbox may write; a thread watches it up to its wall-time
limit and records how it ended.
"""

from __future__ import annotations

import dataclasses
import shlex
import threading
import time
from pathlib import Path

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.runtime.jobs.backend import JobHost
from lightscientist_jupyter.runtime.jobs.record import Job
from lightscientist_jupyter.runtime.sandbox import command_env, shell, spawn
from lightscientist_jupyter.runtime.sandbox.proctree import end_tree
from lightscientist_jupyter.vocab import JobStatus

DIES = "--die-with-parent"
"""The sandbox option a job's sandbox goes without."""


def start(manager: JobHost, job: Job, cwd: Path, conf: spawn.Confinement | None) -> Job:
    """Start the job's sandbox in the background and a thread that watches it."""
    root = manager.workspace.root
    home = manager.workspace.workers_dir / job.worker_id / "home"
    status = status_file(manager, job)
    mkdirs(status.parent)  # in the worker's home, which its commands can write
    NO_LINKS.unlink(status)
    conf = conf or spawn.Confinement()
    if conf.limits is not None:  # the wall-time limit bounds a job, not CPU seconds
        conf = dataclasses.replace(conf, limits=conf.limits.merged({"cpu": None}))
    # the job outlives a killed run (resume finds it again); cancels end it by `end_tree`
    conf = dataclasses.replace(conf, prefix=tuple(a for a in conf.prefix if a != DIES))
    script = (
        f"cd {shlex.quote(str(cwd))} && /bin/bash -c {shlex.quote(job.command)}\n"
        f"echo $? > {shlex.quote(str(status))}"
    )
    with Beneath(root).open_write(job.log, new=True) as out:
        started = spawn.start(
            script, conf, cwd=root, env=command_env.worker_env(root, home), out=out
        )
    pgid = started.proc.pid
    manager.groups.add(pgid, job.worker_id, time.monotonic() + job.wall_limit_s + 60, end=end_tree)
    job = dataclasses.replace(job, pgid=pgid, pgid_start=shell._start_time(pgid))
    manager.watched.add(job.id)
    threading.Thread(
        target=_watch, args=(manager, job, started), daemon=True, name=f"ls-job-{job.id}"
    ).start()
    return job


def status_file(manager: JobHost, job: Job) -> Path:
    """Where the job's shell writes its exit status."""
    # in the worker's home: the one place under .lightscientist/ a sandbox may write
    return manager.workspace.workers_dir / job.worker_id / "home" / ".jobs" / f"{job.id}.exit"


def _watch(manager: JobHost, job: Job, started: spawn.Started) -> None:
    deadline = time.monotonic() + job.wall_limit_s
    timed_out = False
    while not started.returned(0.2):
        if time.monotonic() >= deadline:
            timed_out = True
            end_tree(started.proc.pid)
    started.settle()
    if shell.group_alive(started.proc.pid):  # what the job left running ends with it
        end_tree(started.proc.pid)
    code = exit_code(manager, job)
    if code is None:
        code = started.exit_code
    if job.id in manager.stopping:
        status = JobStatus.STOPPED
    elif timed_out:
        status = JobStatus.TIMED_OUT
    else:
        status = JobStatus.SUCCEEDED if code == 0 else JobStatus.FAILED
    note = f"stopped at its wall-time limit ({job.wall_limit_s:g} s)" if timed_out else ""
    manager.record_end(job.id, status, code, note)
    manager.watched.discard(job.id)


def exit_code(manager: JobHost, job: Job) -> int | None:
    """The exit status the job's shell wrote, None when there is none (yet)."""
    try:
        text = NO_LINKS.read_bytes(status_file(manager, job), limit=64).decode().strip()
    except (OSError, UnicodeDecodeError):  # missing, or a link its sandbox planted
        return None
    return int(text) if text.isdigit() else None
