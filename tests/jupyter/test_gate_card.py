"""The gate card (drawn in the browser), the status line, the timeline: what the kernel sets.

The browser side — a click sent through the server extension, after a reload too, in the
light and the dark theme — is tested in tests/notebooks/test_e2e_browser.py.
"""

# ruff: noqa: F811  (the fixtures come from test_dashboard)
from __future__ import annotations

from support.recalls import HITS, SHOWN, emit_recall
from test_dashboard import (  # noqa: F401
    ControllerSource,
    _to_gate,
    make_board,
    project,
    reply_over_comm,
)

from lightscientist_jupyter.jupyter.dashboard import status_line


def test_the_card_puts_the_action_first_and_the_comm_fallback_replies_once(
    project, make_board, produce
):
    controller, _bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    _to_gate(controller, produce)
    board.tick()
    card = board.gate.actions.card
    assert card["heading"] == "◆ Approve gate and move on to b?"
    assert card["id"] == "d1" and card["files"] == ["out/brief.md"]
    assert card["targets"][0] == ["a (default)", "a"] and not card["settled"]
    assert board.gate.fold.selected_index is None  # the preview starts folded
    assert "waiting for you" in board.status_line.value
    assert board.controls.run["position"] == [2, 3]  # "stage 2 of 3", in the controls' row
    assert "of 3" not in board.status_line.value  # and once only

    sent = reply_over_comm(board, False, "d1", "needs more data", "a")
    assert sent == [{"kind": "outcome", "ok": True, "text": sent[0]["text"]}]
    assert controller.stage == "a" and "needs more data" in controller.state.feedback
    again = reply_over_comm(board, True, "d1")
    assert again[0]["text"] == "decision d1 is no longer waiting here; nothing changed"
    board.tick()
    assert board.gate.actions.card["settled"]
    outcome = board.gate.actions.outcome
    assert outcome["state"] == "settled" and outcome["text"].startswith(
        "✔ rejected gate → a from the dashboard; now running"
    )
    # the decision stays on screen, with its comment and where it came from
    assert (
        'rejected</b> at <code>gate</code> → a <span class="ls-muted">from the dashboard</span>'
        " — “needs more data”"
    ) in board.timeline.value
    assert "from the dashboard" in board.timeline.value


def test_a_dead_kernel_banner_names_the_command_that_resumes(project, make_board):
    controller, _bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    command = status_line.resume_command(controller.workspace.root)
    assert command == f"%lightscientist resume --workspace {controller.workspace.root}"
    assert board.controls.resume == command  # the banner of the run controls shows it
    assert board.controls.root == str(controller.workspace.root)
    assert board.controls.run["status"] == controller.status
    assert board.controls.run["stage"] == controller.stage


def test_the_card_lists_what_the_stage_was_given_from_memory(project, make_board, produce):
    """The gate's visit was given two entries for its task header; a worker's own recall and
    another stage's header are not what the stage was given."""
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    emit_recall(bus, "a#1", [HITS[1]])  # stage a's header
    produce(controller)
    controller.finish_stage("a done", (), "gate")
    emit_recall(bus, "gate#1")
    emit_recall(bus, "gate#1", [HITS[0]], for_="tool")  # a worker asked, later
    produce(controller)
    assert controller.finish_stage("The brief says: go.", ()).accepted
    board.tick()
    assert board.gate.actions.card["recalled"] == SHOWN

    reply_over_comm(board, False, "d1", "again", "a")  # back to a, then the gate's second visit
    _to_gate(controller, produce)
    board.tick()
    assert board.gate.actions.card["id"] == "d2"
    assert board.gate.actions.card["recalled"] == []  # its first visit's is not this one's
