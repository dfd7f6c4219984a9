"""Jobs on a Ray cluster, through the Ray Jobs API (the optional extra `ray`).

`submit` checks that some alive node of the cluster has the resources the job asks for (a job
no node can hold would wait for ever) and submits the command as the job's entrypoint with
them as entrypoint resources (`cpus`, `gpus`, `memory` in bytes, any other key a custom Ray
resource). The workspace is on a path the cluster's nodes share (the same machine, or a
shared filesystem): the entrypoint changes to the job's folder and runs the command under
`env -i` with the clean environment of `execute`, so nothing of the kernel's or the
cluster's environment (keys, tokens) reaches it. `refresh` reads the job's state and copies
its whole log to `jobs/<name>.log`; `stop` stops it. Every problem reaching the cluster is a
`JobRefused` line for the worker, naming the address.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import time
import uuid
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import write_text_atomic
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.runtime.jobs.backend import JobHost
from lightscientist_jupyter.runtime.jobs.record import Job, JobRefused
from lightscientist_jupyter.runtime.sandbox import command_env
from lightscientist_jupyter.vocab import JobStatus

_RAY_KEYS = {"cpus": "CPU", "gpus": "GPU", "memory": "memory"}
_STATUS = {
    "SUCCEEDED": JobStatus.SUCCEEDED,
    "FAILED": JobStatus.FAILED,
    "STOPPED": JobStatus.STOPPED,
}


ENV = "RAY_ADDRESS"


LOCAL = "local"
"""The `--ray` value that runs jobs on this machine, even where a project kept an address or
RAY_ADDRESS names one (kept too, so a later plain `resume` stays local)."""


def settings(given: str | None) -> dict[str, Any]:
    """What a new project keeps: `ray`, the cluster's address (`--ray`, else RAY_ADDRESS) or
    `local`."""
    address = (given or os.environ.get(ENV) or "").strip()
    if address.lower() == LOCAL:
        return {"ray": LOCAL}
    return {"ray": address} if address else {}


def choose(given: str | None, stored: dict[str, Any]) -> str | None:
    """This run's cluster: `--ray` given now, else the project's, else RAY_ADDRESS, else None
    (jobs run on this machine, as with `local`)."""
    address = str(given or stored.get("ray") or os.environ.get(ENV) or "").strip()
    return None if address.lower() == LOCAL else address or None


def dashboard_url(address: str) -> str:
    """The Jobs API's address: `http://host:8265` as given, `ray://…` or a bare `host:port`
    as HTTP."""
    text = address.strip()
    if text.startswith(("http://", "https://")):
        return text.rstrip("/")
    return "http://" + text.split("://", 1)[-1].rstrip("/")


def _client(address: str) -> Any:
    try:
        from ray.job_submission import JobSubmissionClient
    except ImportError:
        raise JobRefused(
            f"a Ray cluster is configured ({address}) but Ray is not installed here; install "
            "lightscientist-jupyter[ray]"
        ) from None
    try:
        return JobSubmissionClient(dashboard_url(address))
    except Exception as exc:  # ConnectionError, a timeout, an HTTP error …
        raise JobRefused(
            f"the Ray cluster at {address} cannot be reached ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else 'no answer'}); the job was not "
            "submitted"
        ) from None


def _nodes(address: str) -> list[dict[str, float]]:
    """The total resources of each alive node."""
    from ray.util.state import list_nodes

    try:
        url = dashboard_url(address)
        nodes = list_nodes(address=url, detail=True, raise_on_missing_output=False)
    except Exception as exc:
        raise JobRefused(f"the Ray cluster at {address} did not list its nodes ({exc})") from None
    return [dict(n.resources_total or {}) for n in nodes if str(n.state) == "ALIVE"]


def _wanted(resources: dict[str, float]) -> dict[str, float]:
    return {_RAY_KEYS.get(k, k): float(v) for k, v in resources.items() if v}


def _shown(resources: dict[str, float]) -> str:
    names = {v: k for k, v in _RAY_KEYS.items()}
    return ", ".join(
        f"{names.get(k, k)}=" + (f"{v / 2**30:.1f}G" if "memory" in k else f"{v:g}")
        for k, v in sorted(resources.items())
        if "node:" not in k
    )


def submit(manager: JobHost, job: Job, cwd: Path) -> Job:
    address = manager.ray_address or ""
    client = _client(address)
    wanted = _wanted(job.resources)
    nodes = _nodes(address)
    if wanted and not any(all(n.get(k, 0.0) >= v for k, v in wanted.items()) for n in nodes):
        largest = max(nodes, key=lambda n: n.get("CPU", 0.0), default={})
        raise JobRefused(
            f"no node of the Ray cluster at {address} has {_shown(wanted)} "
            f"(the largest has {_shown(largest) or 'nothing'}); ask for less"
        )
    root = manager.workspace.root
    env = command_env.worker_env(root, manager.workspace.workers_dir / job.worker_id / "home")
    pairs = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(env.items()))
    entrypoint = (
        f"cd {shlex.quote(str(cwd))} && env -i {pairs} /bin/bash -c {shlex.quote(job.command)}"
    )
    custom = {k: v for k, v in wanted.items() if k not in ("CPU", "GPU", "memory")}
    try:  # the log `refresh` fills, through no link (a link at its place is replaced)
        write_text_atomic(root / job.log, "", durable=False)
    except PathRefused as exc:
        raise JobRefused(str(exc)) from None
    try:
        ray_id = client.submit_job(
            entrypoint=entrypoint,
            submission_id=f"ls-{job.id}-{uuid.uuid4().hex[:8]}",
            entrypoint_num_cpus=wanted.get("CPU"),
            entrypoint_num_gpus=wanted.get("GPU"),
            entrypoint_memory=int(wanted["memory"]) if "memory" in wanted else None,
            entrypoint_resources=custom or None,
            metadata={"lightscientist_job": job.id, "worker": job.worker_id},
        )
    except Exception as exc:
        raise JobRefused(f"the Ray cluster at {address} refused the job: {exc}") from None
    return dataclasses.replace(job, backend="ray", ray_id=ray_id, address=address)


def refresh(manager: JobHost, job: Job) -> None:
    """Bring a running Ray job's record and log up to date."""
    try:
        client = _client(job.address or "")
        info = client.get_job_info(job.ray_id)
        write_text_atomic(manager.workspace.root / job.log, client.get_job_logs(job.ray_id))
    except Exception:  # the cluster is away for now: asked again at the next poll
        return
    status = _STATUS.get(str(getattr(info.status, "value", info.status)))
    if status is None:
        if time.time() - job.submitted_at > job.wall_limit_s:
            client.stop_job(job.ray_id)
            manager.record_end(job.id, JobStatus.TIMED_OUT, None, "stopped at its wall-time limit")
        return
    if job.id in manager.stopping:
        status = JobStatus.STOPPED
    note = "" if status == JobStatus.SUCCEEDED else str(info.message or "")[:300]
    ended = getattr(info, "end_time", None)  # the cluster's own record, in ms
    manager.record_end(
        job.id, status, info.driver_exit_code, note, ended_at=ended / 1000 if ended else None
    )


def stop(manager: JobHost, job: Job) -> None:
    """Stop a Ray job and wait (a few seconds) for the cluster to say it stopped."""
    try:
        client = _client(job.address or "")
        client.stop_job(job.ray_id)
    except Exception:
        return
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        try:
            if client.get_job_status(job.ray_id).is_terminal():
                break
        except Exception:
            break
        time.sleep(0.2)
    refresh(manager, job)
