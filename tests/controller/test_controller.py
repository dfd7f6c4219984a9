"""ResearchController: every transition rule of layer 1, on real files."""

from __future__ import annotations

import json
import threading
import time

import pytest

from lightscientist_jupyter.controller import DONE, ResearchController
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.values.task import StageTask
from lightscientist_jupyter.vocab import ReplySource


def manual(workspace, table, recorder=None, **kwargs) -> ResearchController:
    bus = recorder.bus if recorder is not None else None
    return ResearchController.create(
        workspace, "Does warmup help a small MLP?", mode="manual", table=table, bus=bus, **kwargs
    )


def on_disk(workspace) -> dict:
    return json.loads(workspace.state_file.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ creation and the task


def test_create_starts_at_the_first_stage(workspace, small_table, recorder):
    c = manual(workspace, small_table, recorder)
    assert (c.stage, c.status) == ("a", "running")
    assert c.state.visits == {"a": 1}
    assert c.state.history[0]["from"] is None and c.state.history[0]["to"] == "a"
    assert on_disk(workspace)["stage"] == "a"
    assert recorder.types() == ["stage.start"]
    assert recorder.events[0].layer == 1 and recorder.events[0].stage == "a"


def test_create_refuses_bad_input(workspace, small_table):
    with pytest.raises(ControllerError, match="goal is empty"):
        ResearchController.create(workspace, "   ", table=small_table)
    with pytest.raises(ControllerError, match="mode 'sometimes'"):
        ResearchController.create(workspace, "goal", mode="sometimes", table=small_table)
    with pytest.raises(ControllerError, match="'nowhere' is not a stage"):
        ResearchController.create(workspace, "goal", table=small_table, start_stage="nowhere")
    manual(workspace, small_table)
    with pytest.raises(ControllerError, match="already holds a project"):
        manual(workspace, small_table)


def test_a_key_pasted_into_the_goal_is_stored_redacted(workspace, small_table, recorder):
    key = "sk-proj-abcdefghijklmnopqrstuvwx"
    goal = f"Does warmup help? (my key {key} is for the provider)"
    c = ResearchController.create(workspace, goal, table=small_table, bus=recorder.bus)
    assert c.state.goal == "Does warmup help? (my key [REDACTED] is for the provider)"
    for path in (workspace.state_file, workspace.process_md):
        assert key not in path.read_text(encoding="utf-8")
    assert key not in c.task().goal


def test_stage_task_fields(workspace, small_table):
    c = manual(workspace, small_table)
    task = c.task()
    assert isinstance(task, StageTask)
    assert task.goal == "Does warmup help a small MLP?"
    assert task.stage == "a"
    assert task.skill_path == str(small_table["a"].skill)
    assert task.skill_path.endswith("skills/a.md")
    assert task.outputs == ("out/a.md",)
    assert task.default_next == "gate"
    assert task.allowed_next == ("gate", "a")
    assert task.workspace == str(workspace.root)
    assert task.process_md == str(workspace.process_md)
    assert (task.visit, task.task_id, task.feedback) == (1, "a#1", None)
    assert task.to_dict()["allowed_next"] == ("gate", "a")


def test_start_stage_can_be_chosen(workspace, default_table):
    c = ResearchController.create(
        workspace, "goal", table=default_table, start_stage="experiment.setup"
    )
    assert c.stage == "experiment.setup"
    assert c.task().outputs == ("experiment/plan.md", "experiment/run_experiment.py")


# ------------------------------------------------------------------ finishing a stage


def test_finish_moves_to_the_default_next(workspace, small_table, recorder, produce):
    c = manual(workspace, small_table, recorder)
    produce(c)
    outcome = c.finish_stage("Surveyed.", ["out/a.md"])
    assert outcome.accepted and outcome.stage == "gate" and outcome.status == "running"
    assert c.stage == "gate" and on_disk(workspace)["stage"] == "gate"
    assert recorder.types() == [
        "stage.start",
        "stage.finish",
        "stage.transition",
        "stage.start",
        "memory.filed",  # the finish, filed in the user's memory as a finding
    ]
    finish = recorder.of_type("stage.finish")[0]
    assert finish.data["next"] == "gate" and finish.data["outputs"] == ["out/a.md"]
    transition = recorder.of_type("stage.transition")[0]
    assert transition.data == {"from": "a", "to": "gate", "by": "finish"}


def test_finish_follows_an_allowed_suggestion(workspace, small_table, advance):
    c = manual(workspace, small_table)
    advance(c, "a")
    assert c.stage == "a" and c.state.visits["a"] == 2 and c.task().task_id == "a#2"


def test_refused_suggestion_leaves_the_stage_where_it_is(workspace, small_table, recorder, produce):
    c = manual(workspace, small_table, recorder)
    produce(c)
    before = on_disk(workspace)
    outcome = c.finish_stage("Done.", (), "b")
    assert not outcome.accepted
    assert outcome.stage == "a" and c.stage == "a" and c.status == "running"
    assert "'b' is not an allowed next stage of 'a'" in outcome.message
    assert "gate, a" in outcome.message and "default: gate" in outcome.message
    rejected = recorder.of_type("stage.rejected")
    assert len(rejected) == 1 and rejected[0].data["reason"] == outcome.message
    assert rejected[0].stage == "a"
    assert "stage.finish" not in recorder.types()
    assert on_disk(workspace)["stage"] == before["stage"]
    assert on_disk(workspace)["visits"] == {"a": 1}


def test_missing_and_empty_outputs_are_refused_by_path(workspace, small_table, recorder, advance):
    c = manual(workspace, small_table, recorder, start_stage="b")
    (workspace.root / "out").mkdir(parents=True)
    (workspace.root / "out" / "b.md").write_text("", encoding="utf-8")
    outcome = c.finish_stage("Wrote the paper.", ())
    assert not outcome.accepted and c.stage == "b"
    assert "out/b.md (empty)" in outcome.message
    assert "out/b.csv (missing)" in outcome.message
    assert "write them (non-empty)" in outcome.message
    assert recorder.of_type("stage.rejected")[0].data["reason"] == outcome.message
    advance(c)
    assert c.status == "done" and c.stage == DONE


def test_refusal_lists_every_reason_at_once(workspace, small_table):
    c = manual(workspace, small_table)
    outcome = c.finish_stage("Nothing written.", (), "nowhere")
    assert not outcome.accepted
    assert "'nowhere' is not an allowed next stage" in outcome.message
    assert "out/a.md (missing)" in outcome.message


def test_finish_when_not_running_is_refused_without_an_event(
    workspace, small_table, recorder, advance
):
    c = manual(workspace, small_table, recorder)
    advance(c)
    advance(c)  # the gate: now waiting for the user
    assert c.status == "waiting_user"
    count = len(recorder.events)
    outcome = c.finish_stage("again", ())
    assert not outcome.accepted and "waiting_user" in outcome.message
    assert len(recorder.events) == count


def test_max_visits_fails_a_runaway_loop(workspace, small_table, recorder, advance):
    c = manual(workspace, small_table, recorder)
    advance(c, "a")
    advance(c, "a")
    assert c.state.visits["a"] == 3 and c.status == "running"
    produce_outcome = advance(c, "a")
    assert produce_outcome.status == "failed"
    assert c.status == "failed"
    reason = c.state.reason
    assert "stage 'a' was entered 4 times, more than its max_visits = 3" in reason
    assert str(small_table.path) in reason
    assert on_disk(workspace)["status"] == "failed"
    assert recorder.types()[-2:] == ["stage.rejected", "memory.filed"]
    assert recorder.events[-2].data["reason"] == reason


def test_the_last_stage_ends_the_project(workspace, small_table, recorder, advance):
    c = manual(workspace, small_table, recorder, start_stage="b")
    outcome = advance(c)
    assert outcome.stage == DONE and c.status == "done"
    assert [e.type for e in recorder.events[-2:]] == ["stage.transition", "memory.filed"]
    assert recorder.events[-2].data["to"] == DONE
    with pytest.raises(ControllerError, match="done"):
        c.task()


# ------------------------------------------------------------------ gates


def walk_to(c: ResearchController, stop: str, advance, path=()) -> None:
    """Finish stages (following `path` suggestions first, then defaults) until at `stop`."""
    suggestions = list(path)
    while c.stage != stop:
        advance(c, suggestions.pop(0) if suggestions else None)


def test_auto_gate_passes_to_next(workspace, default_table, recorder, advance):
    c = ResearchController.create(
        workspace, "goal", mode="auto", table=default_table, bus=recorder.bus
    )
    walk_to(c, "idea.gate", advance)
    outcome = advance(c)
    assert outcome.accepted and c.stage == "experiment.setup" and c.status == "running"
    assert c.state.pending is None and c.state.decisions == []
    assert "user.decision_requested" not in recorder.types()
    assert c.state.history[-1] == {
        **c.state.history[-1],
        "from": "idea.gate",
        "to": "experiment.setup",
        "by": "auto",
    }


def test_manual_gate_waits_with_a_pending_decision(workspace, default_table, recorder, advance):
    c = ResearchController.create(
        workspace, "goal", mode="manual", table=default_table, bus=recorder.bus
    )
    walk_to(c, "idea.gate", advance)
    outcome = advance(c, None, "The brief: idea 2 wins.\nRisks listed.")
    assert outcome.accepted and outcome.status == "waiting_user" and outcome.stage == "idea.gate"
    assert "approve the move to 'experiment.setup'" in outcome.message
    pending = c.state.pending
    assert pending is not None and pending.kind == "gate" and pending.stage == "idea.gate"
    assert pending.outputs == ("idea/brief.md",)
    assert pending.proposed_next == "experiment.setup"
    assert pending.default_reject == "idea.evaluate"
    assert "idea.gate" in pending.question and "experiment.setup" in pending.question
    assert pending.summary.startswith("The brief")
    assert on_disk(workspace)["status"] == "waiting_user"
    assert on_disk(workspace)["pending"]["outputs"] == ["idea/brief.md"]
    requested = recorder.of_type("user.decision_requested")
    assert len(requested) == 1 and requested[0].data["id"] == pending.id


def test_approve_moves_to_the_gate_next(workspace, default_table, recorder, advance):
    c = ResearchController.create(workspace, "goal", table=default_table, bus=recorder.bus)
    walk_to(c, "idea.gate", advance)
    advance(c)
    decision_id = c.state.pending.id
    outcome = c.reply(True, "Looks right.", decision_id=decision_id, source=ReplySource.MAGIC)
    assert outcome.applied and outcome.decision_id == decision_id
    assert c.stage == "experiment.setup" and c.status == "running" and c.state.pending is None
    decision = c.state.decisions[-1]
    assert decision["approve"] is True and decision["to"] == "experiment.setup"
    assert decision["comment"] == "Looks right." and decision["source"] == "magic"
    assert c.state.history[-1]["by"] == "approve"
    event = recorder.of_type("user.decision")[-1]
    assert event.data["approve"] is True and event.data["to"] == "experiment.setup"
    assert c.task().feedback is None


def test_reject_with_a_target(workspace, default_table, recorder, advance):
    c = ResearchController.create(workspace, "goal", table=default_table, bus=recorder.bus)
    walk_to(c, "idea.gate", advance)
    advance(c)
    outcome = c.reply(False, "Need more ideas.", "idea.generate")
    assert outcome.applied
    assert c.stage == "idea.generate" and c.status == "running"
    assert c.state.visits["idea.generate"] == 2
    assert c.state.history[-1] == {
        **c.state.history[-1],
        "from": "idea.gate",
        "to": "idea.generate",
        "by": "reject",
    }
    assert "rejected, back to 'idea.generate'" in outcome.message


def test_reject_without_target_goes_back_to_the_stage_before_the_gate(
    workspace, default_table, advance
):
    c = ResearchController.create(workspace, "goal", table=default_table)
    walk_to(c, "idea.gate", advance, path=["idea.generate", "idea.evaluate", "idea.probe_batch"])
    assert [h["to"] for h in c.state.history][-3:] == [
        "idea.probe_batch",
        "idea.probe_collect",
        "idea.gate",
    ]
    advance(c)
    assert c.state.pending.default_reject == "idea.probe_collect"
    c.reply(False, "The probes were too small.")
    assert c.stage == "idea.probe_collect"


def test_reject_without_target_when_the_gate_was_the_start(workspace, small_table, advance):
    """No history before the gate: the table's predecessor of the gate is used."""
    c = manual(workspace, small_table, start_stage="gate")
    advance(c)
    c.reply(False)
    assert c.stage == "a"


def test_reject_to_an_unknown_stage_is_refused_and_changes_nothing(
    workspace, default_table, advance
):
    c = ResearchController.create(workspace, "goal", table=default_table)
    walk_to(c, "idea.gate", advance)
    advance(c)
    before = on_disk(workspace)
    for bad in ("nosuchstage", DONE):
        with pytest.raises(ControllerError, match=f"'{bad}' is not a stage of research.toml"):
            c.reply(False, "", bad)
    assert c.status == "waiting_user" and c.state.pending is not None
    assert on_disk(workspace)["history"] == before["history"]
    assert on_disk(workspace)["decisions"] == []


def test_feedback_from_a_reject_reaches_the_next_task(workspace, small_table, advance):
    c = manual(workspace, small_table)
    advance(c)
    advance(c)
    c.reply(False, "Use three seeds, not one.", "a")
    task = c.task()
    assert task.stage == "a" and task.visit == 2
    assert "Use three seeds, not one." in task.feedback
    assert "'gate'" in task.feedback
    advance(c)  # the next worker delivered: the feedback has been used
    assert c.task().feedback is None


def test_reject_without_comment_still_tells_the_next_worker(workspace, small_table, advance):
    c = manual(workspace, small_table)
    advance(c)
    advance(c)
    c.reply(False)
    assert "without a comment" in c.task().feedback


def test_double_reply_applies_once(workspace, small_table, recorder, advance):
    c = manual(workspace, small_table, recorder)
    advance(c)
    advance(c)
    decision_id = c.state.pending.id
    first = c.reply(True, "ok", decision_id=decision_id, source=ReplySource.WIDGET)
    snapshot = on_disk(workspace)
    events = len(recorder.events)
    second = c.reply(False, "no!", "a", decision_id=decision_id, source=ReplySource.CLI)
    assert first.applied and not second.applied
    assert "already answered" in second.message and "approved via widget" in second.message
    assert "nothing changed" in second.message
    assert c.stage == "b" and len(c.state.decisions) == 1
    assert on_disk(workspace)["history"] == snapshot["history"]
    assert len(recorder.events) == events


def test_reply_for_another_decision_changes_nothing(workspace, small_table, advance):
    c = manual(workspace, small_table)
    advance(c)
    advance(c)
    outcome = c.reply(True, decision_id="d99")
    assert not outcome.applied and "pending one is d1" in outcome.message
    assert c.status == "waiting_user"


def test_reply_with_nothing_pending(workspace, small_table):
    c = manual(workspace, small_table)
    with pytest.raises(ControllerError, match="nothing is waiting for a reply.*running.*'a'"):
        c.reply(True)


def test_a_rejected_gate_can_be_approved_later(workspace, small_table, advance):
    """Each visit of a gate is its own decision: one transition per decision."""
    c = manual(workspace, small_table)
    advance(c)
    advance(c)
    first = c.state.pending.id
    c.reply(False, "again", decision_id=first)
    advance(c)
    advance(c)
    second = c.state.pending.id
    assert second != first
    c.reply(True, decision_id=second)
    assert c.stage == "b"
    assert [d["approve"] for d in c.state.decisions] == [False, True]


# ------------------------------------------------------------------ project-level questions


def test_request_user_decision_and_reply(workspace, small_table, recorder):
    c = manual(workspace, small_table, recorder)
    answers = []
    c.on_answer(answers.append)
    decision_id = c.request_user_decision("Use the GPU cluster?", ["yes", "no"])
    assert c.status == "waiting_user"
    pending = c.state.pending
    assert pending.kind == "question" and pending.options == ("yes", "no")
    assert pending.stage == "a"
    assert recorder.of_type("user.decision_requested")[0].data["question"] == "Use the GPU cluster?"
    outcome = c.reply(True, "only one node", decision_id=decision_id)
    assert outcome.applied and outcome.answer["approve"] is True
    assert c.status == "running" and c.stage == "a" and c.state.pending is None
    assert len(answers) == 1
    assert answers[0]["id"] == decision_id and answers[0]["comment"] == "only one node"
    assert answers[0]["question"] == "Use the GPU cluster?"
    again = c.reply(False, decision_id=decision_id)
    assert not again.applied and "already answered" in again.message
    assert len(answers) == 1


def test_the_settled_status_of_an_answered_question_comes_after_its_answer(workspace, small_table):
    """`status` flips to running before the answer reaches the listeners (layer 2 queues its
    `user_answered` event there); `settled_status`, read on another thread meanwhile, waits
    for them, so the supervisor never sees a running stage with the answer still missing."""
    c = manual(workspace, small_table)
    heard = threading.Event()
    c.on_answer(lambda answer: (time.sleep(0.3), heard.set()))
    decision_id = c.request_user_decision("Use the GPU cluster?", ["yes", "no"])
    seen: list[tuple[str, str, bool]] = []

    def reader() -> None:
        while c.status != "running":  # the reply has started
            time.sleep(0.001)
        seen.append((c.status, c.settled_status(), heard.is_set()))

    thread = threading.Thread(target=reader)
    thread.start()
    assert c.reply(True, decision_id=decision_id).applied
    thread.join(5)
    assert seen == [("running", "running", True)]


def test_request_user_decision_needs_a_running_project(workspace, small_table):
    c = manual(workspace, small_table)
    c.request_user_decision("First?")
    with pytest.raises(ControllerError, match="waiting_user"):
        c.request_user_decision("Second?")


# ------------------------------------------------------------------ state.json


def test_reload_gives_identical_state_and_continues(workspace, small_table, advance):
    c = manual(workspace, small_table)
    advance(c, "a")
    advance(c)
    advance(c)
    assert c.status == "waiting_user"
    reopened = ResearchController.open(workspace)
    assert reopened.state == c.state
    assert reopened.table.path == small_table.path and reopened.table.ids() == small_table.ids()
    assert reopened.task() == c.task()
    reopened.reply(True, decision_id=reopened.state.pending.id)
    assert reopened.stage == "b"
    advance(reopened)
    assert reopened.status == "done"
    again = ResearchController.open(workspace)
    assert again.state == reopened.state and again.status == "done"


def test_state_is_written_atomically_after_every_change(workspace, small_table, advance):
    c = manual(workspace, small_table)
    seen = [on_disk(workspace)["stage"]]
    advance(c)
    seen.append(on_disk(workspace)["stage"])
    advance(c)
    seen.append(on_disk(workspace)["status"])
    assert seen == ["a", "gate", "waiting_user"]
    leftovers = [p.name for p in workspace.state_dir.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_open_without_a_project(workspace):
    with pytest.raises(ControllerError, match="no LightScientist project"):
        ResearchController.open(workspace)


def test_open_a_damaged_state_file(workspace, small_table):
    manual(workspace, small_table)
    workspace.state_file.write_text("{not json", encoding="utf-8")
    with pytest.raises(ControllerError, match="state.json is not valid JSON"):
        ResearchController.open(workspace)


def test_fail_cancel_and_reopen(workspace, small_table):
    c = manual(workspace, small_table)
    c.cancel()
    assert c.status == "cancelled" and on_disk(workspace)["reason"] == "cancelled by the user"
    c.fail("later")  # a final status is kept
    assert c.status == "cancelled"
    c.reopen()
    assert c.status == "running" and c.state.reason is None


# ------------------------------------------------------------------ usage totals on disk


def _call(n: int) -> dict:
    return {"worker": "w1", "stage": "a", "task_id": "a#1", "input_tokens": 10 * n,
            "output_tokens": 1, "model_calls": 1, "wall_s": 0.1, "cost_usd": 0.0,
            "run": "r1", "run_s": float(n)}  # fmt: skip


def test_usage_totals_are_written_soon_and_a_killed_run_is_caught_up_from_the_ledger(
    workspace, small_table
):
    """A model call's totals reach state.json within half a second (not at every call), at
    once with any other change, and at `flush`; a run killed before it wrote them is caught
    up from the ledger (`usage.jsonl`, one line per call, written first)."""
    c = manual(workspace, small_table)
    ledger = workspace.state_dir / "usage.jsonl"
    calls = [_call(n) for n in range(1, 31)]
    for line in calls[:20]:
        with ledger.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
        c.charge(line)
    assert c.state.usage["total"]["model_calls"] == 20  # in memory at once
    written = on_disk(workspace)["usage"].get("total", {}).get("model_calls", 0)
    assert written < 20  # twenty calls in a row: not twenty writes
    c.flush()
    assert on_disk(workspace)["usage"]["total"]["model_calls"] == 20

    # ten more calls reach the ledger, then the process dies before their totals are written
    for line in calls[20:]:
        with ledger.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
    again = ResearchController.open(workspace, table=small_table)
    total = again.state.usage["total"]
    assert (total["model_calls"], total["input_tokens"]) == (30, 10 * sum(range(1, 31)))
    assert again.state.usage["visits"]["a#1"]["model_calls"] == 30
    assert again.state.usage["runs"]["r1"] == 30.0
    assert ResearchController.open(workspace, table=small_table).state.usage == again.state.usage
