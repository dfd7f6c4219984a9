"""The dashboard's hand-over card on a project on disk: Do it myself, checklist, deliver."""

from __future__ import annotations

from lightscientist_jupyter import api
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.jupyter.dashboard.handoff_card import CELL_MIME
from lightscientist_jupyter.jupyter.dashboard.view import Dashboard
from lightscientist_jupyter.workspace import Workspace


def board_at(tmp_path, **kw) -> tuple[Workspace, Dashboard]:
    ws = Workspace.at(tmp_path / "p")
    ResearchController.create(ws, "Does warmup help?", start_stage="experiment.loop", **kw)
    return ws, Dashboard(api.open_project(ws.root), start=False)


def _comm(card, **content):
    """A message from the card in the browser (the comm fallback), and what it heard back."""
    heard = []
    card.view.send = lambda message, *rest: heard.append(message)
    card._message(card.view, content, [])
    return heard[-1]


def test_do_it_myself_shows_the_card_and_the_checklist_ticks(tmp_path):
    ws, board = board_at(tmp_path, mode="auto")
    card = board.handoff
    assert card.view.take == {"label": "Do it myself"} and card.view.card == {}
    answer = _comm(card, kind="handoff", step="take", fields={})
    assert answer["ok"] and "yours" in answer["text"]
    board.refresh()
    shown = card.view.card
    assert card.view.take == {"label": ""}
    assert shown["stage"] == "experiment.loop" and shown["decision_id"]
    assert [o["ready"] for o in shown["outputs"]] == [False, False]
    assert shown["allowed_next"] == ["experiment.loop", "experiment.analyze", "experiment.setup"]
    (ws.root / "experiment").mkdir(exist_ok=True)  # the notebook of the take is there
    (ws.root / "experiment" / "results.csv").write_text("a\n1\n", encoding="utf-8")
    card._checked_at = 0.0  # the next look at the disk is due
    board.refresh()
    assert [o["ready"] for o in card.view.card["outputs"]] == [True, False]

    assert _comm(card, kind="insert") == {"kind": "outcome", "ok": True, "text": ""}
    [inserted] = card.inserted.outputs
    assert "results_path = root / 'experiment/results.csv'" in inserted["data"][CELL_MIME]["code"]

    refused = _comm(card, kind="handoff", step="deliver", fields={"summary": "by hand"})
    assert not refused["ok"] and "experiment/log.md (missing)" in refused["text"]
    assert card.view.outcome["state"] == "refused"
    (ws.root / "experiment" / "log.md").write_text("log\n", encoding="utf-8")
    delivered = _comm(card, kind="handoff", step="deliver", fields={"summary": "by hand"})
    assert delivered["ok"] and "finished; the project moved to" in delivered["text"]
    run = api.current(ws.root)  # nobody ran it: the run goes on in this process, with workers
    assert run is not None
    run.stop()
    board.refresh()
    assert card.view.card == {}
    board.close()


def test_at_a_gate_the_button_takes_the_next_stage(tmp_path, advance):
    ws = Workspace.at(tmp_path / "p")
    c = ResearchController.create(ws, "g", mode="manual", start_stage="experiment.gate")
    advance(c)
    board = Dashboard(api.open_project(ws.root), start=False)
    assert board.handoff.view.take == {"label": "Do paper.plan myself"}
    assert "'paper.plan' will be yours" in board.handoff.take()
    assert board.handoff.view.outcome["state"] == "sent"
    board.close()


def test_an_unknown_step_is_answered_not_raised(tmp_path):
    _ws, board = board_at(tmp_path, mode="auto")
    answer = _comm(board.handoff, kind="handoff", step="dance", fields={})
    assert answer == {
        "kind": "outcome",
        "ok": False,
        "text": "not done: unknown hand-over step 'dance'",
    }
    board.close()
