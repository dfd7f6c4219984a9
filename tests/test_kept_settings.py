"""Run settings given only to `resume` are kept for the runs after it, from the command line:
`--ray ADDRESS` (a plain resume sends its jobs there) and `--job-time-limit` (a plain resume's
job is held to it). `--checkpoints` is in tests/test_checkpoint_urls.py.

The model is the offline one; the Ray address is one nothing listens on, so its jobs are
refused with a line naming it (no cluster is needed to see which address a run used).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.ray_head import free_port
from support.tables import loop_stages

pytestmark = pytest.mark.slow


def cli(ws: Path, *args: str, **extra_env: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIGHTSCIENTIST_", "RAY_"))}
    env["LIGHTSCIENTIST_MEMORY"] = os.environ["LIGHTSCIENTIST_MEMORY"]  # the suite's
    env.update(extra_env)
    command = [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)]
    return subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)


def last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout.strip().splitlines()[-1]


def settings(ws: Path) -> dict:
    return json.loads((ws / ".lightscientist" / "state.json").read_text())["settings"]


def start_paused_after_setup(ws: Path, *extra: str) -> subprocess.CompletedProcess:
    """`research` of an offline auto project in `ws` from experiment.setup until it, with
    the experiment loop as one plan (its batch 2 a job; `support.tables.loop_stages`)."""
    table = loop_stages(ws.parent / "stages")
    return cli(ws, "research", "x", "--mode", "auto", "--stage", "experiment.setup",
               "--stages", str(table), "--until", "experiment.setup", *extra)  # fmt: skip


def paused_after_setup(ws: Path) -> None:
    """An offline auto project in `ws`, started without --ray or --job-time-limit, paused
    after experiment.setup (its experiment loop's second batch is a job)."""
    first = start_paused_after_setup(ws)
    assert first.returncode == 0 and last_line(first) == "paused", first.stderr
    assert "ray" not in settings(ws) and "job_time_limit" not in settings(ws)


def test_a_ray_address_given_to_resume_is_kept_for_the_next_resume(tmp_path):
    ws = tmp_path / "project"
    paused_after_setup(ws)
    address = f"127.0.0.1:{free_port()}"  # nothing listens there

    once = cli(ws, "resume", "--ray", address, "--until", "experiment.loop")  # batch 1, here
    assert once.returncode == 0 and last_line(once) == "paused", once.stderr
    assert settings(ws)["ray"] == address

    # no --ray: batch 2's job goes to the kept address (paused after the analysis, which is
    # as far as jobs go)
    plain = cli(ws, "resume", "--until", "experiment.analyze")
    assert plain.returncode == 0 and last_line(plain) == "paused", plain.stderr
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()]
    (refused,) = [
        e["data"]["result"]
        for e in events
        if e["type"] == "tool.result" and e["data"].get("tool") == "submit_job"
    ]
    assert refused.startswith("Job not submitted: ") and address in refused, refused
    assert settings(ws)["ray"] == address
    assert not list((ws / ".lightscientist").glob("jobs/j*.json"))  # no job ran here


def test_ray_local_sets_a_kept_address_aside_and_is_kept_itself(tmp_path):
    ws = tmp_path / "project"
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    first = start_paused_after_setup(ws, "--ray", address)
    assert first.returncode == 0 and last_line(first) == "paused", first.stderr
    assert settings(ws)["ray"] == address

    # RAY_ADDRESS names the dead address too: `local` wins over both
    local = cli(ws, "resume", "--ray", "local", "--until", "experiment.loop", RAY_ADDRESS=address)
    assert local.returncode == 0 and last_line(local) == "paused", local.stderr
    assert settings(ws)["ray"] == "local"

    # batch 2's job runs on this machine (paused after the analysis: the paper has no job)
    plain = cli(ws, "resume", "--until", "experiment.analyze", RAY_ADDRESS=address)
    assert plain.returncode == 0 and last_line(plain) == "paused", plain.stderr
    (job,) = [json.loads(p.read_text()) for p in (ws / ".lightscientist").glob("jobs/j*.json")]
    assert (job["backend"], job["status"]) == ("local", "succeeded")
    assert settings(ws)["ray"] == "local"


def test_a_job_time_limit_given_to_resume_is_kept_for_the_next_resume(tmp_path):
    ws = tmp_path / "project"
    paused_after_setup(ws)
    script = ws / "experiment" / "run_experiment.py"  # batch 2 (the job) sleeps first
    slow = 'if sys.argv[-2:] == ["--batch", "2"]:\n    __import__("time").sleep(60)\n'
    main = 'if __name__ == "__main__":'
    script.write_text(script.read_text(encoding="utf-8").replace(main, slow + main))

    once = cli(ws, "resume", "--job-time-limit", "2s", "--until", "experiment.loop")
    assert once.returncode == 0 and last_line(once) == "paused", once.stderr
    assert settings(ws)["job_time_limit"] == "2s"

    # no --job-time-limit: the kept 2 s, not the default 6 h (paused after the analysis: the
    # paper has no job)
    plain = cli(ws, "resume", "--until", "experiment.analyze")
    assert plain.returncode == 0 and last_line(plain) == "paused", plain.stderr
    (job,) = [json.loads(p.read_text()) for p in (ws / ".lightscientist").glob("jobs/j*.json")]
    assert (job["status"], job["wall_limit_s"]) == ("timed_out", 2.0)
    assert job["note"] == "stopped at its wall-time limit (2 s)"
