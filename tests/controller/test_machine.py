"""machine.step: every transition of layer 1 as a case, state and action in, state and effects out.

No files and no clock: the table is built from values, the time is a number in the action, and
the outputs missing on disk are part of the finish. Each case names what a user would see
afterwards (status, stage, the events in order, the PROCESS.md entry written) and the facts of
the new state that matter for it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from lightscientist_jupyter.controller import actions, machine
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.controller.table import DONE, Stage, StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.vocab import DecisionKind, Mode, ProjectStatus, ReplySource

T = 1_700_000_000.0
"""The time every action carries."""


def _stage(id: str, next: str, allowed: tuple[str, ...], outputs: tuple[str, ...], **kw) -> Stage:
    return Stage(
        id=id,
        skill=Path(f"/flow/skills/{id}.md"),
        outputs=outputs,
        next=next,
        allowed=allowed,
        **kw,
    )


TABLE = StageTable(
    path=Path("/flow/table.toml"),
    start="a",
    stages={
        s.id: s
        for s in (
            _stage("a", "gate", ("gate", "a", "c"), ("out/a.md",), max_visits=3),
            _stage("c", "gate", ("gate",), ("out/c.md",)),
            _stage("gate", "b", ("b",), ("out/brief.md",), approval=True),
            _stage("b", DONE, (DONE, "a"), ("out/b.md",)),
        )
    },
)
"""a → gate (approval) → b → done; `a` may loop (at most 3 visits) or go by `c`."""


# ------------------------------------------------------------------------- states


def fresh(stage: str = "a", mode: Mode = Mode.MANUAL) -> ProjectState:
    """A new project's state before its first stage is entered."""
    return ProjectState(
        goal="g", mode=mode, stage=stage, stages_file=str(TABLE.path), created_at=T, updated_at=T
    )


def at(
    stage: str,
    visits: dict[str, int] | None = None,
    *,
    came_from: str | None = "a",
    mode: Mode = Mode.MANUAL,
    **fields: Any,
) -> ProjectState:
    """Running at `stage`, entered from `came_from` (None: it was the first stage)."""
    history = [{"from": None, "to": came_from or stage, "by": "start", "at": T}]
    if came_from:
        history.append({"from": came_from, "to": stage, "by": "finish", "at": T})
    return dataclasses.replace(
        fresh(stage, mode), visits=visits or {stage: 1}, history=history, **fields
    )


def gate_waiting(came_from: str | None = "a") -> ProjectState:
    """Waiting at the gate for decision d1, as a manual finish of the gate leaves it."""
    pending = PendingDecision(
        id="d1",
        kind=DecisionKind.GATE,
        stage="gate",
        question="Approve 'gate' and move on to 'b'?",
        summary="Brief.",
        outputs=("out/brief.md",),
        proposed_next="b",
        default_reject=came_from or "a",
        requested_at=T,
    )
    visits = {"a": 1, "gate": 1} if came_from else {"gate": 1}
    return at(
        "gate",
        visits,
        came_from=came_from,
        status=ProjectStatus.WAITING_USER,
        pending=pending,
        decision_counter=1,
    )


def question_waiting() -> ProjectState:
    pending = PendingDecision(
        id="d1",
        kind=DecisionKind.QUESTION,
        stage="a",
        question="Use the GPU?",
        options=("yes", "no"),
        requested_at=T,
    )
    return at(
        "a", came_from=None, status=ProjectStatus.WAITING_USER, pending=pending, decision_counter=1
    )


ANSWERED = {
    "id": "d1",
    "kind": "gate",
    "stage": "gate",
    "approve": True,
    "comment": "",
    "to": "b",
    "at": T,
    "source": "widget",
}


def finish(
    next_stage: str | None = None, missing: tuple[str, ...] = (), summary: str = "Did it."
) -> actions.Finish:
    return actions.Finish(summary, (), next_stage, missing, T)


def reply(
    approve: bool,
    to: str | None = None,
    comment: str = "",
    decision_id: str | None = None,
    source: ReplySource = ReplySource.API,
) -> actions.Reply:
    return actions.Reply(approve, comment, to, decision_id, source, T)


# ------------------------------------------------------------------------- the cases


