"""A paper's number opens the notebook at the cell that printed it, in a real JupyterLab
(headless Chromium): `%lightscientist check` in a notebook, and the side panel at a gate
whose stage checks the paper's numbers, list the number with a button; the button runs
`lightscientist:open-notebook-cell`, and `experiment/analysis.ipynb` opens
with that cell — forty cells down — active and in view. The command is in the palette too.
Screenshots go to `test-output/`.

The server is given this checkout's built extension first on `JUPYTER_PATH` when there is
one (`jlpm build` in `labextension/`), so a worktree tests its own front end, not whichever
one the environment installed.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from support.browser import (
    EXTENSION,
    OUTPUT,
    REPO,
    lab_page,
    open_panel,
    require_browser,
    run_all_cells,
    start_lab,
)

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.values.notebook import dumps, new_notebook
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser

FILLER = 40
"""Cells before the traced one: far enough down that it must be scrolled to."""


def analysis() -> nbformat.NotebookNode:
    """An executed notebook: `FILLER` cells printing words, then `table` printing 0.9375."""
    cells = [(f"step-{i}", "code", f"print('step done')  # filler {i}") for i in range(FILLER)]
    cells += [("table", "code", "print('accuracy', 0.9375)  # the table"), ("end", "code", "")]
    nb = new_notebook(cells, "worker-1")
    for count, cell in enumerate(nb.cells[:-1], start=1):
        text = "accuracy 0.9375\n" if cell.id == "table" else "step done\n"
        cell.execution_count = count
        cell.outputs = [nbformat.v4.new_output("stream", text=text)]
    return nb


def own_build(scratch: Path) -> dict[str, str]:
    """The server's environment with this checkout's extension first on `JUPYTER_PATH`."""
    built = REPO / "lightscientist_jupyter" / "labextension"
    if not (built / "package.json").is_file():
        return dict(os.environ)
    path = scratch / "jupyter-path"
    (path / "labextensions").mkdir(parents=True)
    (path / "labextensions" / EXTENSION).symlink_to(built)
    before = os.environ.get("JUPYTER_PATH")
    return {**os.environ, "JUPYTER_PATH": os.pathsep.join(filter(None, [str(path), before]))}


GATED_TABLE = """\
start = "write"

[stages.write]
skill = "skills/write.md"
outputs = ["paper/paper.md"]
next = "done"
allowed = ["done"]
approval = true
checks = ["numbers:paper/paper.md"]
"""


def at_gate(folder: Path, table: Path) -> None:
    """A project waiting at the gate of a stage whose paper's number a notebook cell printed."""
    project = ResearchController.create(
        Workspace.at(folder), "find x", mode="manual", table=load_table(table)
    )
    (folder / "experiment").mkdir()
    (folder / "experiment" / "analysis.ipynb").write_text(dumps(analysis()))
    (folder / "paper").mkdir()
    (folder / "paper" / "paper.md").write_text("Accuracy reached 0.9375.\n")
    assert project.finish_stage("written", ["paper/paper.md"]).accepted


@pytest.fixture
def lab(tmp_path: Path, write_table):
    require_browser()
    table = write_table(tmp_path / "table", GATED_TABLE)
    root = tmp_path / "root"
    (root / "ws" / "experiment").mkdir(parents=True)
    (root / "ws" / "paper").mkdir()
    (root / "ws" / "experiment" / "analysis.ipynb").write_text(dumps(analysis()))
    (root / "ws" / "paper" / "paper.md").write_text("# Result\n\nAccuracy reached 0.9375.\n")
    checking = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)"}}
    )
    checking.cells = [
        nbformat.v4.new_code_cell("%load_ext lightscientist_jupyter"),
        nbformat.v4.new_code_cell("%lightscientist check paper/paper.md -w ws"),
    ]
    nbformat.write(checking, root / "check.ipynb")
    at_gate(root / "gated", table)
    with start_lab(root, tmp_path, env=own_build(tmp_path)) as server:
        yield server


def sees_the_table_cell_active(page) -> None:
    from playwright.sync_api import expect

    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
    expect(tab).to_contain_text("analysis.ipynb", timeout=30_000)
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
    active = notebook.locator(".jp-Cell.jp-mod-active")
    expect(active).to_have_count(1)
    # JupyterLab draws a cell's editor once it is scrolled into view: on a loaded machine
    # that takes more than the default 5 s (CI saw it empty at 5 s, once)
    expect(active.locator(".jp-InputArea-editor")).to_contain_text("# the table", timeout=30_000)
    expect(active).to_be_in_viewport(timeout=30_000)


def test_a_traced_number_opens_the_notebook_at_its_cell(lab):
    from playwright.sync_api import expect

    logs = {"lab": lab.output}
    with lab_page(lab.url, lab.token, "notebook-cell-failure.png", logs) as page:
        run_all_cells(page, lab, "check.ipynb")
        button = page.locator(".jp-OutputArea-output table.ls-checks button.ls-cell-link")
        expect(button).to_have_text("table", timeout=60_000)
        expect(button).to_have_attribute(
            "aria-label", "open experiment/analysis.ipynb at cell table"
        )
        button.click()
        sees_the_table_cell_active(page)
        page.screenshot(path=str(OUTPUT / "notebook-cell.png"))

        # the command is in the palette too (it asks for the path and the cell there)
        page.keyboard.press("Control+Shift+C")
        page.locator(".lm-CommandPalette-input").fill("open notebook at cell")
        item = page.locator(".lm-CommandPalette-item", has_text="LightScientist")
        expect(item).to_contain_text("LightScientist: Open Notebook at Cell")


def test_the_side_panel_s_gate_opens_the_notebook_at_the_cell_of_a_number(lab):
    from playwright.sync_api import expect

    with lab_page(lab.url, lab.token, "panel-cell-failure.png", {"lab": lab.output}) as page:
        panel = open_panel(page)
        panel.locator(".ls-project[data-path='gated']").click()
        checks = panel.locator(".ls-gate-checks")
        expect(checks).to_contain_text("analysis.ipynb · cell table: 0.9375 (line 1)")
        checks.locator("button.ls-cell-link").click()
        sees_the_table_cell_active(page)
