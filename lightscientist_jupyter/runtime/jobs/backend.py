"""What a job backend (`jobs.local`, `jobs.ray`) takes of the `JobManager` that calls it.

The manager picks the backend and hands itself in; the backends use only these members, so
they import this Protocol and not `jobs.manager`, and the arrows go one way: manager -> backends.
"""

from __future__ import annotations

from typing import Protocol

from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.vocab import JobStatus
from lightscientist_jupyter.workspace import Workspace


class JobHost(Protocol):
    """The jobs of one workspace, as a backend starts, watches and ends them."""

    workspace: Workspace
    groups: ProcessGroups
    """The runtime's process groups (a local job's group joins them)."""
    ray_address: str | None
    watched: set[str]
    """Local jobs a thread of this process watches."""
    stopping: set[str]
    """Jobs a cancel is stopping (their end is `stopped`, whatever their exit code)."""

    def record_end(
        self,
        job_id: str,
        status: JobStatus,
        code: int | None,
        note: str = "",
        *,
        ended_at: float | None = None,
    ) -> None:
        """Record the job's end (see `JobManager.record_end`)."""
        ...
