"""A worker's notebook open in the researcher's JupyterLab changes in the page, never on disk
underneath it: a real JupyterLab in headless Chromium, with and without real-time
collaboration (jupyter-collaboration), and the workers' real notebook tools.

The researcher opens `experiment/analysis.ipynb`, which a worker made, and types into one
cell without saving. The worker then edits another cell and adds one: both appear in the
open notebook, the researcher's typing stays, JupyterLab saves the file itself, and its next
save raises no "File Changed". A worker's edit of the very cell the researcher is typing in
is refused, naming that cell, and changes nothing. Screenshots go to `test-output/`.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.browser import OUTPUT, lab_page, require_browser, start_lab

from lightscientist_jupyter import open_notebooks
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.runtime.notebook_tools import Notebooks
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values import notebook as nbv
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser

NB = "experiment/analysis.ipynb"


def saved_source(folder: Path, cell_id: str) -> str:
    nb = nbv.loads((folder / NB).read_text(), NB)
    return str(nb.cells[nbv.cell_index(nb, cell_id, NB)].source)


@pytest.mark.parametrize("collaboration", [False, True], ids=["plain", "collaboration"])
def test_a_workers_change_reaches_the_open_notebook_through_the_page(tmp_path, collaboration):
    from playwright.sync_api import expect

    require_browser()
    root = tmp_path / "root"
    folder = root / "project"
    ResearchController.create(Workspace.at(folder), "find x", mode="manual")
    groups = ProcessGroups()
    shell = WorkerShell.of(folder, "w-nb", threading.Event(), ShellPolicy(sandbox=False))
    books = Notebooks(folder, groups, lambda: shell)
    made = books.create(
        NB,
        [
            {"id": "intro", "cell_type": "markdown", "source": "# Warmup"},
            {"id": "load", "source": "x = 1"},
            {"id": "show", "source": "print(x)"},
        ],
    )
    assert made.startswith(f"created {NB}: 3 cells") and "JupyterLab" not in made
    name = "open-notebook" + ("-rtc" if collaboration else "")
    logs: dict = {}
    # with collaboration, the server saves a shared document a second after a change: the
    # researcher's typing is unsaved here for as long as the test needs it to be
    later = ["--YDocExtension.document_save_delay=600"] if collaboration else []
    with start_lab(root, tmp_path, collaboration=collaboration, args=later) as lab:
        logs["lab"] = lab.output
        with lab_page(lab.url, lab.token, f"{name}-failure.png", logs) as page:
            page.goto(lab.page_url(f"lab/tree/project/{NB}"))
            cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell")
            expect(cells).to_have_count(3, timeout=60_000)
            tree = Beneath(folder)
            deadline = 30
            for _ in range(deadline * 10):
                if open_notebooks.pages_with(tree, NB):
                    break
                page.wait_for_timeout(100)
            assert open_notebooks.pages_with(tree, NB), "the page never said the notebook is open"

            # the researcher types in the last cell and does not save
            editor = cells.nth(2).locator(".cm-content")
            editor.click()
            page.keyboard.press("End")
            page.keyboard.type("  # mine")
            expect(editor).to_have_text("print(x)  # mine")

            answers: list[str] = []
            worker = threading.Thread(
                target=lambda: answers.extend(
                    [
                        books.edit_cell(NB, "load", "x = 2"),
                        books.add_cell(NB, "y = x * 10", after="load", cell_id="more"),
                    ]
                )
            )
            worker.start()
            worker.join(60)
            assert not worker.is_alive(), "the worker's tools never came back"
            edited, added = answers
            assert edited == (
                f"edited cell 'load' of {NB} (it is open in JupyterLab: changed and saved there) "
                "(its outputs cleared); run it with notebook_run"
            )
            assert added.endswith("4 cells (it is open in JupyterLab: changed and saved there)")

            expect(cells).to_have_count(4)
            expect(cells.nth(1).locator(".cm-content")).to_have_text("x = 2")
            expect(cells.nth(2).locator(".cm-content")).to_have_text("y = x * 10")
            expect(cells.nth(3).locator(".cm-content")).to_have_text("print(x)  # mine")
            # JupyterLab saved it: the worker's cells and the researcher's typing are on disk
            assert saved_source(folder, "load") == "x = 2"
            assert saved_source(folder, "more") == "y = x * 10"
            assert saved_source(folder, "show") == "print(x)  # mine"
            assert nbv.written_by(nbv.loads((folder / NB).read_text(), NB)) == "w-nb"

            # the cell the researcher is typing in is theirs until they save
            mine = cells.nth(1).locator(".cm-content")
            mine.click()
            page.keyboard.press("End")
            page.keyboard.type("  # tuned")
            refused = books.edit_cell(NB, "load", "x = 3")
            assert refused == (
                f"notebook_edit_cell: {NB} was not changed: the researcher is editing cell "
                "'load' of it in JupyterLab and has not saved; change other cells, or try "
                "again later"
            )
            expect(mine).to_have_text("x = 2  # tuned")
            assert saved_source(folder, "load") == "x = 2"

            # the researcher's own save goes through without a "File Changed" dialog
            page.keyboard.press("Control+s")
            for _ in range(100):
                try:  # JupyterLab's save may be half-way through the file
                    if saved_source(folder, "load") == "x = 2  # tuned":
                        break
                except nbv.NotebookProblem:
                    pass
                page.wait_for_timeout(100)
            assert saved_source(folder, "load") == "x = 2  # tuned"
            expect(page.locator(".jp-Dialog")).to_have_count(0)

            # a cell the researcher deleted and has not saved is theirs too
            cells.nth(2).locator(".jp-InputPrompt").click()
            page.keyboard.press("Escape")
            page.keyboard.press("d")
            page.keyboard.press("d")
            expect(cells).to_have_count(3)
            refused = books.edit_cell(NB, "more", "y = x * 100")
            assert "the researcher is editing cell 'more' of it in JupyterLab" in refused
            expect(cells).to_have_count(3)
            assert saved_source(folder, "more") == "y = x * 10"
            page.screenshot(path=str(OUTPUT / f"{name}.png"))
            # and the notebook was a shared document exactly when collaboration was on
            shared = [line for line in lab.output.lines if "YDocExtension" in line]
            assert bool(shared) == collaboration, shared
            assert not list((folder / open_notebooks.CHANGES_DIR).iterdir())
    groups.kill_all()
