"""Hand-over in layer 1: take, deliver (checked as a finish), give-back, marks up front."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lightscientist_jupyter.app import handoff
from lightscientist_jupyter.controller import ResearchController, actions, machine
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.vocab import DecisionKind, ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace


def auto(workspace, table, recorder, **kw) -> ResearchController:
    return ResearchController.create(
        workspace, "Does warmup help?", mode="auto", table=table, bus=recorder.bus, **kw
    )


def handed_loop(workspace, table, recorder) -> ResearchController:
    """A project at `experiment.loop`, handed to the researcher from the start."""
    return auto(
        workspace, table, recorder, start_stage="experiment.loop", handoffs=["experiment.loop"]
    )


def test_a_stage_marked_up_front_waits_for_the_researcher_when_entered(
    workspace, default_table, recorder, advance
):
    c = auto(
        workspace,
        default_table,
        recorder,
        start_stage="experiment.setup",
        handoffs=["experiment.loop"],
    )
    assert c.status == ProjectStatus.RUNNING
    advance(c)
    assert (c.stage, c.status, c.pending_kind) == (
        "experiment.loop",
        ProjectStatus.WAITING_USER,
        DecisionKind.HANDOFF,
    )
    pending = load_state(workspace.state_file).pending  # on disk: it survives a restart
    assert pending.kind == DecisionKind.HANDOFF
    assert pending.outputs == ("experiment/results.csv", "experiment/log.md")
    assert load_state(workspace.state_file).handoffs == ["experiment.loop"]


def test_deliver_is_checked_like_a_finish_and_names_every_problem(
    workspace, default_table, recorder
):
    c = handed_loop(workspace, default_table, recorder)
    (workspace.root / "experiment").mkdir(exist_ok=True)
    (workspace.root / "experiment" / "log.md").write_text("", encoding="utf-8")
    out = c.deliver("I ran it on my cluster.", next_stage="paper.write", source=ReplySource.CLI)
    assert not out.accepted
    assert "'paper.write' is not an allowed next stage of 'experiment.loop'" in out.message
    assert "experiment/results.csv (missing)" in out.message
    assert "experiment/log.md (empty)" in out.message
    assert (c.status, c.pending_kind, c.stage) == (
        ProjectStatus.WAITING_USER,
        DecisionKind.HANDOFF,
        "experiment.loop",
    )
    assert "stage.rejected" in recorder.types()


@pytest.mark.parametrize(
    ("source", "again"),
    [
        (ReplySource.CLI, "run `lightscientist deliver` again"),
        (ReplySource.MAGIC, "run `%lightscientist deliver` again"),
        (ReplySource.PANEL, "deliver again from the side panel"),
        (
            ReplySource.API,
            "`lightscientist deliver` at the command line, `%lightscientist deliver` in a",
        ),
    ],
)
def test_a_refused_deliver_tells_the_researcher_what_is_wrong_with_each_output(
    workspace, default_table, recorder, tmp_path, source, again
):
    c = handed_loop(workspace, default_table, recorder)
    secret = tmp_path / "secret.txt"
    secret.write_text("not the project's\n", encoding="utf-8")
    (workspace.root / "experiment").mkdir(exist_ok=True)
    (workspace.root / "experiment" / "results.csv").symlink_to(secret)  # a link out
    (workspace.root / "notes.md").write_text("kept notes\n", encoding="utf-8")
    (workspace.root / "experiment" / "log.md").symlink_to(workspace.root / "notes.md")
    out = c.deliver("by hand", outputs=["/etc/hostname", str(secret)], source=source)
    assert not out.accepted
    assert f"experiment/results.csv (outside the workspace: a symbolic link to {secret})" in (
        out.message
    )
    assert "experiment/log.md (a symbolic link, which the history does not keep" in out.message
    assert "/etc/hostname (outside the workspace)" in out.message
    assert f"{secret} (outside the workspace)" in out.message
    assert "(missing)" not in out.message
    assert "finish_stage" not in out.message and "cite only through" not in out.message
    assert again in out.message
    assert "write each as a non-empty file in the workspace" in out.message
    assert c.pending_kind == DecisionKind.HANDOFF  # still the researcher's


def test_deliver_moves_on_and_names_the_researcher(workspace, default_table, recorder, produce):
    c = handed_loop(workspace, default_table, recorder)
    produce(c)
    out = c.deliver("Ran 12 runs by hand.", source=ReplySource.MAGIC)
    assert out.accepted, out.message
    assert (c.stage, c.status) == ("experiment.analyze", ProjectStatus.RUNNING)
    finish = next(e for e in recorder.events if e.type == "stage.finish")
    assert finish.data["by"] == "researcher"
    process = workspace.process_md.read_text(encoding="utf-8")
    assert "done by the researcher" in process and "Ran 12 runs by hand." in process
    assert c.state.decisions[-1]["kind"] == "handoff"


def test_take_of_the_current_stage_and_give_back(workspace, default_table, recorder):
    c = auto(workspace, default_table, recorder, start_stage="experiment.loop")
    assert c.take(source=ReplySource.CLI).accepted
    assert c.pending_kind == DecisionKind.HANDOFF
    again = c.take()
    assert not again.accepted and "already yours" in again.message
    (workspace.root / "experiment").mkdir(exist_ok=True)
    (workspace.root / "experiment" / "draft.py").write_text("x = 1\n", encoding="utf-8")
    back = c.give_back(source=ReplySource.CLI)
    assert back.accepted and "experiment/draft.py" in back.message
    assert c.status == ProjectStatus.RUNNING and c.pending_kind is None
    assert "experiment/draft.py" in (c.task().feedback or "")


def test_a_step_from_another_process_naming_an_unknown_door_is_taken_as_from_the_api(
    workspace, default_table, recorder
):
    """A hand-over step another process queued (its inbox command's `source`) may name a
    door outside `ReplySource`: it is applied all the same, recorded as from the API."""
    c = auto(workspace, default_table, recorder, start_stage="experiment.loop")
    for step in ("take", "give-back"):
        handoff.apply_command(c, {"step": step, "source": "slack-bot"})
    assert c.status == ProjectStatus.RUNNING and c.pending_kind is None
    assert c.state.decisions[-1]["source"] == "api"
    assert recorder.events[-1].data["source"] == "api"


def test_take_a_later_stage_and_at_a_gate_the_next_one(workspace, default_table, recorder, advance):
    c = ResearchController.create(
        workspace,
        "g",
        mode="manual",
        table=default_table,
        start_stage="experiment.analyze",
        bus=recorder.bus,
    )
    assert c.take("paper.write").accepted
    advance(c)
    advance(c)  # experiment.gate waits for approval
    assert c.pending_kind == DecisionKind.GATE
    assert c.take().message == "'paper.plan' will be yours when the project reaches it"
    c.reply(True)
    assert (c.stage, c.pending_kind) == ("paper.plan", DecisionKind.HANDOFF)
    raw = json.loads(workspace.state_file.read_text(encoding="utf-8"))
    assert raw["handoffs"] == ["paper.write", "paper.plan"]


def test_bad_takes_name_what_to_fix(workspace, default_table, recorder):
    c = auto(workspace, default_table, recorder, start_stage="experiment.loop")
    with pytest.raises(ControllerError, match="'nope' is not a stage of research.toml"):
        c.take("nope")
    with pytest.raises(ControllerError, match="nothing is handed to you to deliver"):
        c.deliver("x")
    with pytest.raises(ControllerError, match="--handoff: 'nope' not a stage"):
        auto(Workspace.at(workspace.root / "other"), default_table, recorder, handoffs=["nope"])


def test_an_older_state_file_without_handoffs_still_loads(workspace, default_table, recorder):
    auto(workspace, default_table, recorder)
    raw = json.loads(workspace.state_file.read_text(encoding="utf-8"))
    del raw["handoffs"]
    workspace.state_file.write_text(json.dumps(raw), encoding="utf-8")
    assert load_state(workspace.state_file).handoffs == []
    raw["handoffs"] = "experiment.loop"
    workspace.state_file.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ControllerError, match="key 'handoffs' should be a list of stage ids"):
        load_state(workspace.state_file)


# ------------------------------------------------------------------------- the pure step


def test_step_enters_a_marked_stage_as_a_handoff_and_a_refused_deliver_changes_nothing():
    from tests.controller.test_machine import TABLE, T, fresh

    state = dataclasses.replace(fresh("a"), handoffs=["a"])
    state, effects = machine.step(state, TABLE, actions.Start(T))
    assert (state.status, state.pending.kind, state.pending.stage) == (
        ProjectStatus.WAITING_USER,
        DecisionKind.HANDOFF,
        "a",
    )
    assert [e.type for e in effects if isinstance(e, actions.Emit)][-1] == (
        "user.decision_requested"
    )
    refused, effects = machine.step(
        state,
        TABLE,
        actions.Deliver(actions.Finish("x", (), "b", ("out/a.md (missing)",), T), "cli"),
    )
    assert refused == state
    told = [e for e in effects if isinstance(e, actions.Respond)][-1]
    assert not told.ok
    assert told.message.startswith("'b' is not an allowed next stage of 'a'")
    assert "out/a.md (missing)" in told.message


def test_a_key_in_the_researchers_summary_is_redacted(workspace, default_table, recorder, produce):
    c = handed_loop(workspace, default_table, recorder)
    produce(c)
    key = "sk-cluster-9Gf3Kd8Lm2Np7Qr4"
    assert c.deliver(f"Ran 12 runs with token {key} on my cluster.").accepted
    process = workspace.process_md.read_text(encoding="utf-8")
    assert key not in process and "Ran 12 runs with token [REDACTED] on my cluster." in process
    assert key not in workspace.state_file.read_text(encoding="utf-8")
    assert all(key not in json.dumps(e.data) + e.message for e in recorder.events)
