"""A review stage's rules (`controller.review`) and values (`values.review`): a round's
reviews validated against the rubric and aggregated into one decision; the `review` key of a
stage table; the machine's move that sends the paper back."""

from __future__ import annotations

from typing import Any

import pytest

from lightscientist_jupyter.controller import actions, load_table, machine
from lightscientist_jupyter.controller.review import aggregate, as_round, feedback
from lightscientist_jupyter.values.review import ReviewSpec, parse_review, parse_spec
from lightscientist_jupyter.vocab import EventType, Mode, ProjectStatus
from tests.controller.test_loader import GOOD, line_of, load_error, only_problem
from tests.controller.test_machine import TABLE, T, at

SKILLS = {"skills/first.md": "x", "skills/second.md": "y"}
SPEC = ReviewSpec(reviewers=3, rubric="neurips", accept=6, rounds=2)


def review(reviewer: int, overall: int, *weak: str, round: int = 1, decision: str = "") -> Any:
    return parse_review(
        {
            "reviewer": reviewer,
            "round": round,
            "scores": {"soundness": 3, "presentation": 3, "contribution": 2, "overall": overall},
            "strengths": ["clear"],
            "weaknesses": list(weak),
            "questions": [],
            "decision": decision or ("accept" if overall >= 6 else "revise"),
        },
        SPEC,
        reviewer=reviewer,
        round=round,
    )


# ------------------------------------------------------------------------- the aggregate


def test_a_round_below_the_bar_with_a_round_left_asks_for_the_weaknesses_of_who_did_not_accept():
    reviews = [
        review(1, 4, "Add an ablation."),
        review(2, 7, "Typos in section 2."),
        review(3, 5, "add an  ablation.", "State the limits."),
    ]
    meta = aggregate(SPEC, 1, reviews)
    assert (meta["mean"], meta["decision"]) == (5.33, "revise")
    # the accepting reviewer's nit is not required; the same change asked twice is asked once
    assert meta["required_changes"] == ["Add an ablation.", "State the limits."]
    assert [(r["reviewer"], r["overall"], r["decision"]) for r in meta["reviews"]] == [
        (1, 4, "revise"),
        (2, 7, "accept"),
        (3, 5, "revise"),
    ]
    text = feedback(meta)
    assert "round 1, mean overall 5.33 below the 6 to accept" in text
    assert text.endswith("- Add an ablation.\n- State the limits.")


def test_the_last_round_below_the_bar_is_a_reject_and_a_round_at_the_bar_accepts():
    assert aggregate(SPEC, 2, [review(1, 5, round=2), review(2, 5, round=2)])["decision"] == (
        "reject"
    )
    accepted = aggregate(SPEC, 2, [review(1, 6, "Minor.", round=2), review(2, 7, round=2)])
    assert (accepted["mean"], accepted["decision"], accepted["required_changes"]) == (
        6.5,
        "accept",
        [],
    )


def test_a_round_without_a_valid_review_decides_nothing_on_the_paper():
    meta = aggregate(SPEC, 1, [], ["reviewer 1: paper/reviews/review-1.json was not written"])
    assert (meta["mean"], meta["decision"], meta["required_changes"]) == (None, "reject", [])
    assert meta["problems"] == ["reviewer 1: paper/reviews/review-1.json was not written"]


