"""Golden notebooks executed by nbclient on a real kernel, each in an empty folder.

`auto_mode.ipynb` runs `%lightscientist research … --mode auto` with the offline model to
`done` and reads the paper inline; a cell executed while the run goes on must return at
once. `manual_mode.ipynb` approves each gate through the dashboard's Approve button until
the project is done. The notebooks assert in their own cells; these tests check the
outputs and timings that nbclient records.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from support.notebooks import execute_notebook

from lightscientist_jupyter.controller import load_table

pytestmark = pytest.mark.slow

NOTEBOOKS = Path(__file__).with_name("notebooks")
WIDGET = "application/vnd.jupyter.widget-view+json"
PROMPT_S = 2.0
"""A cell that does not wait for the run returns within this (it takes milliseconds)."""


def execute(name: str, folder: Path) -> nbformat.NotebookNode:
    return execute_notebook(NOTEBOOKS / name, folder)


def duration(cell: nbformat.NotebookNode) -> float:
    timing = cell.metadata.execution
    start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code"]


def assert_no_errors(nb: nbformat.NotebookNode) -> None:
    for cell in code_cells(nb):
        for output in cell.outputs:
            assert output.output_type != "error", output
            assert output.get("name") != "stderr", output.get("text")


def mimes(cell: nbformat.NotebookNode) -> list[dict]:
    return [o.get("data", {}) for o in cell.outputs if "data" in o]


@pytest.mark.timeout(300)
def test_auto_mode_runs_to_done_and_shows_the_paper(tmp_path):
    nb = execute("auto_mode.ipynb", tmp_path)
    assert_no_errors(nb)
    load, research, meanwhile, wait, paper, summary, events, status = code_cells(nb)

    dashboard = mimes(research)[0]
    assert WIDGET in dashboard
    drawn = dashboard["text/html"]  # the saved notebook's fallback: every stage of the table
    assert [s for s in [*load_table().ids(), "done"] if f'data-stage="{s}"' not in drawn] == []
    assert duration(research) < 20, duration(research)  # returns long before the run ends
    assert duration(meanwhile) < PROMPT_S, duration(meanwhile)
    assert "running" in "".join(o.get("text", "") for o in meanwhile.outputs)
    assert duration(wait) > duration(meanwhile)

    shown = mimes(paper)  # the paper's PDF: a line naming it, then its pages as images
    assert "paper.pdf — " in shown[0]["text/markdown"], shown[0]
    assert sum("image/png" in m for m in shown[1:]) >= 2
    table_html = mimes(summary)[0]["text/html"]  # summary.head(): the first condition's rows
    assert "lr=0.05,warmup=0" in table_html and "final_loss" in table_html
    shown_events = mimes(events)[0]["text/plain"]  # the last 5 events of layer 1 alone
    assert "stage.transition" in shown_events, shown_events
    assert not any(t in shown_events for t in ("tool.", "model.", "worker.", "supervisor."))
    final = mimes(status)[0]
    assert 'data-stage="done" data-state="done"' in final["text/html"]
    assert (tmp_path / "paper" / "paper.tex").is_file()
    assert "application/vnd.jupyter.widget-state+json" in nb.metadata.widgets


@pytest.mark.timeout(300)
def test_manual_mode_is_approved_gate_by_gate_with_the_button(tmp_path):
    nb = execute("manual_mode.ipynb", tmp_path)
    assert_no_errors(nb)
    load, research, approve, check, status, process = code_cells(nb)
    assert duration(research) < 20
    printed = "".join(o.get("text", "") for o in approve.outputs)
    assert "['idea.gate', 'experiment.gate', 'paper.review']" in printed
    at_gate = "".join(o.get("text", "") for o in check.outputs)  # api.diff at experiment.gate
    assert "experiment/analysis.md" in at_gate and "experiment/log.md" in at_gate, at_gate
    assert 'data-stage="done" data-state="done"' in mimes(status)[0]["text/html"]
    assert "approved by the user via widget" in mimes(process)[0]["text/markdown"]


@pytest.mark.timeout(400)
def test_handoff_the_researcher_does_the_loop_and_the_project_ends_done(tmp_path):
    nb = execute("handoff.ipynb", tmp_path)
    assert_no_errors(nb)
    load, research, wait, refused, by_hand, deliver, done = code_cells(nb)
    said = "".join(o.get("text", "") for o in refused.outputs)
    assert "'paper.write' is not an allowed next stage of 'experiment.loop'" in said
    assert "experiment/results.csv (missing)" in said and "experiment/log.md (missing)" in said
    assert "finished; the project moved to 'experiment.analyze'" in "".join(
        o.get("text", "") for o in deliver.outputs
    )
    log = (tmp_path / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    started = [line for line in log.splitlines() if '"type":"worker.created"' in line]
    assert started and not [line for line in started if '"stage":"experiment.loop"' in line]
    assert '"by":"researcher"' in log


@pytest.mark.timeout(300)
def test_a_budget_shows_its_cost_in_the_header_and_a_budget_card(tmp_path):
    nb = execute("budget.ipynb", tmp_path)
    assert_no_errors(nb)
    _load, _config, research, card, status, _reply, ended = code_cells(nb)
    assert WIDGET in mimes(research)[0]
    printed = "".join(o.get("text", "") for o in card.outputs)
    assert printed.startswith("Budget: the project budget of 4,000 tokens is spent")
    assert "Spent so far:" in printed and "suggested 8000" in printed
    header = mimes(status)[0]["text/html"]  # the saved fallback: the header's usage chip
    assert 'class="ls-chip ls-usage"' in header and "budget 4,000 tokens" in header
    assert "tokens (est.) · $0.0" in header  # priced by %config .price
    states = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    cards = [m["state"].get("card") for m in states.get("state", {}).values()]
    assert any((c or {}).get("heading", "").startswith("Budget: the project") for c in cards)
    assert "".join(o.get("text", "") for o in ended.outputs).strip() == "failed budget"
