"""A notebook in a notebook (jupyter/notebook_view.py): `%lightscientist show x.ipynb` draws
its cells with their ids and outputs, and the gate card and the side panel show a notebook's
change cell by cell — the source diff, what the outputs print, images side by side."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from support.analysis_notebooks import BLUE, PATH, RED, b64, png, write

from lightscientist_jupyter import api
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.jupyter.diff_card import card_html, panel_changes
from lightscientist_jupyter.workspace import Workspace


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lightscientist_jupyter")
    yield shell
    api.stop_all()


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
    card = card_html(at_gate)
    start = card.index(f"<code>{PATH}</code></b> — changed")
    notebook = card[start : card.index("ls-diff-file", start)]
    assert "1 cell changed, 2 added, 1 with new outputs" in notebook
    assert '"cell_type"' not in notebook  # not git's JSON
    load = notebook[notebook.index('data-cell="load" data-kind="changed"') :]
    load = load[: load.index('data-cell="plot"')]
    assert '<div class="ls-diff-del">-mean = 0.91</div>' in load
    assert '<div class="ls-diff-add">+mean = 0.93</div>' in load
    assert '<div class="ls-diff-add">+[1] mean accuracy 0.93</div>' in load
    plot = notebook[notebook.index('data-cell="plot" data-kind="outputs"') :]
    plot = plot[: plot.index("</figure></div>") + len("</figure></div>")]
    before, after = plot.split("<figure>")[1:]
    assert f'src="data:image/png;base64,{b64(png(RED))}"' in before and "before" in before
    assert f'src="data:image/png;base64,{b64(png(BLUE))}"' in after and "after" in after
    assert 'data-cell="table" data-kind="added"' in notebook
    assert html.escape("+print(table)") in notebook
    assert 'data-cell="summary"' not in notebook  # unchanged


def test_the_side_panel_gets_the_notebook_s_lines_cell_by_cell(at_gate: Path):
    notebook = next(d for d in panel_changes(Workspace.at(at_gate)) if d["path"] == PATH)
    assert notebook["status"] == "changed"
    lines = notebook["lines"]
    assert lines[0] == f"notebook {PATH}: 1 cell changed, 2 added, 1 with new outputs"
    assert "## cell load (code): source changed" in lines and "+mean = 0.93" in lines
    assert "image: 1 PNG image changed" in lines
