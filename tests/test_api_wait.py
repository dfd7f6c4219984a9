"""`api.Run.wait()` returns once the run's last events are written (issue 20, point 11)."""

from __future__ import annotations

import time

import pytest

from lightscientist_jupyter import api
from lightscientist_jupyter.events import read_tail


@pytest.mark.slow
def test_wait_returns_after_the_last_events_are_written(tmp_path):
    ws = tmp_path / "project"
    run = api.start("Does warmup help?", ws, mode="auto")
    assert run.wait(timeout=300) == "done"
    log = ws / ".lightscientist" / "events.jsonl"
    at_once = read_tail(log, 50)  # what a user reading the tail right away sees
    assert not run.alive
    time.sleep(1.0)
    assert read_tail(log, 50) == at_once, "events were still being written after wait()"
    # the last: the project's lessons filed in the user's memory, once its worker ended
    assert at_once[-1]["type"] == "memory.filed" and at_once[-1]["data"]["task_id"] == "done"
    assert any(e["type"] == "stage.transition" and e["data"]["to"] == "done" for e in at_once)