def test_the_earlier_rounds_are_kept_in_order_and_a_round_is_never_its_own_history():
    first = aggregate(SPEC, 1, [review(1, 4, "Add an ablation.")])
    second = aggregate(SPEC, 2, [review(1, 7, round=2)], earlier=[as_round(first)])
    assert [r["round"] for r in second["rounds"]] == [1]
    assert second["rounds"][0]["required_changes"] == ["Add an ablation."]
    again = aggregate(SPEC, 1, [review(1, 4)], earlier=[as_round(first)])
    assert again["rounds"] == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"reviewer": 2}, "'reviewer' must be 1, not 2"),
        ({"round": 2}, "'round' must be 1, not 2"),
        ({"scores": {"soundness": 5}}, "'scores.soundness' must be an integer from 1 to 4"),
        ({"scores": None}, "'scores' must be an object"),
        ({"decision": "maybe"}, "'decision' must be one of accept, revise, reject"),
        ({"weaknesses": "all of it"}, "'weaknesses' must be a list of strings"),
    ],
)
def test_a_review_off_the_rubric_is_refused_naming_the_key(change, expected):
    raw = {
        "reviewer": 1,
        "round": 1,
        "scores": {"soundness": 3, "presentation": 3, "contribution": 3, "overall": 6},
        "decision": "accept",
    }
    with pytest.raises(ValueError, match="must") as info:
        parse_review({**raw, **change}, SPEC, reviewer=1, round=1)
    assert expected in str(info.value)


# ------------------------------------------------------------------------- the table key


def test_a_review_stage_reaches_the_table(tmp_path, write_table):
    text = GOOD.replace(
        'allowed = ["second"]',
        'allowed = ["second"]\nreview = { reviewers = 5, accept = 6.5, rounds = 3 }',
    )
    table = load_table(write_table(tmp_path, text, SKILLS))
    assert table["first"].review == ReviewSpec(reviewers=5, rubric="neurips", accept=6.5, rounds=3)
    assert table["second"].review is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{ reviewers = 0 }", "'reviewers' must be an integer from 1 to 9, not 0"),
        ('{ rubric = "iclr" }', "'rubric' must be one of neurips, not 'iclr'"),
        ("{ accept = 11 }", "'accept' must be an overall score from 1 to 10, not 11"),
        ("{ rounds = 1.5 }", "'rounds' must be an integer from 1 to 5, not 1.5"),
        ("{ judges = 3 }", "unknown key 'judges'"),
    ],
)
def test_a_bad_review_value_is_refused_with_its_line(tmp_path, write_table, value, expected):
    text = GOOD.replace('allowed = ["second"]', f'allowed = ["second"]\nreview = {value}')
    problem = only_problem(load_error(write_table(tmp_path, text, SKILLS)))
    assert problem.startswith(f"stage 'first', key 'review' (line {line_of(text, 'review =')}): ")
    assert expected in problem


def test_parse_spec_reports_every_problem_at_once():
    with pytest.raises(ValueError) as info:
        parse_spec({"reviewers": 10, "rounds": 0, "accept": "high"})
    assert str(info.value).count("must") == 3


# ------------------------------------------------------------------------- the move back


def test_a_revision_moves_back_without_a_gate_and_hands_the_changes_to_the_next_visit():
    state = at("gate", {"a": 1, "gate": 1}, mode=Mode.MANUAL)
    move = actions.Revise("gate", "a", "round 1: below", "Change these:\n- Add an ablation.", T)
    after, effects = machine.step(state, TABLE, move)
    assert (after.stage, after.status, after.pending) == ("a", ProjectStatus.RUNNING, None)
    assert after.visits["a"] == 2 and after.feedback == "Change these:\n- Add an ablation."
    assert after.history[-1] == {"from": "gate", "to": "a", "by": "revise", "at": T}
    emitted = [e for e in effects if isinstance(e, actions.Emit)]
    assert [e.type for e in emitted][:2] == [EventType.STAGE_FINISH, EventType.STAGE_TRANSITION]
    assert emitted[0].data["by"] == "reviewers"
    (entry,) = [e.entry for e in effects if isinstance(e, actions.AppendProcess)]
    assert entry.decision == "sent back to 'a' by the reviewers"


def test_a_revision_of_a_stage_the_project_has_left_changes_nothing():
    state = at("b", {"a": 1, "gate": 1, "b": 1})
    after, effects = machine.step(state, TABLE, actions.Revise("gate", "a", "s", "f", T))
    assert after == state
    (respond,) = [e for e in effects if isinstance(e, actions.Respond)]
    assert not respond.ok and "not at 'gate'" in respond.message
