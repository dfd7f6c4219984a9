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


def test_do_it_myself_shows_the_card_and_the_checklist_ticks(tmp_path):
    ws, board = board_at(tmp_path, mode="auto")
    card = board.handoff
    assert card.take_button.layout.display == "" and card.form.layout.display == "none"
    card.take_button.click()
    board.refresh()
    assert card.form.layout.display == "" and card.take_button.layout.display == "none"
    assert "<b>experiment.loop</b> is yours" in card.title.value
    assert card.checklist.value.count("data-ready='false'") == 2
    assert card.next_stage.options == ("experiment.loop", "experiment.analyze", "experiment.setup")
    (ws.root / "experiment").mkdir(exist_ok=True)  # the notebook of the take is there
    (ws.root / "experiment" / "results.csv").write_text("a\n1\n", encoding="utf-8")
    card._checked_at = 0.0  # the next look at the disk is due
    board.refresh()
    assert card.checklist.value.count("data-ready='true'") == 1

    card.insert()
    [shown] = card.inserted.outputs
    assert "results_path = root / 'experiment/results.csv'" in shown["data"][CELL_MIME]["code"]

    card.summary.value = "by hand"
    card.deliver_button.click()
    assert "experiment/log.md (missing)" in card.result.value
    (ws.root / "experiment" / "log.md").write_text("log\n", encoding="utf-8")
    card.deliver_button.click()
    assert "finished; the project moved to" in card.result.value
    run = api.current(ws.root)  # nobody ran it: the run goes on in this process, with workers
    assert run is not None
    run.stop()
    board.refresh()
    assert card.form.layout.display == "none"
    board.close()


def test_at_a_gate_the_button_takes_the_next_stage(tmp_path, advance):
    ws = Workspace.at(tmp_path / "p")
    c = ResearchController.create(ws, "g", mode="manual", start_stage="experiment.gate")
    advance(c)
    board = Dashboard(api.open_project(ws.root), start=False)
    assert board.handoff.take_button.description == "Do paper.plan myself"
    board.handoff.take_button.click()
    assert "'paper.plan' will be yours" in board.handoff.result.value
    board.close()
