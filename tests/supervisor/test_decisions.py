"""The supervisor loop's pure rules, each over explicit inputs (no runtime, no model)."""

from __future__ import annotations

import dataclasses

import pytest

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress
from lightscientist_jupyter.supervisor import decisions
from lightscientist_jupyter.supervisor.decisions import Reply
from lightscientist_jupyter.supervisor.loop_state import LoopState
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.vocab import SchedulingKind, StageOutcome, WorkerStatus

TASK_ID = "experiment.loop#2"
S = WorkerStatus


def worker(wid: str = "w1", status: WorkerStatus = S.RUNNING, **fields) -> WorkerRecord:
    return WorkerRecord(id=wid, task_id=TASK_ID, stage="experiment.loop", status=status, **fields)


def agent(
    status: WorkerStatus = S.BACKGROUND, text: str | None = None, error: str | None = None
) -> WorkerRecord:
    result = {"kind": "reply", "text": text} if text is not None else None
    return WorkerRecord(id="supervisor", status=status, result=result, error=error)


# ----------------------------------------------------------------------------- the reply


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("done", Reply.DONE),
        ("Done.", Reply.DONE),
        ("FAILED: the data is missing", Reply.FAILED),
        ("continue", Reply.CONTINUE),
        ("  done; the stage was accepted", Reply.DONE),
        ("I think we are done", Reply.CONTINUE),  # only the first word counts
        ("finished", Reply.CONTINUE),  # not one of the three words
        ("", Reply.CONTINUE),
    ],
)
def test_the_first_word_of_the_reply_decides(text, reply):
    assert decisions.parse_reply(agent(text=text)) == (reply, text.strip())


def test_a_reply_without_a_result_is_continue():
    assert decisions.parse_reply(agent()) == (Reply.CONTINUE, "")


def test_a_failed_agent_turn_is_a_failed_reply_with_its_error():
    assert decisions.parse_reply(agent(S.FAILED, text="done", error="boom")) == (
        Reply.FAILED,
        "boom",
    )
    assert decisions.parse_reply(agent(S.FAILED)) == (Reply.FAILED, "the supervisor agent failed")


@pytest.mark.parametrize(
    ("reply", "text", "line"),
    [
        (Reply.DONE, "done", "done"),
        (Reply.DONE, "Done", "done"),
        (Reply.CONTINUE, "", "continue"),
        (Reply.CONTINUE, "waiting for w2", "continue — waiting for w2"),
        (Reply.FAILED, "x" * 200, "failed — " + "x" * 120),
    ],
)
def test_the_decision_line_adds_the_text_only_when_it_says_more(reply, text, line):
    assert decisions.decision_line(reply, text) == line


# ----------------------------------------------------------------------------- stage outcome

FINISH = {"summary": "five lines", "outputs": ["a.md", "b.csv"], "next_stage": "experiment.analyze"}


@pytest.mark.parametrize(
    ("status", "at", "pending", "finish", "expected"),
    [
        # layer 1 moved on: the stage finished, with the finish it accepted
        (
            "running",
            "experiment.analyze#1",
            None,
            FINISH,
            (StageOutcome.FINISHED, "five lines", ("a.md", "b.csv"), "experiment.analyze"),
        ),
        # the project ended (e.g. the last stage finished, or it was cancelled)
        (
            "done",
            TASK_ID,
            None,
            FINISH,
            (StageOutcome.FINISHED, "five lines", ("a.md", "b.csv"), "experiment.analyze"),
        ),
        ("cancelled", TASK_ID, None, None, (StageOutcome.FINISHED, "", (), None)),
        ("failed", TASK_ID, None, None, (StageOutcome.FINISHED, "", (), None)),
        # a gate waits for the user: the stage waits too
        (
            "waiting_user",
            TASK_ID,
            "gate",
            None,
            (StageOutcome.WAITING_USER, "waiting for the user's decision at the gate", (), None),
        ),
        # a project-level question does not stop the stage; nor does running on
        ("waiting_user", TASK_ID, "question", None, None),
        ("running", TASK_ID, None, FINISH, None),
    ],
)
def test_stage_outcome_follows_where_layer_1_stands(status, at, pending, finish, expected):
    result = decisions.stage_outcome(
        TASK_ID, project_status=status, project_task_id=at, pending_kind=pending, last_finish=finish
    )
    if expected is None:
        assert result is None
    else:
        assert result is not None
        assert (result.status, result.summary, result.outputs, result.next_stage) == expected


# ----------------------------------------------------------------------------- the idle rule


def state(**fields) -> LoopState:
    return LoopState(task_id=TASK_ID, **fields)


SCHEDULE = {"worker_id": "w1", "message": "check", "due": 10.0}
EVENT = SchedulingEvent(SchedulingKind.WORKER_FINISHED, TASK_ID, "w1")


