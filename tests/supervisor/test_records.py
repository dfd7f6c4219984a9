"""The update function and the event filter: pure functions over explicit inputs."""

from __future__ import annotations

import dataclasses

from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.supervisor.records import (
    WorkerRecord,
    apply_update,
    filter_update,
    stalled,
)


def record(**changes) -> WorkerRecord:
    base = WorkerRecord(worker_id="w1", task_id="experiment.loop#2", stage="experiment.loop",
                        status="running", last_update=100.0)
    return dataclasses.replace(base, **changes)


def update(status: str, calls: int = 1, **extra) -> WorkerUpdate:
    return WorkerUpdate(worker_id="w1", status=status,
                        progress=Progress(model_calls=calls, tool_calls=calls, steps=2 * calls),
                        at=200.0, **extra)


def test_progress_update_only_touches_the_record():
    before = record()
    after = apply_update(before, update("running", calls=5))
    assert (after.model_calls, after.tool_calls, after.steps) == (5, 5, 10)
    assert after.last_update == 200.0
    assert filter_update(before, after) is None


def test_finishing_becomes_a_worker_finished_event_with_the_result():
    result = {"kind": "complete_stage", "summary": "s", "outputs": ["a"],
              "next_stage": "experiment.analyze"}
    before = record()
    after = apply_update(before, update("completed", result=result))
    event = filter_update(before, after)
    assert event is not None and event.kind == "worker_finished"
    assert event.worker_id == "w1" and event.task_id == "experiment.loop#2"
    assert event.data["result"] == result


def test_waiting_background_failed_and_cancelled_each_raise_their_event():
    cases = {
        "waiting": (dict(question="budget?"), "worker_waiting", "question", "budget?"),
        "background": (dict(check_after_s=3.0, result={"kind": "suspend", "reason": "long"}),
                       "worker_background", "check_after_s", 3.0),
        "failed": (dict(error="boom"), "worker_failed", "error", "boom"),
        "cancelled": (dict(result={"kind": "finalize_cancel", "notes": "n"}),
                      "worker_cancelled", "result", {"kind": "finalize_cancel", "notes": "n"}),
    }
    for status, (extra, kind, key, value) in cases.items():
        before = record()
        after = apply_update(before, update(status, **extra))
        event = filter_update(before, after)
        assert event is not None and event.kind == kind, status
        assert event.data[key] == value, status


def test_suspension_mode_follows_the_status():
    assert apply_update(record(), update("waiting", question="q")).suspension == "waiting"
    assert apply_update(record(), update("background", check_after_s=1)).suspension == "background"
    assert apply_update(record(status="background", suspension="background"),
                        update("running")).suspension is None


def test_a_repeated_final_update_is_not_a_second_event():
    result = {"kind": "complete_stage", "summary": "s", "outputs": [], "next_stage": "x"}
    first = apply_update(record(), update("completed", result=result))
    again = apply_update(first, update("completed", calls=2, result=result))
    assert filter_update(first, again) is None


def test_stall_is_reported_once_per_silence():
    quiet = record(last_update=0.0)
    assert stalled(quiet, now=500.0, stall_after_s=300.0)
    assert not stalled(dataclasses.replace(quiet, stalled=True), now=500.0, stall_after_s=300.0)
    assert not stalled(record(last_update=400.0), now=500.0, stall_after_s=300.0)
    assert not stalled(record(status="background", last_update=0.0), now=500.0,
                       stall_after_s=300.0)
    # any update clears the flag, so a later silence is reported again
    assert not apply_update(dataclasses.replace(quiet, stalled=True), update("running")).stalled
