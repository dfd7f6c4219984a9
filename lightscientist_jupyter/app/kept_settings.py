"""Run settings given to `resume` that the project keeps from then on.

`research` keeps `--checkpoints` (without its password), `--ray` and `--job-time-limit` in
the project's settings; one given only to `resume` is kept the same way, so the next plain
`resume` uses it too.
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.jobs import limit as job_limit
from lightscientist_jupyter.runtime.jobs import ray as ray_jobs


def keep_given(
    controller: ResearchController,
    *,
    checkpoints: str | None,
    ray: str | None,
    job_time_limit: str | None,
) -> None:
    """Keep those of the given settings that differ from the project's (checked first)."""
    given: dict[str, Any] = {}
    if checkpoints:  # None: the default (the workspace's SQLite file)
        given["checkpoints"] = checkpoint_url.settings(checkpoints).get("checkpoints")
    if ray:
        given |= ray_jobs.settings(ray)
    if job_time_limit:
        given |= job_limit.settings(job_time_limit)
    stored = controller.state.settings
    changed = {key: value for key, value in given.items() if value != stored.get(key)}
    if changed:
        controller.keep_settings(changed)