@pytest.mark.parametrize(
    ("loop_state", "project", "idle"),
    [
        (state(), "running", True),
        (
            state(records={"w1": worker(status=S.COMPLETED), "w2": worker("w2", S.WAITING)}),
            "running",
            True,
        ),
        (state(records={"w1": worker(status=S.RUNNING)}), "running", False),
        (state(queue=[EVENT]), "running", False),
        (
            state(records={"w1": worker(status=S.BACKGROUND)}, schedules=[SCHEDULE]),
            "running",
            False,
        ),
        (state(), "waiting_user", False),  # a question is out with the user
    ],
)
def test_idle_means_nothing_will_happen_by_itself(loop_state, project, idle):
    assert decisions.is_idle(loop_state, project) is idle


def test_status_counts_count_each_status():
    records = [worker("w1", S.COMPLETED), worker("w2", S.FAILED), worker("w3", S.COMPLETED)]
    assert decisions.status_counts(records) == {"completed": 2, "failed": 1}
    assert decisions.status_counts([]) == {}


def test_the_stage_fails_after_max_idle_decisions_in_a_row():
    limit = decisions.MAX_IDLE_DECISIONS
    assert all(decisions.idle_failure("experiment.loop", n) is None for n in range(limit))
    failure = decisions.idle_failure("experiment.loop", limit)
    assert failure is not None and failure.status == StageOutcome.FAILED
    assert failure.summary == (
        f"the supervisor left experiment.loop with no worker running {limit} times in a row"
    )


@pytest.mark.parametrize(
    ("streak", "kind", "after"),
    [
        (0, SchedulingKind.STAGE_IDLE, 1),
        (2, SchedulingKind.STAGE_IDLE, 3),
        (2, SchedulingKind.WORKER_FINISHED, 0),
        (1, SchedulingKind.STAGE_REJECTED, 0),
    ],
)
def test_only_idle_events_lengthen_the_idle_streak(streak, kind, after):
    assert decisions.next_idle_streak(streak, kind) == after


@pytest.mark.parametrize(
    ("reply", "fails"), [(Reply.FAILED, True), (Reply.DONE, False), (Reply.CONTINUE, False)]
)
def test_only_a_failed_reply_fails_the_stage(reply, fails):
    failure = decisions.reply_failure(reply, "idea.gate", SchedulingKind.WORKER_FAILED)
    assert (failure is not None) is fails
    if failure is not None:
        assert failure.status == StageOutcome.FAILED
        assert failure.summary == "the supervisor gave up on idea.gate (after event worker_failed)"


@pytest.mark.parametrize("kind", list(SchedulingKind))
def test_failed_workers_and_rejected_finishes_use_up_attempts(kind):
    uses = kind in (SchedulingKind.WORKER_FAILED, SchedulingKind.STAGE_REJECTED)
    assert decisions.counts_as_attempt(kind) is uses


# ----------------------------------------------------------------------------- timers


def test_split_due_keeps_the_order_and_the_boundary_is_due():
    items = [
        {"worker_id": f"w{i}", "message": "m", "due": due}
        for i, due in enumerate((5.0, 20.0, 10.0, 10.5))
    ]
    due, later = decisions.split_due(items, now=10.0)
    assert [s["worker_id"] for s in due] == ["w0", "w2"]
    assert [s["worker_id"] for s in later] == ["w1", "w3"]


@pytest.mark.parametrize(
    ("record", "fires"),
    [
        (None, False),  # not a worker of this stage
        (worker(status=S.BACKGROUND), True),
        (worker(status=S.WAITING), True),
        (worker(status=S.RUNNING), False),  # resumed meanwhile
        (worker(status=S.COMPLETED), False),
        (worker(status=S.CANCELLED), False),
        (worker(status=S.FAILED), False),
    ],
)
def test_a_due_resume_fires_only_for_a_suspended_worker(record, fires):
    assert decisions.may_fire(record) is fires


@pytest.mark.parametrize(
    ("status", "updated_at", "reported", "stalled"),
    [
        (S.RUNNING, 0.0, False, True),
        (S.RUNNING, 0.0, True, False),  # reported once per silence
        (S.RUNNING, 200.0, False, False),  # silent 300 s exactly: not yet
        (S.RUNNING, 400.0, False, False),
        (S.BACKGROUND, 0.0, False, False),  # only running workers stall
        (S.WAITING, 0.0, False, False),
    ],
)
def test_stall_rule(status, updated_at, reported, stalled):
    record = worker(status=status, updated_at=updated_at)
    assert decisions.is_stalled(record, 500.0, 300.0, reported=reported) is stalled


# ----------------------------------------------------------------------------- restarts


