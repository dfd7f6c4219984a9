"""Jobs on a real local Ray head (one per module): the offline project's batch as a Ray job
that layer 2 resumes its worker after, a cancel that stops the Ray job, and the bad inputs
(an unreachable address, resources the cluster lacks) as tool results the worker goes on
from."""

from __future__ import annotations

import json

import pytest
from support.ray_head import RayHead, free_port, require_ray
from support.runtime import finish
from support.tables import loop_stages
from support.waiting import wait_for

from lightscientist_jupyter.app.project import Project
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs.manager import JobManager, JobRefused
from lightscientist_jupyter.runtime.sandbox import shell
from lightscientist_jupyter.runtime.types import WorkerSpec
from tests.test_jobs_run import (
    killed_while_its_job_runs,
    resumed_when_the_job_ends,
    with_a_slow_batch,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def head():
    started = RayHead()
    yield started
    started.stop()


def test_an_unreachable_cluster_is_a_clear_line(tmp_path):
    require_ray()
    from lightscientist_jupyter.workspace import Workspace

    address = f"127.0.0.1:{free_port()}"
    jobs = JobManager(
        Workspace.at(tmp_path), EventBus(), shell.ProcessGroups(), ray_address=address
    )
    with pytest.raises(JobRefused, match=f"the Ray cluster at {address} cannot be reached"):
        jobs.submit("w1", "true", "x")
    assert jobs.all() == []


def test_the_offline_batch_runs_as_a_ray_job_and_layer_2_resumes_its_worker(
    head, tmp_path, monkeypatch
):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-kernel-secret")
    ws = tmp_path / "ws"
    project = Project.create(
        ws, "Does warmup help?", mode="auto", stage="experiment.setup", model="offline",
        ray=head.address, stages=loop_stages(tmp_path / "stages"), until="experiment.analyze",
    )  # fmt: skip
    try:
        assert project.run() == "paused"  # after the analysis: the paper has no job
    finally:
        project.close()
    assert project.controller.state.settings["ray"] == head.address  # kept for resume
    (job,) = [json.loads(p.read_text()) for p in (ws / ".lightscientist" / "jobs").glob("j*")]
    assert (job["backend"], job["status"], job["exit_code"]) == ("ray", "succeeded", 0)
    assert job["ray_id"].startswith("ls-j1-") and job["reported"]
    log = (ws / "jobs" / "batch-2.log").read_text()
    assert "batch 2 of 2: 9 run(s) ok" in log and "sk-kernel-secret" not in log
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()]
    fired = [e for e in events if e["type"] == "resume.fired" and e["data"].get("jobs")]
    assert [e["worker_id"] for e in fired] == [job["worker_id"]]
    from ray.job_submission import JobSubmissionClient

    info = JobSubmissionClient(head.address).get_job_info(job["ray_id"])
    assert str(info.status) == "SUCCEEDED"
    assert abs(job["ended_at"] - info.end_time / 1000) < 0.01  # the cluster's end, not a look


def test_a_cancel_stops_the_ray_job_and_a_job_too_big_is_refused(
    head, make_runtime, chat_model, chat_server, ws
):
    long = {"command": "echo started; sleep 120", "name": "long"}
    chat_server.play(
        {"tool": "submit_job", "args": {**long, "resources": {"gpus": 4}}},
        {"tool": "submit_job", "args": long},
        {"tool": "finalize_cancel", "args": {"notes": "stopped"}},
    )
    runtime = make_runtime(chat_model)
    runtime.jobs.ray_address = head.address
    worker = runtime.start(WorkerSpec(message="run it", stage="experiment.loop"))
    record = finish(runtime, worker, timeout=60)
    assert record["status"] == "background"
    refused = [m for m in chat_server.requests[1]["messages"] if m["role"] == "tool"][-1]
    assert f"no node of the Ray cluster at {head.address} has gpus=4" in refused["content"]
    (job_id,) = record["jobs"]

    def started() -> bool:
        runtime.jobs.refresh()
        return "started" in (ws.root / "jobs" / "long.log").read_text()

    wait_for(started, "the Ray job's first output", within=60, poll=0.5)
    assert runtime.cancel(worker, timeout=30).status == "cancelled"
    job = runtime.jobs.get(job_id)
    assert job.status == "stopped"
    from ray.job_submission import JobSubmissionClient

    assert str(JobSubmissionClient(head.address).get_job_status(job.ray_id)) == "STOPPED"


def test_a_ray_job_outlives_a_killed_run_and_resume_finds_it(head, tmp_path, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    ws = tmp_path / "ws"
    with_a_slow_batch(ws, 10, ray=head.address)
    job = killed_while_its_job_runs(ws)
    from ray.job_submission import JobSubmissionClient

    status = str(JobSubmissionClient(head.address).get_job_status(job["ray_id"]))
    assert job["backend"] == "ray" and status in ("PENDING", "RUNNING"), status
    resumed_when_the_job_ends(ws, 10)
