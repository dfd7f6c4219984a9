"""A job's record (`.lightscientist/jobs/<id>.json`), its resources and its log's tail, and the
message that resumes a worker whose jobs ended (see `jobs.manager`)."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.values.limits import parse_value
from lightscientist_jupyter.vocab import JobStatus

DEFAULT_WALL_S = 6 * 3600.0
LOG_DIR = "jobs"
JOBS_ENDED = "LightScientist: your job"
"""How the message that resumes a worker whose jobs ended begins (`ended_message`)."""
"""The workspace folder of the jobs' logs (`jobs/<name>.log`)."""
TAIL_LINES, TAIL_CHARS = 20, 2000
RESOURCE_KEYS = ("cpus", "gpus", "memory")


class JobRefused(ValueError):
    """A job that cannot be submitted; the message is the tool's answer to the worker."""


@dataclasses.dataclass(frozen=True)
class Job:
    """One job, as `.lightscientist/jobs/<id>.json` keeps it."""

    id: str
    name: str
    worker_id: str
    command: str
    stage: str | None = None
    task_id: str | None = None
    backend: str = "local"
    """'local' (a process of the command runner) or 'ray' (a Ray job)."""
    status: JobStatus = JobStatus.RUNNING
    folder: str = ""
    """Its working directory, relative to the workspace ('' is the workspace)."""
    resources: dict[str, Any] = dataclasses.field(default_factory=dict)
    submitted_at: float = 0.0
    ended_at: float | None = None
    exit_code: int | None = None
    wall_limit_s: float = DEFAULT_WALL_S
    pgid: int | None = None
    pgid_start: str | None = None
    """The start time of the group's leader, to tell it from a later process with its pid."""
    ray_id: str | None = None
    address: str | None = None
    reported: bool = False
    """Whether layer 2 has resumed the worker with this job's end."""
    note: str = ""

    @property
    def log(self) -> str:
        return f"{LOG_DIR}/{self.name}.log"

    @property
    def running(self) -> bool:
        return self.status == JobStatus.RUNNING

    def wall_s(self, now: float | None = None) -> float:
        end = self.ended_at if self.ended_at is not None else (now or time.time())
        return max(0.0, end - self.submitted_at)

    def to_dict(self) -> dict[str, Any]:
        raw = dataclasses.asdict(self)
        raw.update(status=str(self.status), log=self.log)
        return raw

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Job:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in raw.items() if k in fields}
        values["status"] = JobStatus(values.get("status") or JobStatus.RUNNING)
        return cls(**values)

    def line(self) -> str:
        """One line for `list_jobs`, `lightscientist jobs` and the worker table."""
        code = "" if self.exit_code is None else f", exit {self.exit_code}"
        where = f" on {self.address}" if self.backend == "ray" else ""
        return (
            f"{self.id} {self.name} ({self.worker_id}, {self.backend}{where}): {self.status}"
            f"{code}, {self.wall_s():.1f} s; log {self.log}"
        )


def parse_resources(raw: Mapping[str, Any] | None) -> dict[str, float]:
    """`{cpus, gpus, memory, <custom>}` as numbers (memory in bytes; '4G' works); raises
    JobRefused naming the bad key."""
    out: dict[str, float] = {}
    for key, value in (raw or {}).items():
        key = str(key).strip().lower() if str(key).lower() in RESOURCE_KEYS else str(key)
        try:
            if key == "memory" and isinstance(value, str):
                number = float(parse_value("mem", value) or 0)
            elif isinstance(value, bool):
                raise ValueError("a number, not a boolean")
            else:
                number = float(value)
        except (TypeError, ValueError) as exc:
            raise JobRefused(
                f"resources: {key}={value!r} is not a number ({exc}); e.g. "
                '{"cpus": 2, "gpus": 1, "memory": "4G"}'
            ) from None
        if number < 0:
            raise JobRefused(f"resources: {key} must not be negative")
        out[key] = number
    return out


def log_tail(path: Path, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last lines of a log (at most `chars` characters), redacted; '' when there is none
    (or it cannot be read through no link)."""
    try:
        with NO_LINKS.open_read(path) as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - chars * 4))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return redact("\n".join(text.splitlines()[-lines:]))[-chars:]


def ended_message(jobs: list[Job], root: Path) -> str:
    """The message that resumes a worker whose jobs ended: status, exit code, wall time and
    the tail of each log."""
    parts = [JOBS_ENDED + ("s" if len(jobs) > 1 else "") + " ended."]
    for job in jobs:
        code = "none" if job.exit_code is None else str(job.exit_code)
        parts.append(
            f"\nJob {job.name} ({job.id}, {job.backend}): {job.status}; exit code {code}; "
            f"wall time {job.wall_s():.1f} s."
            + (f" {job.note}." if job.note else "")
            + f" Whole log: {job.log}. Its last lines:\n```\n"
            + (log_tail(root / job.log) or "(empty)")
            + "\n```"
        )
    return "\n".join(parts)
