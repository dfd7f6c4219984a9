"""Local jobs (`runtime.jobs.manager`): real processes of the sandboxed command runner that outlive
the command timeout, keep the clean environment, stop at their wall-time limit or a cancel,
and are found again by a later process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from support.runtime import finish, tool_call
from support.waiting import wait_for

from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs.manager import JobManager, JobRefused, ended_message
from lightscientist_jupyter.runtime.sandbox import shell
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.workspace import Workspace


def manager(ws: Workspace, **options) -> JobManager:
    return JobManager(ws, EventBus(), shell.ProcessGroups(), **options)


def sandboxed(ws: Workspace, worker: str = "w1"):
    home = ws.workers_dir / worker / "home"
    home.mkdir(parents=True, exist_ok=True)
    sandbox = os.environ.get("CI") == "true" or os.path.exists("/usr/bin/bwrap")
    return ShellPolicy(sandbox=sandbox).confinement(ws.root, home)


def ended(jobs: JobManager, job_id: str, within: float = 20.0):
    wait_for(lambda: not jobs.get(job_id).running, f"the end of job {job_id}", within=within)
    return jobs.get(job_id)


@pytest.mark.slow
def test_a_job_outlives_the_command_timeout_with_the_clean_environment(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-of-the-kernel")
    jobs = manager(ws)
    (ws.root / "experiment").mkdir()
    job = jobs.submit(
        "w1",
        "sleep 2.5; env; echo done > finished.txt; exit 3",
        "long one",
        folder="experiment",
        confinement=sandboxed(ws),
    )
    assert (job.name, job.log, job.folder) == ("long-one", "jobs/long-one.log", "experiment")
    time.sleep(0.5)
    assert jobs.get(job.id).running  # the command runner's own deadline is not a job's
    job = ended(jobs, job.id)
    assert (job.status, job.exit_code) == ("failed", 3)
    assert job.wall_s() >= 2.5
    assert (ws.root / "experiment" / "finished.txt").read_text() == "done\n"
    log = (ws.root / "jobs" / "long-one.log").read_text()
    assert "LIGHTSCIENTIST_WORKSPACE=" in log and "sk-secret" not in log and "OPENAI" not in log
    saved = json.loads((ws.state_dir / "jobs" / f"{job.id}.json").read_text())
    assert saved["status"] == "failed" and saved["log"] == "jobs/long-one.log"
    # a second job of the same name keeps the first one's log
    again = jobs.submit("w1", "true", "long one", confinement=sandboxed(ws))
    assert again.name == "long-one-2" and ended(jobs, again.id).status == "succeeded"


def test_the_wall_time_limit_and_a_cancel_stop_a_job(ws):
    jobs = manager(ws, wall_limit_s=0.5)
    slow = jobs.submit("w1", "sleep 60", "slow", confinement=sandboxed(ws))
    job = ended(jobs, slow.id)
    assert job.status == "timed_out" and "wall-time limit" in job.note
    assert not shell.group_alive(job.pgid)

    jobs.wall_limit_s = 3600
    other = jobs.submit("w2", "sleep 60", "other", confinement=sandboxed(ws, "w2"))
    mine = jobs.submit(
        "w1", "touch up; sleep 60 & sleep 60; wait", "mine", confinement=sandboxed(ws)
    )
    wait_for(lambda: (ws.root / "up").exists(), "the job's sandbox to be up", within=30)
    (stopped,) = jobs.stop_owner("w1")
    assert stopped.id == mine.id and stopped.status == "stopped"
    assert not shell.group_alive(mine.pgid)
    assert jobs.get(other.id).running  # another worker's job goes on
    assert [j.status for j in jobs.stop_all()] == ["stopped"]


def test_a_refused_job_says_what_to_fix(ws):
    jobs = manager(ws)
    with pytest.raises(JobRefused, match="resources: gpus='many' is not a number"):
        jobs.submit("w1", "true", "x", resources={"gpus": "many"})
    with pytest.raises(JobRefused, match="folder: '/etc' is outside the workspace"):
        jobs.submit("w1", "true", "x", folder="/etc")
    with pytest.raises(JobRefused, match="needs a command"):
        jobs.submit("w1", "  ", "x")
    assert jobs.all() == []


CHILD = """
import os, sys
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.sandbox import shell
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.workspace import Workspace
jobs = JobManager(Workspace.at(sys.argv[1]), EventBus(), shell.ProcessGroups())
job = jobs.submit("w1", sys.argv[2], sys.argv[3])
print(job.id, flush=True)
os.kill(os.getpid(), 9)
"""


def submitted_by_a_killed_run(ws: Workspace, command: str, name: str) -> str:
    """Submit a job from a process that is SIGKILLed right after; returns the job's id."""
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(ws.root), command, name],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc.stdout.split()[0]


