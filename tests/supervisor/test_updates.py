"""The update function and the event filter: pure functions over explicit inputs."""

from __future__ import annotations

import dataclasses

import pytest

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.supervisor.updates import (
    SchedulingEvent,
    apply_update,
    filter_update,
)
from lightscientist_jupyter.vocab import SchedulingKind, WorkerStatus


def record(**changes) -> WorkerRecord:
    base = WorkerRecord(
        id="w1",
        task_id="experiment.loop#2",
        stage="experiment.loop",
        labels={"label": "probe c1"},
        status=WorkerStatus.RUNNING,
        updated_at=100.0,
    )
    return dataclasses.replace(base, **changes)


def update(status: str, calls: int = 1, **extra) -> WorkerUpdate:
    return WorkerUpdate(
        worker_id="w1",
        status=WorkerStatus(status),
        progress=Progress(model_calls=calls, tool_calls=calls, steps=2 * calls),
        at=200.0,
        **extra,
    )


def test_progress_update_only_touches_the_record():
    before = record()
    after = apply_update(before, update("running", calls=5))
    assert after.progress == Progress(model_calls=5, tool_calls=5, steps=10)
    assert after.updated_at == 200.0
    assert filter_update(before, after) is None


def test_finishing_becomes_a_worker_finished_event_with_the_result():
    result = {
        "kind": "complete_stage",
        "summary": "s",
        "outputs": ["a"],
        "next_stage": "experiment.analyze",
    }
    before = record()
    after = apply_update(before, update("completed", result=result))
    event = filter_update(before, after)
    assert event is not None and event.kind == SchedulingKind.WORKER_FINISHED
    assert event.worker_id == "w1" and event.task_id == "experiment.loop#2"
    assert event.data == {"label": "probe c1", "stage": "experiment.loop", "result": result}
    assert event.at == 200.0


@pytest.mark.parametrize(
    ("status", "extra", "kind", "key", "value"),
    [
        ("waiting", dict(question="budget?"), SchedulingKind.WORKER_WAITING, "question", "budget?"),
        (
            "background",
            dict(check_after_s=3.0, result={"kind": "suspend", "reason": "long"}),
            SchedulingKind.WORKER_BACKGROUND,
            "check_after_s",
            3.0,
        ),
        ("failed", dict(error="boom"), SchedulingKind.WORKER_FAILED, "error", "boom"),
        (
            "cancelled",
            dict(result={"kind": "finalize_cancel", "notes": "n"}),
            SchedulingKind.WORKER_CANCELLED,
            "result",
            {"kind": "finalize_cancel", "notes": "n"},
        ),
    ],
)
def test_waiting_background_failed_and_cancelled_each_raise_their_event(
    status, extra, kind, key, value
):
    before = record()
    after = apply_update(before, update(status, **extra))
    event = filter_update(before, after)
    assert event is not None and event.kind == kind
    assert event.data[key] == value


def test_a_background_event_carries_the_reason():
    after = apply_update(
        record(),
        update("background", check_after_s=3.0, result={"kind": "suspend", "reason": "long run"}),
    )
    event = filter_update(record(), after)
    assert event is not None and event.data["reason"] == "long run"


def test_suspension_mode_follows_the_status():
    assert apply_update(record(), update("waiting", question="q")).suspension == "waiting"
    assert apply_update(record(), update("background", check_after_s=1)).suspension == "background"
    assert (
        apply_update(record(status=WorkerStatus.BACKGROUND), update("running")).suspension is None
    )


def test_a_question_and_an_error_stay_until_replaced():
    waiting = apply_update(record(), update("waiting", question="q?"))
    running = apply_update(waiting, update("running"))
    assert running.question == "q?"  # only a new `waiting` replaces it
    failed = apply_update(running, update("failed", error="boom"))
    assert apply_update(failed, update("failed")).error == "boom"


def test_a_repeated_final_update_is_not_a_second_event():
    result = {"kind": "complete_stage", "summary": "s", "outputs": [], "next_stage": "x"}
    first = apply_update(record(), update("completed", result=result))
    again = apply_update(first, update("completed", calls=2, result=result))
    assert filter_update(first, again) is None


def test_an_update_without_a_time_is_stamped_now():
    moment = apply_update(record(), dataclasses.replace(update("running"), at=0.0)).updated_at
    assert moment > 1e9


def test_scheduling_events_round_trip_and_read_the_old_kind_name():
    event = SchedulingEvent(SchedulingKind.STAGE_REJECTED, "t#1", None, {"reason": "r"}, 5.0)
    assert SchedulingEvent.from_dict(event.to_dict()) == event
    old = {"kind": "finish_refused", "task_id": "t#1", "data": {"reason": "r"}, "at": 5.0}
    assert SchedulingEvent.from_dict(old) == event
    with pytest.raises(ValueError):
        SchedulingEvent.from_dict({**old, "kind": "no_such_kind"})
