"""ExecutionRuntime lifecycle paths, driven by the offline model on real stages of the default
table: waiting → resume with an answer, a job's background → resume with its end, final states that
refuse resume, cancellation of an idle worker, records read back by a new runtime, the
delivery record of each worker — and a supervisor-role session whose input stays bounded."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from support.fixtures import checkpointer_named
from support.runtime import answer, checkpoint_messages, finish, write_study_script
from support.waiting import wait_for

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.offline.playbook import BUDGET_QUESTION
from lightscientist_jupyter.runtime.jobs.manager import ended_message
from lightscientist_jupyter.runtime.types import WorkerSpec, WorkerUpdate


def assert_counters_grow(updates: list[WorkerUpdate]) -> None:
    """Progress counters never go down and end above where they started."""
    for field in ("model_calls", "tool_calls", "steps"):
        values = [getattr(u.progress, field) for u in updates]
        assert values == sorted(values), f"{field} went down: {values}"
    assert updates[-1].progress.model_calls > updates[0].progress.model_calls
    assert updates[-1].progress.tool_calls > 0


@pytest.mark.parametrize("checkpointer", ["sqlite", "memory", "postgres"])
def test_waiting_resumes_with_an_answer(
    make_runtime, spec_for, updates, recorder, ws, checkpointer, request
):
    checkpointer = checkpointer_named(request, checkpointer)
    runtime = make_runtime(checkpointer=checkpointer, bus=recorder.bus)
    worker = runtime.start(spec_for("idea.generate"))

    record = finish(runtime, worker)
    assert record["status"] == "waiting"
    assert record["question"] == BUDGET_QUESTION
    waiting = updates.of(worker)[-1]
    assert (waiting.status, waiting.question) == ("waiting", BUDGET_QUESTION)
    assert waiting.stage == "idea.generate" and waiting.task_id == "idea.generate#1"
    assert "Waiting for an answer" in (ws.workers_dir / worker / "agent-run.md").read_text()

    with pytest.raises(RuntimeLayerError, match="waiting for an answer to: How much compute"):
        runtime.resume(worker)
    runtime.resume(worker, answer="small, please")
    record = finish(runtime, worker)

    assert record["status"] == "completed", record
    assert record["result"]["kind"] == "complete_stage"
    assert record["result"]["next_stage"] == "idea.evaluate"
    assert record["result"]["outputs"] == ["idea/candidates.md"]
    assert "small, please" in record["result"]["summary"]
    assert "small, please" in (ws.root / "idea" / "candidates.md").read_text()

    seen = updates.statuses(worker)
    assert seen[0] == "running" and "waiting" in seen and seen[-1] == "completed"
    assert seen.index("waiting") < len(seen) - 1 - seen[::-1].index("running")  # ran again
    assert_counters_grow(updates.of(worker))
    assert updates.of(worker)[-1].result == record["result"]

    delivery = (ws.workers_dir / worker / "agent-run.md").read_text()
    assert "**completed**" in delivery and "idea.generate" in delivery
    assert "- `/idea/candidates.md`" in delivery
    assert "Suggested next stage: `idea.evaluate`" in delivery
    saved = json.loads((ws.workers_dir / worker / "worker.json").read_text())
    assert saved["status"] == "completed"

    with pytest.raises(
        RuntimeLayerError, match="is completed; a finished session cannot be resumed"
    ):
        runtime.resume(worker, message="one more thing")

    starts = recorder.of_type("session.start")
    assert [e.data["resumed"] for e in starts] == [False, True]
    (asked,) = recorder.of_type("worker.waiting")
    assert asked.data == {"question": BUDGET_QUESTION} and asked.worker_id == worker
    assert asked.stage == "idea.generate" and asked.layer == 3
    assert recorder.of_type("session.end")[-1].data == {"status": "completed"}


def test_a_job_puts_the_worker_in_background_and_its_end_resumes_it(
    make_runtime, spec_for, updates, recorder, ws, checkpoints
):
    write_study_script(ws, "experiment/run_experiment.py")
    runtime = make_runtime(bus=recorder.bus, checkpointer=checkpoints)
    spec = spec_for("experiment.loop", visit=2)
    worker = runtime.start(spec)

    record = finish(runtime, worker)  # submit_job ended the turn
    assert record["status"] == "background"
    assert record["result"] == {"kind": "suspend", "reason": "job batch-2 is running"}
    (job_id,) = record["jobs"]
    assert "Suspended in the background" in (ws.workers_dir / worker / "agent-run.md").read_text()
    with pytest.raises(
        RuntimeLayerError, match=f"worker {worker} already exists and is background"
    ):
        runtime.start(WorkerSpec(message="a second first message", worker_id=worker))

    job = wait_for(lambda: not runtime.jobs.get(job_id).running, "the job's end", within=60)
    job = runtime.jobs.get(job_id)
    assert (job.status, job.exit_code, job.worker_id) == ("succeeded", 0, worker)
    log = (ws.root / "jobs" / "batch-2.log").read_text()
    assert "batch 2 of 2: 9 run(s) ok" in log and "wrote 27 rows" in log

    message = ended_message([job], ws.root)  # what layer 2 resumes it with
    assert "succeeded; exit code 0; wall time" in message and "batch 2 of 2: 9 run(s)" in message
    runtime.resume(worker, message=message)
    record = finish(runtime, worker)
    assert record["status"] == "completed", record
    assert record["result"]["next_stage"] == "experiment.analyze"
    assert "as the job batch-2" in record["result"]["summary"]
    assert "batch 2" in (ws.root / "experiment" / "log.md").read_text()

    messages = checkpoint_messages(runtime, record["thread_id"])
    humans = [m.content for m in messages if isinstance(m, HumanMessage)]
    assert humans == [spec.message, message]  # the original task, still first
    assert any(isinstance(m, ToolMessage) and m.name == "submit_job" for m in messages)
    seen = updates.statuses(worker)
    assert "background" in seen and seen[-1] == "completed"
    assert_counters_grow(updates.of(worker))
    assert record["commands"] == ["python experiment/run_experiment.py --batches 2 --status"]
    (submitted,) = recorder.of_type("job.submitted")
    (ended,) = recorder.of_type("job.finished")
    assert submitted.worker_id == ended.worker_id == worker and submitted.layer == 3
    assert ended.data["job"]["status"] == "succeeded"


def test_an_answer_to_a_background_worker_arrives_as_a_message(make_runtime, spec_for, ws):
    write_study_script(ws, "experiment/run_experiment.py")
    runtime = make_runtime()
    worker = runtime.start(spec_for("experiment.loop", visit=2))
    before = finish(runtime, worker)
    assert before["status"] == "background"

    runtime.resume(worker, answer="check on it now")
    after = finish(runtime, worker)
    assert after["progress"]["model_calls"] > before["progress"]["model_calls"]
    humans = [
        m.content
        for m in checkpoint_messages(runtime, after["thread_id"])
        if isinstance(m, HumanMessage)
    ]
    assert humans[1:] == ["check on it now"]


def test_cancelling_a_background_worker_finalizes_it(make_runtime, spec_for, ws, checkpoints):
    write_study_script(ws, "experiment/run_experiment.py")
    runtime = make_runtime(checkpointer=checkpoints)
    worker = runtime.start(spec_for("experiment.loop", visit=2))
    assert finish(runtime, worker)["status"] == "background"
    record = runtime.cancel(worker, timeout=20)
    assert record.status == "cancelled"
    assert record.result["kind"] == "finalize_cancel"
    with pytest.raises(RuntimeLayerError, match="is cancelled"):
        runtime.resume(worker, message="go on")


def test_unknown_workers_and_checkpointers_are_named(make_runtime, ws):
    with pytest.raises(
        RuntimeLayerError, match="unknown checkpoints URL 'postgres'; use sqlite:///"
    ):
        make_runtime(checkpointer="postgres")
    runtime = make_runtime()
    assert ws.checkpoints_file.stat().st_mode & 0o777 == 0o600
    with pytest.raises(RuntimeLayerError, match="no worker 'w99'"):
        runtime.resume("w99", answer="x")
    with pytest.raises(RuntimeLayerError, match="no worker 'w99'"):
        runtime.get("w99")
    assert runtime.list() == []


def test_cancelling_a_waiting_worker_finalizes_it(make_runtime, spec_for, updates, ws, checkpoints):
    runtime = make_runtime(checkpointer=checkpoints)
    worker = runtime.start(spec_for("idea.generate"))
    assert finish(runtime, worker)["status"] == "waiting"

    record = runtime.cancel(worker, timeout=20)

    assert record.status == "cancelled"
    assert record.result["kind"] == "finalize_cancel"
    assert "stopped on request" in record.result["notes"]
    assert updates.of(worker)[-1].status == "cancelled"
    assert "**cancelled**" in (ws.workers_dir / worker / "agent-run.md").read_text()
    assert runtime.cancel(worker).status == "cancelled"  # a second cancel changes nothing
    with pytest.raises(
        RuntimeLayerError, match="is cancelled; a finished session cannot be resumed"
    ):
        runtime.resume(worker, answer="small")


def test_records_are_listed_and_read_back_by_a_new_runtime(make_runtime, spec_for, ws, checkpoints):
    first = make_runtime(checkpointer=checkpoints)
    a = first.start(spec_for("idea.survey"))
    assert finish(first, a)["status"] == "completed"
    b = first.start(spec_for("idea.generate"))
    assert finish(first, b)["status"] == "waiting"

    second = make_runtime(checkpointer=checkpoints)
    listed = second.list()
    assert [r.id for r in listed] == [a, b]
    assert [r.status for r in listed] == ["completed", "waiting"]
    assert listed[0].files_written == ("/idea/survey.md",)
    assert listed[0].progress.model_calls >= 2
    with pytest.raises(RuntimeLayerError, match="is completed"):
        second.resume(a, message="again")


def test_a_supervisor_session_sees_only_its_current_turn(chat_server, chat_model, make_runtime):
    chat_server.play(answer("continue"), answer("done"))
    runtime = make_runtime(chat_model, retries=0)
    spec = WorkerSpec(
        message="event 1: the stage started",
        role="supervisor",
        file_tools=False,
        max_input_messages=True,
        system_prompt="You supervise.",
    )
    worker = runtime.start(spec)
    record = finish(runtime, worker)
    assert record["status"] == "background"  # a supervisor idles between events
    assert record["result"] == {"kind": "reply", "text": "continue"}

    runtime.resume(worker, message="event 2: a worker finished")
    record = finish(runtime, worker)
    assert record["result"] == {"kind": "reply", "text": "done"}
    second = chat_server.requests[1]
    assert second["messages"] == [
        {"role": "system", "content": "You supervise."},
        {"role": "user", "content": "event 2: a worker finished"},
    ]
    assert "tools" not in second  # no file tools, no shell
    humans = [
        m.content
        for m in checkpoint_messages(runtime, record["thread_id"])
        if isinstance(m, HumanMessage)
    ]
    assert humans == ["event 1: the stage started", "event 2: a worker finished"]
