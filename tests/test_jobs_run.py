"""Jobs end to end: the offline project's long batch runs as a job, layer 2 (not the agent)
resumes its worker when it ends, and the front doors show it."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time

import pytest
from support.offline import run_second_half
from support.runtime import checkpoint_messages
from support.tables import loop_stages
from support.waiting import wait_for

from lightscientist_jupyter.app.project import Project
from lightscientist_jupyter.jupyter.dashboard.workers import fold_all, render_html
from lightscientist_jupyter.runtime.sandbox import shell


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_offline_batch_runs_as_a_job_and_layer_2_resumes_its_worker(tmp_path, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    ws = tmp_path / "ws"
    # paused after the analysis: the paper that follows has no job
    run_second_half(ws, loop_stages(tmp_path / "stages"), until="experiment.analyze")
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()]
    (submitted,) = [e for e in events if e["type"] == "job.submitted"]
    (ended,) = [e for e in events if e["type"] == "job.finished"]
    worker = submitted["worker_id"]
    assert submitted["stage"] == "experiment.loop" and ended["data"]["job"]["status"] == "succeeded"
    # layer 2 resumed the worker with the job's end; the agent never heard of its background
    fired = [e for e in events if e["type"] == "resume.fired" and e["worker_id"] == worker]
    assert len(fired) == 1 and fired[0]["data"]["jobs"] == [submitted["data"]["job"]["id"]]
    told = [
        e["data"]["event"]["kind"]
        for e in events
        if e["type"] == "supervisor.event" and e["worker_id"] == worker
    ]
    assert told == ["worker_finished"]
    record = json.loads((ws / ".lightscientist" / "workers" / worker / "worker.json").read_text())
    assert record["jobs"] == ["j1"] and record["status"] == "completed"
    assert "as the job batch-2" in record["result"]["summary"]
    log = (ws / "jobs" / "batch-2.log").read_text()
    assert "batch 2 of 2: 9 run(s) ok" in log
    assert "batch 2" in (ws / "experiment" / "log.md").read_text()

    listed = cli("jobs", "--workspace", str(ws), "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["status"], row["exit_code"], row["log"]) == (
        "batch-2",
        "succeeded",
        0,
        "jobs/batch-2.log",
    )
    text = cli("jobs", "-w", str(ws))
    assert (
        "batch-2" in text.stdout
        and "succeeded" in text.stdout
        and "jobs/batch-2.log" in text.stdout
    )
    # the dashboard's worker table shows the job beside its worker
    assert 'data-job="batch-2">job batch-2 succeeded' in render_html(fold_all(events), limit=50)


def test_jobs_outside_a_project_is_one_line(tmp_path):
    proc = cli("jobs", "--workspace", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no LightScientist project in" in proc.stderr


def with_a_slow_batch(ws, seconds: float, **options) -> None:
    """An offline auto project in `ws` paused after experiment.setup, whose experiment script
    the researcher made slow: its batch 2 (the job) first sleeps `seconds`."""
    project = Project.create(ws, "Does warmup help?", mode="auto", stage="experiment.setup",
                             model="offline", until="experiment.setup",
                             stages=loop_stages(ws.parent / "stages"), **options)  # fmt: skip
    try:
        assert project.run() == "paused"
    finally:
        project.close()
    script = ws / "experiment" / "run_experiment.py"
    slow = f'if sys.argv[-2:] == ["--batch", "2"]:\n    __import__("time").sleep({seconds})\n'
    main = 'if __name__ == "__main__":'
    script.write_text(script.read_text(encoding="utf-8").replace(main, slow + main))


@pytest.mark.slow
def test_a_job_over_its_time_limit_is_ended_and_its_worker_told(tmp_path, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    ws = tmp_path / "ws"
    with_a_slow_batch(ws, 60)
    project = Project.open(ws, job_time_limit="2s", until="experiment.analyze")
    try:
        assert project.run() == "paused"  # after the analysis: the paper has no job
    finally:
        project.close()

    (job,) = [json.loads(p.read_text()) for p in (ws / ".lightscientist" / "jobs").glob("j*.json")]
    assert (job["status"], job["wall_limit_s"]) == ("timed_out", 2.0)
    assert job["note"] == "stopped at its wall-time limit (2 s)" and job["ended_at"] < time.time()
    assert 2.0 <= job["ended_at"] - job["submitted_at"] < 20  # not the batch's 60 s
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()]
    (fired,) = [e for e in events if e["type"] == "resume.fired"]
    assert fired["message"] == f"resuming {job['worker_id']}: job batch-2 timed_out"
    told = worker_messages(ws, job["worker_id"])[-1]  # what the worker was resumed with
    assert told.startswith("LightScientist: your job ended.\n\nJob batch-2 (j1, local): timed_out;")
    assert "stopped at its wall-time limit (2 s)." in told


def worker_messages(ws, worker_id: str) -> list[str]:
    """The human messages of a worker's session, from the workspace's checkpoint database."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    folder = ws / ".lightscientist"
    record = json.loads((folder / "workers" / worker_id / "worker.json").read_text())
    with contextlib.closing(sqlite3.connect(folder / "checkpoints.sqlite")) as conn:
        messages = checkpoint_messages(SqliteSaver(conn), record["thread_id"])
    return [str(m.content) for m in messages if m.type == "human"]


