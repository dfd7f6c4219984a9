"""Usage and budgets in the pure `machine.step`: charges add up per stage visit and project,
80 % warns once, 100 % makes a `budget` decision and holds new calls, a reply raises the
limit or ends the project `failed` with the reason `budget`; the loader validates a stage's
`budget`; an older state.json (without the new keys) still loads."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import SMALL_TABLE
from test_machine import TABLE, T, at

from lightscientist_jupyter.controller import actions, budget, machine
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.state import ProjectState, load_state, shape_problem
from lightscientist_jupyter.errors import ControllerError, StageTableError
from lightscientist_jupyter.vocab import DecisionKind, EventType, ProjectStatus


def call(tokens_in: int, tokens_out: int, task_id: str = "a#1", cost: float | None = 0.0):
    return {
        "worker": "w1",
        "stage": task_id.partition("#")[0],
        "task_id": task_id,
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "model_calls": 1,
        "wall_s": 0.5,
        "cost_usd": cost,
        "unpriced_calls": int(cost is None),
        "run": "r1",
        "run_s": 10.0,
    }


def charge(state, *calls, table=TABLE):
    effects = []
    for c in calls:
        state, more = machine.step(state, table, actions.Charge(c, T))
        effects.extend(more)
    return state, effects


def types(effects):
    return [e.type for e in effects if isinstance(e, actions.Emit)]


def limited(**limits):
    return at("a", came_from=None, budget={"project": limits})


def test_charges_add_up_per_visit_and_project():
    state, effects = charge(at("a", came_from=None), call(100, 20), call(50, 10, cost=None))
    assert budget.project_usage(state).tokens == 180
    assert budget.visit_usage(state, "a#1").model_calls == 2
    assert budget.project_usage(state).cost is None  # one call had no price
    assert types(effects) == []
    assert state.status == ProjectStatus.RUNNING


def test_80_percent_warns_once_and_100_percent_asks():
    state, effects = charge(limited(tokens=1000), call(700, 100), call(10, 10))
    assert types(effects) == [EventType.BUDGET_WARNING]
    assert budget.hold_reason(state, TABLE) is None

    state, effects = charge(state, call(150, 50))
    assert types(effects) == [EventType.BUDGET_EXCEEDED, EventType.USER_DECISION_REQUESTED]
    assert state.status == ProjectStatus.WAITING_USER
    pending = state.pending
    assert pending.kind == DecisionKind.BUDGET
    assert pending.question.startswith("The project budget of 1,000 tokens is spent (1,020 tokens)")
    assert "a#1 1,020 tokens" in pending.summary
    assert pending.details == {"scope": "project", "key": "tokens", "limit": 1000, "spent": 1020}
    assert budget.hold_reason(state, TABLE) == pending.question


def test_reply_y_raises_the_limit_and_goes_on():
    state, _ = charge(limited(tokens=100), call(100, 20))
    with pytest.raises(
        ControllerError, match=r"is spent \(120 tokens\); answer .*--budget tokens=N"
    ):
        machine.step(state, TABLE, actions.Reply(True, "", None, None, "cli", T))
    with pytest.raises(ControllerError, match=r"tokens=110 is not above .* spent \(120 tokens\)"):
        machine.step(state, TABLE, actions.Reply(True, "", None, None, "cli", T, {"tokens": 110}))
    raised, effects = machine.step(
        state, TABLE, actions.Reply(True, "", None, None, "cli", T, {"tokens": 500})
    )
    assert (raised.status, raised.pending) == (ProjectStatus.RUNNING, None)
    assert raised.budget["project"]["tokens"] == 500
    assert raised.decisions[-1]["kind"] == "budget" and raised.decisions[-1]["budget"] == {
        "tokens": 500
    }
    assert budget.hold_reason(raised, TABLE) is None
    assert types(effects) == [EventType.USER_DECISION]


def test_reply_n_ends_failed_with_reason_budget_and_resume_says_how_to_raise():
    state, _ = charge(limited(usd=0.01), call(10, 10, cost=0.02))
    ended, _ = machine.step(state, TABLE, actions.Reply(False, "", None, None, "cli", T))
    assert (ended.status, ended.reason) == (ProjectStatus.FAILED, "budget")
    with pytest.raises(ControllerError, match=r"ended at its budget.*resume --budget"):
        machine.step(ended, TABLE, actions.Reopen())
    raised, _ = machine.step(ended, TABLE, actions.SetBudget({"usd": 1.0}))
    again, _ = machine.step(raised, TABLE, actions.Reopen())
    assert again.status == ProjectStatus.RUNNING


def test_a_stage_budget_holds_that_stage_alone():
    table = dataclasses.replace(
        TABLE,
        stages={**TABLE.stages, "a": dataclasses.replace(TABLE["a"], budget={"tokens": 100})},
    )
    state, effects = charge(at("a", came_from=None), call(90, 20), table=table)
    assert state.pending.details["scope"] == "stage a"
    assert EventType.BUDGET_EXCEEDED in types(effects)
    raised, _ = machine.step(
        state, table, actions.Reply(True, "", None, None, "cli", T, {"tokens": 1000})
    )
    assert raised.budget == {"stages": {"a": {"tokens": 1000}}}
    # at another stage the spend of `a` holds nothing
    at_b = dataclasses.replace(state, stage="b", visits={"a": 1, "b": 1}, pending=None)
    at_b.status = ProjectStatus.RUNNING
    assert budget.hold_reason(at_b, table) is None


def test_an_unknown_price_cannot_be_checked_and_says_so_once():
    state, effects = charge(limited(usd=1), call(10, 10, cost=None), call(10, 10, cost=None))
    assert types(effects) == [EventType.BUDGET_WARNING]
    assert state.status == ProjectStatus.RUNNING


def test_hours_count_the_runs_wall_time():
    state, _ = charge(limited(hours=0.001), call(1, 1))  # the call came 10 s into its run
    assert state.pending.details["key"] == "hours"


def test_a_process_entry_ends_with_the_visits_usage():
    state, _ = charge(at("a", came_from=None), call(1000, 234))
    _, effects = machine.step(state, TABLE, actions.Finish("did a", (), None, (), T))
    entry = next(e.entry for e in effects if isinstance(e, actions.AppendProcess))
    assert entry.usage == "1,234 tokens (1,000 in, 234 out) in 1 model call(s), $0"


def test_an_older_state_file_loads(tmp_path):
    state = at("a", came_from=None).to_dict()
    del state["budget"], state["usage"]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    assert shape_problem(state) is None
    loaded = load_state(path)
    assert (loaded.budget, loaded.usage) == ({}, {})
    assert shape_problem({**state, "budget": []}) == "key 'budget' should be an object, not []"
    assert isinstance(loaded, ProjectState)


def test_the_loader_validates_a_stage_budget(write_table, tmp_path):
    def table(line: str):
        text = SMALL_TABLE.replace("max_visits = 3\n", f"max_visits = 3\n{line}\n", 1)
        return write_table(tmp_path / line[:12].replace(" ", "_"), text)

    assert load_table(table("budget = { usd = 1, tokens = 2000 }"))["a"].budget == {
        "usd": 1.0,
        "tokens": 2000,
    }
    bad = table("budget = { dollars = 1 }")
    with pytest.raises(StageTableError, match=r"key 'budget'.*unknown budget key 'dollars'"):
        load_table(bad)