def label(effect: actions.Effect) -> str:
    """One word or two per effect, to compare whole sequences at a glance."""
    match effect:
        case actions.SaveState():
            return "save"
        case actions.Emit():
            return f"emit {effect.type}"
        case actions.AppendProcess():
            return f"process {effect.entry.key}"
        case actions.FileMemory():
            return f"memory {effect.key}"
        case actions.NotifyAnswer():
            return "notify"
        case actions.Respond():
            return "ok" if effect.ok else "refused"
    raise AssertionError(effect)


@dataclasses.dataclass
class Case:
    name: str
    state: ProjectState
    action: actions.Action
    status: ProjectStatus
    stage: str
    effects: list[str]
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Top-level keys of the new state's `to_dict()` and their exact values."""
    move: tuple[str | None, str, str] | None = None
    """The last history step `(from, to, by)`, when the step adds one."""
    message: str = ""
    """Part of what the caller is told."""
    entry: str = ""
    """Part of the PROCESS.md entry's decision line."""


MOVED = ["save", "emit stage.transition", "emit stage.start"]
FEEDBACK = "The reviewer rejected 'gate': use three seeds."

CASES = [
    Case(
        "start enters the first stage",
        fresh(),
        actions.Start(T),
        ProjectStatus.RUNNING,
        "a",
        ["save", "emit stage.start"],
        {"visits": {"a": 1}},
        (None, "a", "start"),
    ),
    Case(
        "finish moves to the default next",
        at("a", came_from=None),
        finish(),
        ProjectStatus.RUNNING,
        "gate",
        ["emit stage.finish", "memory finding:a#1", "process a#1", *MOVED, "ok"],
        {"visits": {"a": 1, "gate": 1}, "last_summary": {"a": "Did it."}},
        ("a", "gate", "finish"),
        "'a' finished; the project moved to 'gate'",
    ),
    Case(
        "finish follows an allowed suggestion and uses up the feedback",
        at("a", came_from=None, feedback=FEEDBACK),
        finish("c"),
        ProjectStatus.RUNNING,
        "c",
        ["emit stage.finish", "memory finding:a#1", "process a#1", *MOVED, "ok"],
        {"visits": {"a": 1, "c": 1}, "feedback": None},
        ("a", "c", "finish"),
    ),
    Case(
        "a loop counts a second visit",
        at("a", came_from=None),
        finish("a"),
        ProjectStatus.RUNNING,
        "a",
        ["emit stage.finish", "memory finding:a#1", "process a#1", *MOVED, "ok"],
        {"visits": {"a": 2}},
        ("a", "a", "finish"),
    ),
    Case(
        "finishing a gate in manual mode waits for the user",
        at("gate", {"a": 1, "gate": 1}),
        finish(),
        ProjectStatus.WAITING_USER,
        "gate",
        ["emit stage.finish", "save", "emit user.decision_requested", "ok"],
        {"decision_counter": 1},
        ("a", "gate", "finish"),
        "waiting for the user to approve the move to 'b'",
    ),
    Case(
        "finishing a gate in auto mode passes it",
        at("gate", {"a": 1, "gate": 1}, mode=Mode.AUTO),
        finish(),
        ProjectStatus.RUNNING,
        "b",
        ["emit stage.finish", "memory finding:gate#1", "process gate#1", *MOVED, "ok"],
        {"pending": None},
        ("gate", "b", "auto"),
        entry="approved automatically (auto mode)",
    ),
    Case(
        "finishing the last stage ends the project",
        at("b", {"b": 1}, came_from=None),
        finish(),
        ProjectStatus.DONE,
        DONE,
        [
            "emit stage.finish",
            "memory finding:b#1",
            "process b#1",
            "save",
            "emit stage.transition",
            "ok",
        ],
        {"visits": {"b": 1}},
        ("b", DONE, "finish"),
    ),
    Case(
        "a suggestion not in allowed is refused",
        at("a", came_from=None, feedback=FEEDBACK),
        finish("b"),
        ProjectStatus.RUNNING,
        "a",
        ["emit stage.rejected", "refused"],
        {"visits": {"a": 1}, "last_summary": {}, "feedback": FEEDBACK},
        message="'b' is not an allowed next stage of 'a'; choose one of gate, a, c",
    ),
    Case(
        "missing outputs are refused by path",
        at("a", came_from=None),
        finish(missing=("out/a.md (missing)",)),
        ProjectStatus.RUNNING,
        "a",
        ["emit stage.rejected", "refused"],
        {"visits": {"a": 1}},
        message="required outputs are not ready: out/a.md (missing)",
    ),
    Case(
        "a finish while waiting is refused without an event",
        gate_waiting(),
        finish(),
        ProjectStatus.WAITING_USER,
        "gate",
        ["refused"],
        message="the project is waiting_user, not running",
    ),
    Case(
        "entering past max_visits fails the project",
        at("a", {"a": 3}, came_from=None),
        finish("a"),
        ProjectStatus.FAILED,
        "a",
        [
            "emit stage.finish",
            "memory finding:a#3",
            "process a#3",
            "save",
            "emit stage.transition",
            "emit stage.rejected",
            "ok",
        ],
        {"visits": {"a": 4}},
        ("a", "a", "finish"),
    ),
    Case(
        "approving a gate moves to its proposed next",
        gate_waiting(),
        reply(True),
        ProjectStatus.RUNNING,
        "b",
        ["memory finding:gate#1", "process gate#1", "emit user.decision", *MOVED, "ok"],
        {"pending": None, "feedback": None, "visits": {"a": 1, "gate": 1, "b": 1}},
        ("gate", "b", "approve"),
        "gate approved; the project is now at 'b' (running)",
        "approved by the user via api",
    ),
    Case(
        "rejecting to a named stage goes there with the comment",
        gate_waiting(),
        reply(False, "c", "More data"),
        ProjectStatus.RUNNING,
        "c",
        ["memory lesson:gate#1", "process gate#1", "emit user.decision", *MOVED, "ok"],
        {"pending": None, "feedback": "The reviewer rejected 'gate': More data."},
        ("gate", "c", "reject"),
        "gate rejected, back to 'c'",
        "rejected, back to 'c' by the user via api — “More data”",
    ),
    Case(
        "rejecting without a target goes back where the gate was entered from",
        gate_waiting(came_from="c"),
        reply(False),
        ProjectStatus.RUNNING,
        "c",
        ["memory lesson:gate#1", "process gate#1", "emit user.decision", *MOVED, "ok"],
        {"feedback": "The reviewer rejected 'gate' without a comment."},
        ("gate", "c", "reject"),
    ),
    Case(
        "rejecting a gate that was the first stage goes to its first predecessor",
        gate_waiting(came_from=None),
        reply(False),
        ProjectStatus.RUNNING,
        "a",
        ["memory lesson:gate#1", "process gate#1", "emit user.decision", *MOVED, "ok"],
        {"visits": {"gate": 1, "a": 1}},
        ("gate", "a", "reject"),
    ),
    Case(
        "a reply to an answered decision changes nothing",
        dataclasses.replace(at("b", {"b": 1}), decisions=[ANSWERED]),
        reply(False, "a", decision_id="d1"),
        ProjectStatus.RUNNING,
        "b",
        ["refused"],
        {"decisions": [ANSWERED]},
        message="decision d1 was already answered (approved via widget); nothing changed",
    ),
    Case(
        "a reply to another decision changes nothing",
        gate_waiting(),
        reply(True, decision_id="d7"),
        ProjectStatus.WAITING_USER,
        "gate",
        ["refused"],
        message="this reply is for decision d7, but the pending one is d1",
    ),
    Case(
        "a project-level question waits for the user",
        at("a", came_from=None),
        actions.Ask(" Use the GPU? ", ("yes", "no"), T),
        ProjectStatus.WAITING_USER,
        "a",
        ["save", "emit user.decision_requested", "ok"],
        {"decision_counter": 1},
    ),
    Case(
        "the answer to a question resumes the stage and tells the supervisor",
        question_waiting(),
        reply(True, comment="one node"),
        ProjectStatus.RUNNING,
        "a",
        ["process question:d1", "save", "emit user.decision", "notify", "ok"],
        {"pending": None, "visits": {"a": 1}},
        message="answered d1: yes",
        entry="answered yes via api — “one node”",
    ),
    Case(
        "a cancel ends the project and drops the pending decision",
        gate_waiting(),
        actions.End(ProjectStatus.CANCELLED, "by the user"),
        ProjectStatus.CANCELLED,
        "gate",
        ["save"],
        {"pending": None, "reason": "by the user"},
    ),
    Case(
        "a disk fault stops the project and keeps its pending decision",
        gate_waiting(),
        actions.End(ProjectStatus.STOPPED, "disk full while writing x"),
        ProjectStatus.STOPPED,
        "gate",
        ["save"],
        {"reason": "disk full while writing x"},
    ),
    Case(
        "reopen sets a stopped project running where it stopped",
        at("a", status=ProjectStatus.STOPPED, reason="disk full while writing x"),
        actions.Reopen(),
        ProjectStatus.RUNNING,
        "a",
        ["save"],
        {"reason": None, "visits": {"a": 1}},
    ),
    Case(
        "reopen sets a project stopped at a gate waiting for its reply again",
        dataclasses.replace(gate_waiting(), status=ProjectStatus.STOPPED, reason="disk full"),
        actions.Reopen(),
        ProjectStatus.WAITING_USER,
        "gate",
        ["save"],
        {"reason": None},
    ),
    Case(
        "a final status is kept",
        at("b", status=ProjectStatus.DONE),
        actions.End(ProjectStatus.FAILED, "late"),
        ProjectStatus.DONE,
        "b",
        [],
        {"reason": None},
    ),
    Case(
        "reopen runs a failed project again, saying what failed before",
        at("a", status=ProjectStatus.FAILED, reason="boom"),
        actions.Reopen(),
        ProjectStatus.RUNNING,
        "a",
        ["save", "emit stage.retried", "ok"],
        {"reason": None},
    ),
    Case(
        "settings given to resume are kept; None puts one back to its default",
        dataclasses.replace(at("a"), settings={"model": "offline", "checkpoints": "sqlite:///x"}),
        actions.KeepSettings({"checkpoints": None, "ray": "http://head:8265"}),
        ProjectStatus.RUNNING,
        "a",
        ["save"],
        {"settings": {"model": "offline", "ray": "http://head:8265"}},
    ),
    Case(
        "reopen leaves a finished project alone",
        dataclasses.replace(at(DONE, {}, came_from="b"), status=ProjectStatus.DONE),
        actions.Reopen(),
        ProjectStatus.DONE,
        DONE,
        [],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_step(case: Case):
    before = case.state.to_dict()
    state, effects = machine.step(case.state, TABLE, case.action)

    assert case.state.to_dict() == before, "step changed the state it was given"
    assert (state.status, state.stage) == (case.status, case.stage)
    shown = [e for e in effects if not isinstance(e, actions.TakeSnapshot)]  # test_snapshots
    assert [label(e) for e in shown] == case.effects
    assert {k: state.to_dict()[k] for k in case.fields} == case.fields
    if case.move is not None:
        last = state.history[-1]
        assert (last["from"], last["to"], last["by"], last["at"]) == (*case.move, T)
    else:
        assert state.history == case.state.history
    responds = [e for e in effects if isinstance(e, actions.Respond)]
    assert len(responds) <= 1
    if case.message:
        assert case.message in responds[0].message
    if case.entry:
        (append,) = [e for e in effects if isinstance(e, actions.AppendProcess)]
        assert append.entry.decision and case.entry in append.entry.decision
        assert append.entry.at == T


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_reloaded_state_steps_the_same(case: Case):
    """What state.json holds is enough: a project read back continues exactly the same way."""
    reloaded = ProjectState.from_dict(case.state.to_dict())
    assert machine.step(reloaded, TABLE, case.action) == machine.step(
        case.state, TABLE, case.action
    )


# ------------------------------------------------------------------------- effect contents


def events(effects) -> list[actions.Emit]:
    return [e for e in effects if isinstance(e, actions.Emit)]


def test_the_finish_event_and_the_entry_carry_what_was_finished():
    state, effects = machine.step(
        at("a", came_from=None),
        TABLE,
        actions.Finish("Surveyed.", ("notes.md", "", "out/a.md"), None, (), T),
    )
    finish_event, transition, start = events(effects)
    assert finish_event.data == {
        "summary": "Surveyed.",
        "outputs": ["out/a.md", "notes.md"],
        "next": "gate",
        "visit": 1,
        "gate": False,
        "by": "supervisor",
    }
    assert (finish_event.stage, finish_event.task_id) == ("a", "a#1")
    assert transition.data == {"from": "a", "to": "gate", "by": "finish"}
    assert (transition.stage, transition.task_id) == ("gate", "gate#1")
    assert start.message == "gate (visit 1)"
    assert start.data == {
        "visit": 1,
        "skill": "/flow/skills/gate.md",
        "outputs": ["out/brief.md"],
        "gate": True,
    }
    (append,) = [e for e in effects if isinstance(e, actions.AppendProcess)]
    assert append.entry.outputs == ("out/a.md", "notes.md") and append.entry.decision is None


def test_a_manual_gate_asks_with_everything_the_reviewer_needs():
    state, effects = machine.step(at("gate", {"a": 1, "gate": 1}), TABLE, finish(summary="B."))
    pending = state.pending
    assert pending == PendingDecision(
        id="d1",
        kind=DecisionKind.GATE,
        stage="gate",
        question="Approve 'gate' and move on to 'b'?",
        summary="B.",
        outputs=("out/brief.md",),
        proposed_next="b",
        default_reject="a",
        requested_at=T,
    )
    requested = events(effects)[-1]
    assert requested.message == pending.question and requested.data["kind"] == "gate"
    assert requested.data == pending.to_dict()


def test_the_refusal_event_carries_the_reason_the_caller_gets():
    _, effects = machine.step(
        at("a", came_from=None), TABLE, finish("nowhere", ("out/a.md (empty)",))
    )
    (rejected,) = events(effects)
    respond = effects[-1]
    assert isinstance(respond, actions.Respond) and not respond.ok
    assert rejected.data == {"reason": respond.message}
    assert rejected.message == f"finish of a refused: {respond.message}"
    assert (
        "'nowhere' is not an allowed" in respond.message and "out/a.md (empty)" in respond.message
    )


def test_max_visits_names_the_stage_the_limit_and_the_table():
    state, effects = machine.step(at("a", {"a": 3}, came_from=None), TABLE, finish("a"))
    assert state.reason == events(effects)[-1].data["reason"]
    assert "stage 'a' was entered 4 times, more than its max_visits = 3" in state.reason
    assert "/flow/table.toml" in state.reason


def test_a_gate_decision_is_recorded_once_with_its_source():
    state, effects = machine.step(gate_waiting(), TABLE, reply(False, "c", "No.", "d1", "cli"))
    assert state.decisions == [
        {
            "id": "d1",
            "kind": "gate",
            "stage": "gate",
            "approve": False,
            "comment": "No.",
            "to": "c",
            "at": T,
            "source": "cli",
        }
    ]
    decision = events(effects)[0]
    assert decision.message == "gate rejected, back to 'c': No."
    assert decision.data == {
        "id": "d1",
        "approve": False,
        "comment": "No.",
        "to": "c",
        "source": "cli",
    }
    assert (decision.stage, decision.task_id) == ("gate", "gate#1")


def test_the_answer_reaches_the_supervisor_as_recorded():
    state, effects = machine.step(
        question_waiting(), TABLE, reply(False, source=ReplySource.WIDGET)
    )
    (notify,) = [e for e in effects if isinstance(e, actions.NotifyAnswer)]
    assert notify.answer == state.decisions[-1]
    assert notify.answer["question"] == "Use the GPU?" and notify.answer["approve"] is False
    assert effects[-1] == actions.Respond(True, "answered d1: no", "d1", notify.answer)


def test_the_question_is_stripped_and_gets_the_next_id():
    state, effects = machine.step(
        at("a", came_from=None, decision_counter=4),
        TABLE,
        actions.Ask("  Which seed?\n", ("1", "2"), T),
    )
    assert state.pending is not None
    assert (state.pending.id, state.pending.question) == ("d5", "Which seed?")
    assert state.pending.options == ("1", "2") and state.pending.kind == DecisionKind.QUESTION
    assert effects[-1] == actions.Respond(True, "asked d5: Which seed?", "d5")


@pytest.mark.parametrize(
    ("state", "action", "error"),
    [
        (
            at("a", came_from=None),
            reply(True),
            "nothing is waiting for a reply: the project is running at stage 'a'",
        ),
        (gate_waiting(), reply(False, "nosuch"), "'nosuch' is not a stage of table.toml"),
        (gate_waiting(), reply(False, DONE), "'done' is not a stage of table.toml"),
        (
            gate_waiting(),
            actions.Ask("Another?", (), T),
            "cannot ask while the project is waiting_user",
        ),
    ],
    ids=[
        "reply with nothing pending",
        "reject to an unknown stage",
        "reject to done",
        "ask while waiting",
    ],
)
def test_actions_that_cannot_apply_raise_and_change_nothing(state, action, error):
    before = state.to_dict()
    with pytest.raises(ControllerError, match=error):
        machine.step(state, TABLE, action)
    assert state.to_dict() == before


def test_actions_and_effects_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        finish().summary = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        actions.Respond(True, "x").ok = False  # type: ignore[misc]
