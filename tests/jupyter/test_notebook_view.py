"""A notebook in a notebook (jupyter/notebook_view.py): `%lightscientist show x.ipynb` draws
its cells with their ids and outputs, and the gate card and the side panel show a notebook's
change cell by cell — the source diff, what the outputs print, images side by side."""

# ruff: noqa: F811  (the `ip` fixture comes from test_magic_literature)

from __future__ import annotations

import dataclasses
import html
import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from support.analysis_notebooks import BLUE, PATH, RED, b64, png, write

from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.jupyter.diff_card import gate_diff, render
from lightscientist_jupyter.workspace import Workspace
from tests.jupyter.test_magic_literature import ip  # noqa: F401  (a shell with the magic)


@pytest.fixture
def at_gate(tmp_path: Path, small_table) -> Path:
    """A project of `SMALL_TABLE` waiting at its gate, which would approve version 2 of the
    notebook over version 1 (there at the project's start)."""
    ws = Workspace.at(tmp_path / "ws")
    write(ws.root, 1)
    controller = ResearchController.create(ws, "find x", mode="manual", table=small_table)
    write(ws.root, 2)
    for rel in ("out/a.md", "out/brief.md"):
        (ws.root / rel).parent.mkdir(exist_ok=True)
        (ws.root / rel).write_text("done\n")
    assert controller.finish_stage("a done", ["out/a.md"]).accepted
    assert controller.finish_stage("brief", ["out/brief.md"]).accepted
    assert controller.state.pending is not None
    return ws.root


def test_show_draws_each_cell_with_its_id_source_and_outputs(ip, at_gate: Path):
    with capture_output() as cap:
        assert ip.run_line_magic("lightscientist", f'show {PATH} -w "{at_gate}"') is None
    shown = [o.data for o in cap.outputs]
    texts = [d.get("text/markdown", "") for d in shown]
    assert texts[0] == f"**`{PATH}`** — 5 cells"
    assert texts[1] == "<small>cell `load` · code · [1]</small>"
    assert texts[2].startswith("```python\nimport pandas as pd\nmean = 0.93")
    assert shown[3]["text/plain"] == "mean accuracy 0.93\n"
    assert texts[4] == "<small>cell `summary` · markdown</small>"
    assert texts[5] == "## Summary\nThe *mean* is shown."
    assert shown[8]["image/png"] == b64(png(BLUE))  # plot's figure, an image
    broken = texts.index("<small>cell `broken` · code · [4]</small>")
    assert texts[broken + 2] == "**error** in cell `broken`: `ZeroDivisionError: division by zero`"
    assert "ZeroDivisionError" in shown[broken + 3]["text/plain"]  # its traceback


def test_show_of_a_file_that_is_no_notebook_is_one_line_naming_it(ip, at_gate: Path):
    (at_gate / "bad.ipynb").write_text("{not json")
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("lightscientist", f'show bad.ipynb -w "{at_gate}"')
    message = str(caught.value)
    assert message.startswith(f"%lightscientist show: {at_gate}/bad.ipynb is not a notebook")
    assert "\n" not in message
    with pytest.raises(UsageError, match=f"{at_gate}/missing.ipynb does not exist"):
        ip.run_line_magic("lightscientist", f'show missing.ipynb -w "{at_gate}"')


def test_the_gate_card_shows_the_notebook_cell_by_cell_with_images_side_by_side(at_gate: Path):
    """The dashboard's gate widget is sent each changed cell with its diffs and pictures
    (labextension/src/diff.ts draws them); a saved notebook's copy draws the same view."""
    notebook = next(d for d in gate_diff(Workspace.at(at_gate), images=True) if d["path"] == PATH)
    assert notebook["summary"] == "1 cell changed, 2 added, 1 with new outputs"
    cells = {cell["id"]: cell for cell in notebook["cells"]}
    assert "summary" not in cells  # unchanged
    load = cells["load"]
    assert (load["kind"], load["how"]) == ("changed", "source changed")
    assert "-mean = 0.91" in load["source"] and "+mean = 0.93" in load["source"]
    assert "+[1] mean accuracy 0.93" in load["outputs"]
    assert not any('"cell_type"' in line for line in load["source"])  # not git's JSON
    plot = cells["plot"]
    assert plot["kind"] == "outputs"
    assert plot["images"] == {
        "before": [f"data:image/png;base64,{b64(png(RED))}"],
        "after": [f"data:image/png;base64,{b64(png(BLUE))}"],
    }
    assert cells["table"]["kind"] == "added" and "+print(table)" in cells["table"]["source"]
    page = render(notebook)
    assert '<div class="ls-diff-add">+mean = 0.93</div>' in page
    assert 'data-cell="plot" data-kind="outputs"' in page and 'data-cell="summary"' not in page
    # the side panel asks every few seconds: the same cells, without the pictures
    panel = next(d for d in gate_diff(Workspace.at(at_gate), images=False) if d["path"] == PATH)
    assert [c["id"] for c in panel["cells"]] == list(cells)
    assert all("images" not in cell for cell in panel["cells"])


