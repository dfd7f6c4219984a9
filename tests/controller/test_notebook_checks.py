"""Notebooks as results: a required notebook is ready only when it is valid and ran to the end
without an error output, and a paper's numbers trace to the notebook cell that printed them.

The notebooks here are executed by nbclient in a real kernel, as a worker's would be.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from lightscientist_jupyter import _fs
from lightscientist_jupyter.controller import checks
from lightscientist_jupyter.values import notebook

ANALYSIS = [
    ("load", "code", "import csv\nrows = list(csv.DictReader(open('results.csv')))\nlen(rows)"),
    ("note", "markdown", "The mean loss over seeds:"),
    (
        "mean",
        "code",
        "mean = sum(float(r['loss']) for r in rows) / len(rows)\n"
        "print(f'mean final loss {mean:.4g}')",
    ),
]


def executed(folder: Path, cells: list[tuple[str, str, str]], name: str = "analysis.ipynb") -> Path:
    """A worker's notebook of `cells` in `folder`, run to the end by nbclient (errors kept)."""
    nb = notebook.new_notebook(cells, "worker 1")
    client = NotebookClient(nb, timeout=60, resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError:
        pass  # the error output stays in the cell, as a worker's failed run saves it
    path = folder / name
    path.write_text(notebook.dumps(nb), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with results.csv and an analysis notebook run over it (one kernel start
    for the module)."""
    root = tmp_path_factory.mktemp("ws")
    folder = root / "experiment"
    folder.mkdir()
    (folder / "results.csv").write_text("seed,loss\n1,0.2\n2,0.35\n3,0.31\n", encoding="utf-8")
    executed(folder, ANALYSIS)
    executed(folder, [*ANALYSIS[:2], ("mean", "code", "print(rows[0]['missing'])")], "bug.ipynb")
    return root


def test_a_paper_number_traces_to_the_cell_that_printed_it(results: Path) -> None:
    paper = results / "paper.md"
    paper.write_text("The mean final loss is 0.2867 over 3 seeds; the worst seed 0.35.\n")
    items = checks.report("numbers:paper.md:experiment", results)
    assert [(i.what, i.ok, i.notebook, i.cell) for i in items] == [
        ("0.2867 (line 1)", True, "experiment/analysis.ipynb", "mean"),
        ("0.35 (line 1)", True, None, None),
    ]
    assert items[0].trace == (
        "experiment/analysis.ipynb cell mean (output 1: mean final loss 0.2867)"
    )
    # 0.35 is in results.csv only (the notebook printed no such number)
    assert items[1].trace == "experiment/results.csv row 3, column loss (0.35)"


def test_a_number_a_failed_cell_would_have_printed_is_not_traced(results: Path) -> None:
    (results / "paper2.md").write_text("Loss 0.2867.\n")
    items = checks.report("numbers:paper2.md:experiment/bug.ipynb", results)
    assert [i.ok for i in items] == [False]


def test_a_required_notebook_is_ready_only_once_run_without_an_error(results: Path) -> None:
    folder = results / "experiment"
    fresh = notebook.new_notebook(ANALYSIS, "worker 1")
    (folder / "unrun.ipynb").write_text(notebook.dumps(fresh), encoding="utf-8")
    (folder / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    problems = _fs.missing_files(
        [
            "experiment/analysis.ipynb",
            "experiment/unrun.ipynb",
            "experiment/bug.ipynb",
            "experiment/broken.ipynb",
        ],
        results,
    )
    assert problems == [
        "experiment/unrun.ipynb (cell 'load' was never run: run the notebook to the end)",
        "experiment/bug.ipynb (cell 'mean' has an error output (KeyError: 'missing'): fix it "
        "and run the notebook again)",
        "experiment/broken.ipynb (is not a notebook (not nbformat JSON: Notebook does not "
        "appear to be JSON: '{\"cells\": ['))",
    ]


def test_the_saved_notebook_is_nbformat_4_5_with_the_given_cell_ids(results: Path) -> None:
    nb = nbformat.read(results / "experiment" / "analysis.ipynb", as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    assert [c.id for c in nb.cells] == ["load", "note", "mean"]
    assert notebook.written_by(nb) == "worker 1"
    assert notebook.unexecuted(nb) == [] and notebook.errors(nb) == []
