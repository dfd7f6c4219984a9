"""The supervisor loop's saved state: a round trip, and a file an older version wrote."""

from __future__ import annotations

import json

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress
from lightscientist_jupyter.supervisor.loop_state import LoopState, load_loop_state, save_loop_state
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.vocab import SchedulingKind, WorkerStatus

TASK_ID = "idea.probe_batch#1"


def test_the_state_round_trips_through_its_file(tmp_path):
    record = WorkerRecord(
        id="w3",
        task_id=TASK_ID,
        stage="idea.probe_batch",
        labels={"label": "probe c2"},
        status=WorkerStatus.BACKGROUND,
        progress=Progress(model_calls=2, tool_calls=1, steps=3),
        updated_at=12.5,
        check_after_s=4.0,
    )
    event = SchedulingEvent(SchedulingKind.STAGE_REJECTED, TASK_ID, None, {"reason": "r"}, 3.0)
    state = LoopState(
        task_id=TASK_ID,
        records={"w3": record},
        queue=[event],
        schedules=[{"worker_id": "w3", "message": "check", "due": 20.0}],
        attempts=2,
        started={"call_1": "w3"},
        in_progress=event,
        last_finish={"summary": "s", "outputs": [], "next_stage": "x"},
        stalled={"w3"},
    )
    path = tmp_path / "supervisor.json"
    save_loop_state(path, state)
    assert load_loop_state(path, TASK_ID) == state
    assert json.loads(path.read_text())["queue"][0]["kind"] == "stage_rejected"


def test_a_state_of_another_stage_or_a_broken_file_starts_fresh(tmp_path):
    path = tmp_path / "supervisor.json"
    save_loop_state(path, LoopState(task_id="idea.gate#1", attempts=3))
    assert load_loop_state(path, TASK_ID) == LoopState(task_id=TASK_ID)
    path.write_text("{not json")
    assert load_loop_state(path, TASK_ID) == LoopState(task_id=TASK_ID)


def test_a_file_an_older_version_wrote_still_loads(tmp_path):
    old = {
        "task_id": TASK_ID,
        "records": {
            "w3": {
                "worker_id": "w3",
                "task_id": TASK_ID,
                "stage": "idea.probe_batch",
                "goal": "g",
                "label": "probe c2",
                "status": "background",
                "suspension": "background",
                "thread_id": None,
                "workspace": "/ws",
                "model_calls": 2,
                "tool_calls": 1,
                "steps": 3,
                "last_update": 12.5,
                "result": {"kind": "suspend", "reason": "r"},
                "question": None,
                "check_after_s": 4.0,
                "error": None,
                "stalled": True,
            }
        },
        "queue": [
            {
                "kind": "finish_refused",
                "task_id": TASK_ID,
                "worker_id": None,
                "data": {"reason": "missing idea/probes/plan.md"},
                "at": 3.0,
            }
        ],
        "schedules": [],
        "attempts": 1,
        "started": {},
        "in_progress": {
            "kind": "finish_refused",
            "task_id": TASK_ID,
            "worker_id": None,
            "data": {},
            "at": 2.0,
        },
        "last_finish": None,
    }
    path = tmp_path / "supervisor.json"
    path.write_text(json.dumps(old))
    state = load_loop_state(path, TASK_ID)
    record = state.records["w3"]
    assert (record.id, record.label, record.status, record.updated_at) == (
        "w3",
        "probe c2",
        WorkerStatus.BACKGROUND,
        12.5,
    )
    assert record.progress == Progress(model_calls=2, tool_calls=1, steps=3)
    assert record.result == {"kind": "suspend", "reason": "r"} and record.workspace == "/ws"
    assert state.stalled == {"w3"}
    assert [e.kind for e in state.queue] == [SchedulingKind.STAGE_REJECTED]
    assert state.in_progress is not None
    assert state.in_progress.kind == SchedulingKind.STAGE_REJECTED
    assert state.attempts == 1