def test_the_side_panel_gets_the_notebook_s_lines_cell_by_cell(at_gate: Path):
    notebook = next(d for d in gate_diff(Workspace.at(at_gate), images=False) if d["path"] == PATH)
    assert notebook["status"] == "changed"
    lines = notebook["lines"]
    assert lines[0] == f"notebook {PATH}: 1 cell changed, 2 added, 1 with new outputs"
    assert "## cell load (code): source changed" in lines and "+mean = 0.93" in lines
    assert "image: 1 PNG image changed" in lines


def test_a_traced_number_links_to_its_cell_and_an_untraced_one_does_not(tmp_path: Path):
    from lightscientist_jupyter.controller.provenance import Item
    from lightscientist_jupyter.jupyter.provenance_links import report_html

    traced = Item("0.93 (line 4)", f"{PATH} cell load (output 1: 'mean accuracy 0.93')", True)
    traced = dataclasses.replace(traced, notebook=PATH, cell="load")
    table = report_html(
        tmp_path,
        [
            ("citations:paper/paper.md", [Item("[@x] (line 1)", "x.bib", True)]),
            ("numbers:paper/paper.md", [traced, Item("0.5 (line 9)", "not found", False)]),
        ],
    )
    assert "citations" not in table  # a citation traces to no cell
    assert table.count("<button") == 1
    args = html.escape(json.dumps({"path": str(tmp_path / PATH), "cell": "load"}), quote=True)
    assert (
        'data-commandlinker-command="lightscientist:open-notebook-cell" '
        f'data-commandlinker-args="{args}"'
    ) in table
    assert (
        '<tr data-ok="no"><td>no</td><td>0.5 (line 9)</td><td>not found</td><td></td></tr>' in table
    )


CHECKED_TABLE = """\
start = "a"

[stages.a]
skill = "skills/a.md"
outputs = ["paper/paper.md"]
next = "done"
allowed = ["done"]
approval = true
checks = ["numbers:paper/paper.md"]
"""


def test_the_gate_card_of_a_checked_stage_links_each_number_to_its_cell(tmp_path, write_table):
    from lightscientist_jupyter.controller import load_table
    from lightscientist_jupyter.jupyter.dashboard.gate import GatePanel

    table = load_table(write_table(tmp_path / "table", CHECKED_TABLE))
    ws = Workspace.at(tmp_path / "ws")
    controller = ResearchController.create(ws, "find x", mode="manual", table=table)
    write(ws.root, 2)
    (ws.root / "paper").mkdir()
    (ws.root / "paper" / "paper.md").write_text("# Result\n\nThe mean accuracy was 0.93.\n")
    assert controller.finish_stage("written", ["paper/paper.md"]).accepted
    panel = GatePanel(lambda *a: "ok", table, ws.root)
    panel.show(controller.state.pending)
    # the panel's own drawing (checks.ts): the kernel names the notebook by its own path,
    # which the cell command makes relative to the server root
    assert panel.actions.card["checks"] == {
        "cells": [{"path": f"{ws.root}/{PATH}", "cell": "load", "numbers": ["0.93 (line 3)"]}],
        "unresolved": [],
    }


def test_the_side_panel_s_gate_lists_each_cell_with_the_numbers_it_printed(tmp_path, write_table):
    from lightscientist_jupyter.controller import load_table
    from lightscientist_jupyter.jupyter.server import answers
    from lightscientist_jupyter.jupyter.server import data as server_data
    from tests.jupyter.test_server_answers_sent import mismatches, sent

    table = load_table(write_table(tmp_path / "table", CHECKED_TABLE))
    ws = Workspace.at(tmp_path / "ws")
    controller = ResearchController.create(ws, "find x", mode="manual", table=table)
    write(ws.root, 2)
    (ws.root / "paper").mkdir()
    (ws.root / "paper" / "paper.md").write_text("Accuracy 0.93, loss 0.777.\n")
    # the paper holds a number no file has: the finish is refused, the researcher approves
    # at the gate a paper fixed by hand
    assert not controller.finish_stage("written", ["paper/paper.md"]).accepted
    (ws.root / "paper" / "paper.md").write_text("Accuracy 0.93.\n")
    assert controller.finish_stage("written", ["paper/paper.md"]).accepted
    (ws.root / "paper" / "paper.md").write_text("Accuracy 0.93, loss 0.777.\n")

    detail = server_data.project_detail(tmp_path, "ws")
    assert not mismatches(sent(detail), answers.ProjectDetail, "detail")
    assert detail["gate_checks"] == {
        "cells": [{"path": f"ws/{PATH}", "cell": "load", "numbers": ["0.93 (line 1)"]}],
        "unresolved": [
            "0.777 (line 1) -> in no result file under experiment (mark it '(not measured)' "
            "if not measured)"
        ],
    }
    # asked again (the panel polls), the checks are not run again while the files are the
    # same; a paper changed since is checked anew
    from lightscientist_jupyter.app.literature import gate_sections

    pending = controller.state.pending
    first = gate_sections(ws.root, table, pending)
    assert gate_sections(ws.root, table, pending) is first
    (ws.root / "paper" / "paper.md").write_text("Accuracy 0.93, loss 0.7770.\n")
    again = gate_sections(ws.root, table, pending)
    assert again is not first and "0.7770 (line 1)" in [i.what for _, items in again for i in items]
    controller.reply(True)
    assert server_data.project_detail(tmp_path, "ws")["gate_checks"] is None
