"""A coding agent's permission request as both screens draw it (`jupyter.permission_card`),
and on the dashboard's decision card (`gate_card.card_of`): who asks, the tool call, an
edit's diff drawn as a gate's, one button per option of the agent's, in its words."""

from __future__ import annotations

import pytest
from support.permissions import EDIT, OPTIONS

from lightscientist_jupyter.controller import PendingDecision
from lightscientist_jupyter.jupyter.dashboard.gate_card import card_of
from lightscientist_jupyter.jupyter.permission_card import permission_card
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.vocab import DecisionKind

pytestmark = pytest.mark.unit


def test_an_edit_shows_its_diff_and_one_button_per_option():
    card = permission_card(EDIT)
    assert card["heading"] == "codex asks to edit analysis.py"
    assert (card["agent"], card["title"], card["kind"]) == ("codex", "Edit analysis.py", "edit")
    assert card["paths"] == ["analysis.py"]
    assert [(c["name"], c["approve"]) for c in card["choices"]] == [
        ("Allow once", True),
        ("Always allow", True),
        ("Reject", False),
    ]
    diff = card["diff"]
    assert diff is not None
    assert (diff["path"], diff["status"], diff.get("summary")) == (
        "analysis.py",
        "changed",
        "+1 −1",
    )
    assert [line for line in diff["lines"] if line[:1] in "+-" and line[:3] not in "+++---"] == [
        "-x = 1",
        "+x = 2",
    ]
    assert card["detail"] == ""  # the diff says it


def test_a_new_file_is_all_added():
    card = permission_card(
        PermissionRequest("codex", "Write b.md", "edit", OPTIONS, ("b.md",), None, "hi\n")
    )
    assert card["diff"] is not None
    assert (card["diff"]["status"], card["diff"].get("summary")) == ("new", "+1 −0")


def test_a_command_shows_what_it_runs_and_no_diff():
    run = PermissionRequest("codex", "pytest -q", "execute", OPTIONS, detail="pytest -q tests/")
    card = permission_card(run)
    assert card["heading"] == "codex asks to run: pytest -q"
    assert (card["diff"], card["detail"]) == (None, "pytest -q tests/")


def test_the_dashboards_card_of_a_permission_is_its_heading_and_card():
    pending = PendingDecision(
        id="d3",
        kind=DecisionKind.QUESTION,
        stage="experiment.loop",
        question=EDIT.question,
        options=tuple(o.name for o in OPTIONS),
        permission=EDIT,
    )
    card = card_of(pending, [])
    assert card["heading"] == "codex asks permission"
    assert card["permission"] == permission_card(EDIT)
    plain = card_of(PendingDecision("d4", DecisionKind.QUESTION, "a", "Which seed?"), [])
    assert (plain["heading"], plain["permission"]) == ("Question from a: Which seed?", None)


def test_the_pending_decision_keeps_its_request_in_state_json():
    pending = PendingDecision("d3", DecisionKind.QUESTION, "a", EDIT.question, permission=EDIT)
    raw = pending.to_dict()
    assert raw["permission"]["options"][2] == {
        "id": "reject",
        "name": "Reject",
        "kind": "reject_once",
    }
    assert PendingDecision.from_dict(raw) == pending
    assert PendingDecision.from_dict({**raw, "permission": None}).permission is None