def test_a_bad_job_time_limit_is_one_line_naming_the_option(tmp_path):
    proc = cli("research", "x", "--job-time-limit", "6x", "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2
    assert proc.stderr == (
        "lightscientist research: error: --job-time-limit '6x' is not a duration; write a "
        "positive number with s, m, h or d (e.g. 90s, 30m, 6h)\n"
    )
    assert not (tmp_path / "ws" / ".lightscientist").exists()


@pytest.mark.slow
def test_a_sandboxed_job_outlives_a_killed_run_and_resume_finds_it(tmp_path, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    ws = tmp_path / "ws"
    with_a_slow_batch(ws, 6, sandbox="bwrap")  # (bwrap missing: research refuses, a failure)
    job = killed_while_its_job_runs(ws)
    time.sleep(0.5)
    assert shell.group_alive(job["pgid"]), "the job ended with the killed run"
    resumed_when_the_job_ends(ws, 6)


def killed_while_its_job_runs(ws) -> dict:
    """`resume` the project in a process SIGKILLed once its worker waits for its job in the
    background; returns the job's record."""
    events = ws / ".lightscientist" / "events.jsonl"
    run = subprocess.Popen(
        [sys.executable, "-m", "lightscientist_jupyter", "resume", "--workspace", str(ws)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: '"type":"worker.background"' in events.read_text(), "the job", within=60)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    return json.loads((ws / ".lightscientist" / "jobs" / "j1.json").read_text())


def resumed_when_the_job_ends(ws, seconds: float) -> None:
    """A `resume` finds the job again, resumes its worker when it ends and goes on (to the
    end of the analysis: the paper that follows has no job)."""
    proc = cli("resume", "--workspace", str(ws), "--until", "experiment.analyze")
    assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == "paused", proc.stderr
    job = json.loads((ws / ".lightscientist" / "jobs" / "j1.json").read_text())
    assert (job["status"], job["exit_code"]) == ("succeeded", 0)
    assert job["ended_at"] - job["submitted_at"] >= seconds  # it ran to its end
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    (fired,) = [json.loads(e) for e in text.splitlines() if '"type":"resume.fired"' in e]
    assert fired["message"] == f"resuming {job['worker_id']}: job batch-2 succeeded"
    record = ws / ".lightscientist" / "workers" / job["worker_id"] / "worker.json"
    assert json.loads(record.read_text())["status"] == "completed"
    assert "batch 2 of 2: 9 run(s) ok" in (ws / "jobs" / "batch-2.log").read_text()
