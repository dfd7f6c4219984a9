"""What a stage was given from the user's memory, read back from its `memory.recall` events
(`app.recalled`): the hits of the visit's task header, in their order, and nothing of a shape
the front ends could not show."""

from __future__ import annotations

from support.recalls import HITS, SHOWN, log_recall

from lightscientist_jupyter.app.recalled import at_decision, recalled_for
from lightscientist_jupyter.controller import ResearchController


def test_the_header_s_hits_are_read_back_and_odd_ones_left_out(workspace, small_table):
    controller = ResearchController.create(workspace, "find x", mode="manual", table=small_table)
    assert recalled_for(workspace, controller.state) == []  # given nothing
    odd = [{"id": "7", "kind": "lesson", "text": "an id that is no number"}, "a string", None]
    no_project = {"id": 9, "kind": "finding", "project": None, "text": "t"}
    log_recall(workspace, "a#1", [*odd, HITS[0], no_project, HITS[1]])
    shown = [r.to_dict() for r in recalled_for(workspace, controller.state)]
    assert shown == [SHOWN[0], {"id": 9, "kind": "finding", "project": "-", "text": "t"}, SHOWN[1]]
    assert at_decision(workspace, controller.state) == []  # no decision waits: not read


def test_the_latest_header_of_the_visit_is_the_one_shown(workspace, small_table):
    """A resumed stage builds its header again: the later recall is what it was given."""
    controller = ResearchController.create(workspace, "find x", mode="manual", table=small_table)
    log_recall(workspace, "a#1", HITS)
    log_recall(workspace, "a#1", [HITS[1]])
    log_recall(workspace, "a#1", [HITS[0]], for_="tool")
    assert [r.id for r in recalled_for(workspace, controller.state)] == [3]


def test_a_log_that_cannot_be_read_shows_nothing_recalled(workspace, small_table, tmp_path):
    controller = ResearchController.create(workspace, "find x", mode="manual", table=small_table)
    log_recall(workspace, "a#1")
    elsewhere = tmp_path / "elsewhere.jsonl"
    workspace.events_file.rename(elsewhere)
    workspace.events_file.symlink_to(elsewhere)  # planted: the kernel follows no link
    assert recalled_for(workspace, controller.state) == []
