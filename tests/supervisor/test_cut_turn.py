"""A supervisor turn cut short by a crash, before the turn has ended and its checkpoint is
written: the process is SIGKILLed right after the agent's `start_worker` has started a worker,
or right after its `finish_stage` was accepted. `resume` in a new process decides that event
again: the repeated `start_worker` (at the same place in the agent's thread) gets the worker the
cut turn started instead of a second one; after the finish, the next stage starts once. Either
way the project ends `done` with every stage recorded once.

The only thing added to the real CLI in the child is the kill, after the real tool returned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_research import cli, last_line, process_keys, state, workers

CHILD = textwrap.dedent("""\
    import os, signal, sys
    from lightscientist_jupyter.cli import main
    from lightscientist_jupyter.supervisor.backends import WorkerControl

    tool, stage, workspace = sys.argv[1:4]
    real = getattr(WorkerControl, tool)

    def then_die(self, *args, **kwargs):
        on = self.task.stage
        answer = real(self, *args, **kwargs)
        if on == stage and (tool == "start_worker" or self.host.state.stage != on):
            print(answer, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return answer

    setattr(WorkerControl, tool, then_die)
    sys.exit(main(["research", "x", "--mode", "auto", "--workspace", workspace]))
    """)

STAGE = "idea.generate"
"""A stage the offline supervisor gives one worker."""


def killed_after(tool: str, tmp_path: Path) -> tuple[Path, str]:
    """The default project in auto mode, SIGKILLed once `tool` has done its work on STAGE;
    returns the workspace and the tool's answer."""
    ws = tmp_path / "project"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.run(
        [sys.executable, str(script), tool, STAGE, str(ws)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    return ws, child.stdout.strip()


def resumed_to_done(ws: Path) -> None:
    proc = cli(ws, "resume")
    assert proc.returncode == 0 and last_line(proc) == "done", proc.stderr
    keys = process_keys(ws)
    assert len(keys) == len(set(keys)) and f"{STAGE}#1" in keys and "paper.review#1" in keys


def on_stage(ws: Path, stage: str) -> list[dict]:
    return [r for r in workers(ws) if r["stage"] == stage and r["role"] == "worker"]


@pytest.mark.slow
def test_a_turn_cut_after_start_worker_is_decided_again_without_a_second_worker(tmp_path):
    ws, started = killed_after("start_worker", tmp_path)
    assert state(ws)["stage"] == STAGE
    loop = json.loads((ws / ".lightscientist" / "supervisor.json").read_text())
    assert started in loop["started"].values()  # the start was recorded before the kill

    resumed_to_done(ws)
    assert [r["id"] for r in on_stage(ws, STAGE)] == [started]  # that worker, and no other
    assert on_stage(ws, STAGE)[0]["status"] == "completed"


@pytest.mark.slow
def test_a_turn_cut_after_an_accepted_finish_goes_on_with_the_next_stage(tmp_path):
    ws, _ = killed_after("finish_stage", tmp_path)
    after = state(ws)["stage"]
    assert after != STAGE  # the transition was durable before the kill
    before = len(on_stage(ws, STAGE))

    resumed_to_done(ws)
    assert len(on_stage(ws, STAGE)) == before  # the finished stage is not run again
    assert len(on_stage(ws, after)) == 1  # the next stage started once