@pytest.mark.slow
def test_a_job_that_outlived_a_killed_run_is_found_again(ws):
    job_id = submitted_by_a_killed_run(ws, "sleep 1.5; echo from the old run", "survivor")
    jobs = manager(ws)  # the next run
    assert jobs.refresh()[0].running  # adopted: its process group still runs
    wait_for(lambda: not jobs.refresh()[0].running, "the adopted job's end", within=20, poll=0.2)
    job = jobs.get(job_id)
    assert (job.status, job.exit_code) == ("succeeded", 0)
    assert "from the old run" in (ws.root / "jobs" / "survivor.log").read_text()

    # a job whose process is gone without an exit status was lost with its run; its wall
    # time runs to its log's last line, not to the moment a run looked
    record = json.loads((ws.state_dir / "jobs" / f"{job_id}.json").read_text())
    record.update(id="j9", status="running", exit_code=None, ended_at=None, name="gone")
    (ws.state_dir / "jobs" / "j9.json").write_text(json.dumps(record))
    log = ws.root / "jobs" / "gone.log"
    log.write_text("started\n")
    os.utime(log, (record["submitted_at"] + 1.0, record["submitted_at"] + 1.0))
    jobs.refresh()
    lost = jobs.get("j9")
    assert lost.status == "lost" and "ended with the run" in lost.note
    assert abs(lost.wall_s() - 1.0) < 0.01, lost


@pytest.mark.slow
def test_a_job_that_ended_unwatched_reports_its_own_run_time_not_the_wait(ws):
    job_id = submitted_by_a_killed_run(ws, "sleep 0.3; echo quick", "quick")
    exit_file = ws.workers_dir / "w1" / "home" / ".jobs" / f"{job_id}.exit"
    wait_for(exit_file.exists, "the unwatched job's end", within=20)
    time.sleep(3.0)  # nobody watches: the run that started it is dead, none has resumed yet
    seen = []
    bus = EventBus()
    bus.subscribe(seen.append)
    jobs = JobManager(ws, bus, shell.ProcessGroups())  # the run that resumes, much later
    (job,) = jobs.refresh()
    assert (job.status, job.exit_code) == ("succeeded", 0)
    assert job.wall_s() < 2.5, job  # about 0.3 s of sleep, not the 3 s nobody looked
    assert abs(job.ended_at - exit_file.stat().st_mtime) < 0.01
    assert f"wall time {job.wall_s():.1f} s" in ended_message([job], ws.root)
    assert seen[-1].message.endswith(f"after {job.wall_s():.1f} s")


LONG = {"command": "echo started; sleep 60", "name": "long"}


def test_a_worker_through_a_real_client_submits_and_its_cancel_stops_the_job(
    make_runtime, chat_model, chat_server, ws
):
    chat_server.play(
        {"tool": "submit_job", "args": {**LONG, "resources": {"x": "?"}}},
        {"tool": "submit_job", "args": LONG},
        tool_call("finalize_cancel", notes="the long job was stopped"),
    )
    runtime = make_runtime(chat_model)
    worker = runtime.start(WorkerSpec(message="run the long experiment", stage="experiment.loop"))
    record = finish(runtime, worker)
    assert record["status"] == "background"  # the refused submit did not end the turn
    (job_id,) = record["jobs"]
    refused = [m for m in chat_server.requests[1]["messages"] if m["role"] == "tool"]
    assert refused[-1]["content"].startswith("Job not submitted: resources: x='?'")
    wait_for(lambda: "started" in (ws.root / "jobs" / "long.log").read_text(), "the job's output")
    job = runtime.jobs.get(job_id)
    assert job.running and job.stage == "experiment.loop"

    cancelled = runtime.cancel(worker, timeout=20)
    assert cancelled.status == "cancelled"
    job = runtime.jobs.get(job_id)
    assert job.status == "stopped" and not shell.group_alive(job.pgid)


def job_processes(marker: str) -> list[str]:
    """The live processes whose command line holds `marker` (this test's workspace)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                line = fh.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                state = fh.read().decode(errors="replace").rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in line and state != "Z":
            found.append(f"{entry.name} {line[:100]}")
    return found


@pytest.mark.slow
def test_a_job_cancelled_at_once_leaves_no_process(ws):
    """Cancelled in its first milliseconds, before its sandbox has set itself up: nothing of
    the job may live on (bwrap, the sandbox's init, the command), polled for 3 s."""
    jobs = manager(ws)
    for n in range(8):  # the race was lost about every other time
        job = jobs.submit("w1", f"sleep 47.{n}", f"early-{n}", confinement=sandboxed(ws))
        (stopped,) = jobs.stop_owner("w1")
        assert stopped.id == job.id and stopped.status == "stopped"
    until = time.monotonic() + 3.0
    while time.monotonic() < until:
        assert job_processes(str(ws.root)) == []
        time.sleep(0.1)


def test_a_job_that_ends_as_it_starts_is_recorded_ended(ws):
    """Its watcher sees it end before `submit` has saved its record: the end waits for the
    record (it was lost, and the job said running for good: its worker never resumed)."""
    jobs = manager(ws)
    submitted = [jobs.submit("w1", "true", f"quick {n}") for n in range(30)]
    for job in submitted:
        assert (ended(jobs, job.id, within=10).status, jobs.get(job.id).exit_code) == (
            "succeeded",
            0,
        )
