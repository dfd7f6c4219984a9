"""rules.py: the transition rules of layer 1, each a plain function tested on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from lightscientist_jupyter.controller import rules
from lightscientist_jupyter.controller.table import DONE, Stage, StageTable

SURVEY = Stage(
    id="survey",
    skill=Path("/t/s.md"),
    outputs=("notes/survey.md", "notes/refs.bib"),
    next="review",
    allowed=("review", "survey"),
    max_visits=2,
)
PROBE = Stage(id="probe", skill=Path("/t/p.md"), outputs=(), next="review", allowed=("review",))
REVIEW = Stage(
    id="review",
    skill=Path("/t/r.md"),
    outputs=("brief.md",),
    next=DONE,
    allowed=(DONE,),
    approval=True,
)
TABLE = StageTable(
    path=Path("/flows/review.toml"),
    start="survey",
    stages={s.id: s for s in (SURVEY, PROBE, REVIEW)},
)


def move(frm: str | None, to: str, by: str = "finish") -> dict:
    return {"from": frm, "to": to, "by": by, "at": 0.0}


# --------------------------------------------------------------------------- missing_outputs


def test_missing_outputs_names_each_path_and_why(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "survey.md").write_text("", encoding="utf-8")
    assert rules.missing_outputs(SURVEY, tmp_path) == [
        "notes/survey.md (empty)",
        "notes/refs.bib (missing)",
    ]


def test_a_folder_in_place_of_an_output_is_named(tmp_path):
    (tmp_path / "notes" / "survey.md").mkdir(parents=True)
    (tmp_path / "notes" / "refs.bib").write_text("@book{x}\n", encoding="utf-8")
    assert rules.missing_outputs(SURVEY, tmp_path) == ["notes/survey.md (a folder, not a file)"]


def test_an_output_that_is_a_link_is_refused_even_when_it_points_inside(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "real.md").write_text("# survey\n", encoding="utf-8")
    (tmp_path / "notes" / "survey.md").symlink_to(tmp_path / "real.md")
    (tmp_path / "notes" / "refs.bib").symlink_to("/etc/hostname")
    assert rules.missing_outputs(SURVEY, tmp_path) == [
        "notes/survey.md (a symbolic link, which the history does not keep: put the file "
        "itself there)",
        "notes/refs.bib (outside the workspace: a symbolic link to /etc/hostname)",
    ]


def test_written_outputs_are_not_missing(tmp_path):
    (tmp_path / "notes").mkdir()
    for name in ("survey.md", "refs.bib"):
        (tmp_path / "notes" / name).write_text("x", encoding="utf-8")
    assert rules.missing_outputs(SURVEY, tmp_path) == []
    assert rules.missing_outputs(PROBE, tmp_path) == []


# --------------------------------------------------------------------------- finish_refusal


def test_a_finish_to_an_allowed_stage_with_its_outputs_is_accepted():
    assert rules.finish_refusal(SURVEY, "survey", []) is None
    assert rules.finish_refusal(REVIEW, DONE, []) is None


def test_a_stage_not_allowed_is_refused_with_the_choices():
    reason = rules.finish_refusal(SURVEY, "probe", [])
    assert reason == (
        "'probe' is not an allowed next stage of 'survey'; choose one of "
        "review, survey (default: review)"
    )


def test_missing_outputs_are_refused_with_what_to_do():
    reason = rules.finish_refusal(SURVEY, "review", ["notes/refs.bib (missing)"])
    assert reason == (
        "required outputs are not ready: notes/refs.bib (missing); write them "
        "(non-empty), then call finish_stage again"
    )


def test_every_reason_comes_at_once():
    reason = rules.finish_refusal(SURVEY, DONE, ["a (missing)", "b (empty)"])
    assert reason is not None
    wrong_stage, not_ready = reason.split("; required")
    assert wrong_stage.startswith("'done' is not an allowed next stage of 'survey'")
    assert not_ready.startswith(" outputs are not ready: a (missing), b (empty);")


def test_listed_outputs_are_checked_like_required_ones(tmp_path):
    """A finish may list more files than the stage requires; each must exist, non-empty (a
    folder holding something counts), inside the workspace."""
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "c1.md").write_text("ok")
    (tmp_path / "runs").mkdir()
    (tmp_path / "empty.md").write_text("")
    listed = ["/probes/c1.md", "probes/c2.md", "runs", "empty.md", "../elsewhere.md", ""]
    assert rules.missing_files(listed, tmp_path, dirs_ok=True) == [
        "probes/c2.md (missing)",
        "runs (empty)",
        "empty.md (empty)",
        "../elsewhere.md (outside the workspace)",
    ]


def test_paths_out_of_the_workspace_and_links_are_named_for_what_they_are(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "elsewhere"
    (root / "data").mkdir(parents=True)
    outside.mkdir()
    (outside / "key.txt").write_text("secret")
    (root / "data" / "ok.csv").write_text("a,b\n")
    (root / "out.csv").symlink_to(outside / "key.txt")
    (root / "gone.csv").symlink_to(outside / "nothing.csv")  # dangling, out
    (root / "alias.csv").symlink_to(root / "data" / "ok.csv")
    (root / "linked").symlink_to(outside)
    (tmp_path / "alias").symlink_to(root)  # the workspace under another name
    listed = [
        str(tmp_path / "alias" / "data" / "ok.csv"),
        "/etc/hostname",  # a folder of this machine, not the workers' '/' of the workspace
        str(outside / "key.txt"),
        str(root / "data" / "ok.csv"),  # the workspace's own absolute path is inside
        "/data/ok.csv",
        "/experiment/results.csv",  # the workers' '/': inside, not written yet
        "out.csv",
        "gone.csv",
        "alias.csv",
        "linked/key.txt",
    ]
    assert rules.missing_files(listed, root) == [
        "/etc/hostname (outside the workspace)",
        f"{outside / 'key.txt'} (outside the workspace)",
        "/experiment/results.csv (missing)",
        f"out.csv (outside the workspace: a symbolic link to {outside / 'key.txt'})",
        f"gone.csv (outside the workspace: a symbolic link to {outside / 'nothing.csv'})",
        "alias.csv (a symbolic link, which the history does not keep: put the file itself there)",
        f"linked/key.txt (outside the workspace: its folder linked is a symbolic link to "
        f"{outside})",
    ]


def test_a_deliver_refused_speaks_to_the_researcher_not_to_a_model():
    reason = rules.finish_refusal(
        SURVEY,
        "review",
        ["notes/refs.bib (missing)"],
        ["extra.md (empty)"],
        ["citations: [@x] not in the references"],
        by="researcher",
        via="cli",
    )
    assert reason == (
        "required outputs are not ready: notes/refs.bib (missing); write each as a non-empty "
        "file in the workspace, then run `lightscientist deliver` again; the further outputs "
        "you named are not ready: extra.md (empty); write them (non-empty) or leave them out "
        "of the outputs; the stage's checks failed: citations: [@x] not in the references; "
        "fix each (`lightscientist check` shows each citation and number with its trace), "
        "then run `lightscientist deliver` again"
    )


def test_a_finish_listing_a_file_that_does_not_exist_is_refused_naming_it():
    reason = rules.finish_refusal(PROBE, "review", [], ["idea/probes/c2.md (missing)"])
    assert reason == (
        "outputs the finish lists do not exist: idea/probes/c2.md (missing); write them "
        "(non-empty) or leave them out of the outputs"
    )


def test_the_retry_notice_says_what_failed_before():
    assert rules.retry_notice("survey", "w2 failed: boom") == (
        "survey failed before (w2 failed: boom); it starts again from its start with fresh workers"
    )


# --------------------------------------------------------------------------- visit_limit_reason


@pytest.mark.parametrize(("stage", "visits"), [(SURVEY, 1), (SURVEY, 2), (PROBE, 500)])
def test_visits_up_to_the_limit_pass(stage, visits):
    assert rules.visit_limit_reason(stage, visits, TABLE.path) is None


def test_one_visit_past_the_limit_fails_and_says_where_to_raise_it():
    reason = rules.visit_limit_reason(SURVEY, 3, TABLE.path)
    assert reason == (
        "stage 'survey' was entered 3 times, more than its max_visits = 2 "
        "(a runaway loop?); raise max_visits in /flows/review.toml or change "
        "the flow"
    )


# --------------------------------------------------------------------------- previous_stage


def test_previous_stage_is_where_the_last_entry_came_from():
    history = [
        move(None, "survey", "start"),
        move("survey", "review"),
        move("review", "probe", "reject"),
        move("probe", "review"),
    ]
    assert rules.previous_stage(history, "review") == "probe"
    assert rules.previous_stage(history, "survey") is None  # entered only at the start
    assert rules.previous_stage(history, "nowhere") is None
    assert rules.previous_stage([], "review") is None


# --------------------------------------------------------------------------- reject_target


def test_a_named_stage_is_the_target():
    assert rules.reject_target(TABLE, REVIEW, [], "probe") == ("probe", None)


@pytest.mark.parametrize("bad", ["nosuch", DONE])
def test_a_target_outside_the_table_is_refused_with_the_choices(bad):
    target, reason = rules.reject_target(TABLE, REVIEW, [], bad)
    assert target is None
    assert reason == f"'{bad}' is not a stage of review.toml; choose one of survey, probe, review"


def test_without_a_target_the_rejection_goes_back_where_the_gate_was_entered_from():
    history = [move(None, "survey", "start"), move("survey", "probe"), move("probe", "review")]
    assert rules.reject_target(TABLE, REVIEW, history, None) == ("probe", None)


def test_without_history_the_first_predecessor_in_the_table_is_used():
    assert rules.reject_target(TABLE, REVIEW, [move(None, "review", "start")], None) == (
        "survey",
        None,
    )


def test_a_gate_nothing_leads_to_is_sent_back_to_itself():
    alone = Stage(
        id="alone", skill=Path("/t/a.md"), outputs=(), next=DONE, allowed=(DONE,), approval=True
    )
    table = StageTable(path=Path("/flows/one.toml"), start="alone", stages={"alone": alone})
    assert rules.reject_target(table, alone, [], None) == ("alone", None)