def test_a_worker_caught_running_is_revived_and_its_counters_kept():
    before = worker(status=S.BACKGROUND, progress=Progress(model_calls=4), updated_at=1.0)
    disk = worker(status=S.RUNNING, progress=Progress(model_calls=9))
    out = decisions.reconcile(before, disk, [SCHEDULE], now=50.0)
    assert out.revive and out.event is None and out.schedule is None
    assert (out.record.status, out.record.updated_at) == (S.RUNNING, 50.0)
    assert out.record.progress.model_calls == 4


def test_a_change_the_crash_hid_becomes_its_event():
    result = {"kind": "complete_stage", "summary": "s", "outputs": [], "next_stage": "x"}
    disk = worker(status=S.COMPLETED, result=result, progress=Progress(model_calls=7))
    out = decisions.reconcile(worker(), disk, [], now=50.0)
    assert not out.revive and out.schedule is None
    assert out.event is not None and out.event.kind == SchedulingKind.WORKER_FINISHED
    assert out.event.data["result"] == result and out.event.at == 50.0
    assert out.record.progress.model_calls == 7


def test_a_background_worker_nobody_checks_on_is_scheduled_now():
    reason = {"kind": "suspend", "reason": "long"}
    before = worker(status=S.BACKGROUND, result=reason, check_after_s=5.0)
    disk = dataclasses.replace(before)
    out = decisions.reconcile(before, disk, [], now=50.0)
    assert out.event is None and not out.revive
    assert out.schedule == {"worker_id": "w1", "due": 50.0, "message": decisions.RESTART_MESSAGE}
    # with a resume already scheduled, nothing is added
    assert decisions.reconcile(before, disk, [SCHEDULE], now=50.0).schedule is None


def test_a_finished_worker_already_heard_of_changes_nothing():
    result = {"kind": "complete_stage", "summary": "s", "outputs": [], "next_stage": "x"}
    before = worker(status=S.COMPLETED, result=result)
    out = decisions.reconcile(before, before, [], now=50.0)
    assert out.event is None and out.schedule is None and not out.revive


def test_a_worker_the_crash_stopped_before_it_began_is_cancelled_once():
    out = decisions.reconcile(worker(status=S.RUNNING), None, [], now=50.0)
    assert (out.record.status, out.record.error) == (S.CANCELLED, decisions.NEVER_STARTED)
    assert out.event is not None and out.event.kind == SchedulingKind.WORKER_CANCELLED
    assert not out.revive and out.schedule is None
    # a second restart finds it cancelled already: no second event
    again = decisions.reconcile(out.record, None, [], now=60.0)
    assert again.event is None and again.record == out.record


def test_a_failure_reason_leads_with_the_real_problem():
    problem = "required outputs are not ready: out/a.md (missing)"
    gave_up = decisions.reply_failure(Reply.FAILED, "a", SchedulingKind.STAGE_REJECTED, problem)
    assert gave_up is not None
    assert (
        gave_up.summary == f"{problem} — the supervisor gave up on a (after event stage_rejected)"
    )
    idle = decisions.idle_failure("a", decisions.MAX_IDLE_DECISIONS, problem)
    assert idle is not None and idle.summary.startswith(f"{problem} — the supervisor left a")


def test_an_idle_failure_says_when_no_agent_called_a_tool():
    idle = decisions.idle_failure("hx.collect", 3, no_tool_calls=True)
    assert idle is not None
    assert idle.summary == (
        "the supervisor left hx.collect with no worker running 3 times in a row; its agents made "
        "no tool call (the model answered in text): this model or its server may not support "
        "tool calling (`lightscientist check-model` tells)"
    )


def test_retries_are_bounded_whatever_the_agent_says():
    limit = decisions.MAX_ATTEMPTS
    assert decisions.attempts_failure("a", limit, "w3 failed: x") is None
    failure = decisions.attempts_failure("a", limit + 1, "w9 failed: x")
    assert failure is not None and failure.status == StageOutcome.FAILED
    assert failure.summary == (
        f"w9 failed: x — a failed {limit + 1} times, more than the {limit} tries a stage gets"
    )


@pytest.mark.parametrize(
    ("kind", "data", "problem"),
    [
        (SchedulingKind.STAGE_REJECTED, {"reason": "no"}, "no"),
        (SchedulingKind.WORKER_FAILED, {"error": "boom"}, "w4 failed: boom"),
        (SchedulingKind.WORKER_FAILED, {}, None),
        (SchedulingKind.WORKER_FINISHED, {"reason": "x"}, None),
    ],
)
def test_the_events_that_report_a_problem(kind, data, problem):
    event = SchedulingEvent(kind, "a#1", "w4", data, 0.0)
    assert decisions.problem_of(event) == problem
