"""A notebook's change as text (values/notebook_diff.py) and what the command line shows of a
notebook: `show PATH.ipynb` prints its cells, `diff` its change cell by cell instead of
git's diff of the JSON, other files keeping git's text diff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.analysis_notebooks import PATH, analysis, write

from lightscientist_jupyter import api
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.values.notebook import dumps
from lightscientist_jupyter.values.notebook_diff import notebook_diff
from lightscientist_jupyter.workspace import Workspace
from tests.test_research import cli


@pytest.mark.unit
def test_a_changed_cell_an_added_cell_and_a_new_image_are_named_cell_by_cell():
    old, new = (dumps(analysis(n)).encode() for n in (1, 2))
    lines = notebook_diff(PATH, old, new)
    assert lines is not None
    text = "\n".join(lines)
    assert lines[0] == f"notebook {PATH}: 1 cell changed, 2 added, 1 with new outputs"
    load = text[text.index("## cell load (code): source changed") : text.index("## cell plot")]
    assert f"--- a/{PATH}#load\n+++ b/{PATH}#load" in load
    assert "-mean = 0.91\n+mean = 0.93\n print(f'mean accuracy {mean}')" in load
    assert "-[1] mean accuracy 0.91\n+[1] mean accuracy 0.93" in load
    assert "## cell plot (code): outputs changed\nimage: 1 PNG image changed" in text
    assert "## cell table (code): added" in text and "+print(table)" in text
    assert "+[1] ZeroDivisionError: division by zero" in text
    assert "summary" not in text  # an unchanged cell is left out
    assert '"execution_count"' not in text and "iVBOR" not in text  # no JSON, no base64


@pytest.mark.unit
def test_a_removed_cell_and_a_file_that_is_no_notebook():
    old, new = (dumps(analysis(n)).encode() for n in (2, 1))
    text = "\n".join(notebook_diff(PATH, old, new) or [])
    assert "## cell broken (code): removed\n" in text and "-1 / 0" in text
    assert notebook_diff(PATH, b"{not json", new) is None
    added = notebook_diff(PATH, None, new) or []
    assert added[0] == f"notebook {PATH}: 3 cells added"


@pytest.fixture
def project(tmp_path: Path, small_table) -> Path:
    """A project at stage `gate` whose stage `a` wrote version 1 of the notebook and a note;
    since then version 2 and a changed note stand in the workspace."""
    ws = Workspace.at(tmp_path / "ws")
    controller = ResearchController.create(ws, "find x", mode="manual", table=small_table)
    write(ws.root, 1)
    (ws.root / "out").mkdir()
    (ws.root / "out" / "a.md").write_text("first\n")
    assert controller.finish_stage("a done", ["out/a.md"]).accepted
    write(ws.root, 2)
    (ws.root / "out" / "a.md").write_text("second\n")
    return ws.root


def test_diff_shows_a_notebook_by_cell_and_other_files_as_git_does(project: Path):
    text = api.diff(project, "a")
    assert '"cell_type"' not in text and "iVBOR" not in text
    assert f"notebook {PATH}: 1 cell changed, 2 added, 1 with new outputs" in text
    assert "+mean = 0.93" in text and "image: 1 PNG image changed" in text
    assert "diff --git a/out/a.md b/out/a.md" in text and "-first\n+second" in text
    # in the files' order: experiment/ before out/
    assert text.index(f"notebook {PATH}") < text.index("diff --git a/out/a.md")
    only = api.diff(project, "a", paths=[PATH])
    assert only.startswith(f"notebook {PATH}:") and "out/a.md" not in only
    stat = api.diff(project, "a", stat=True).splitlines()
    assert stat == [
        f" {PATH} | 1 cell changed, 2 added, 1 with new outputs",
        f" {'out/a.md'.ljust(len(PATH))} | 2 +-",
        " 2 files changed, 1 insertion(+), 1 deletion(-) (the notebook by cell)",
    ]
    alone = api.diff(project, "a", stat=True, paths=[PATH]).splitlines()
    assert alone == [
        f" {PATH} | 1 cell changed, 2 added, 1 with new outputs",
        " 1 file changed (the notebook by cell)",
    ]


def test_the_command_line_shows_a_notebook_and_names_one_it_cannot_read(project: Path):
    proc = cli(project, "show", PATH)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"{PATH}: 5 cells\n--- cell load (code) [1]\nimport pandas as pd")
    assert "  >> output 1: mean accuracy 0.93" in out
    assert "--- cell plot (code) [2]" in out and "[image/png, 0 KB]" in out
    assert "ZeroDivisionError: division by zero" in out and "\x1b" not in out

    (project / "bad.ipynb").write_text('{"cells": 3}')
    proc = cli(project, "show", "bad.ipynb")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"lightscientist show: {project}/bad.ipynb is not a notebook")
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr

    diff = [sys.executable, "-m", "lightscientist_jupyter", "diff", "-w", str(project), "a"]
    proc = subprocess.run([*diff, "--", PATH], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "## cell load (code): source changed" in proc.stdout
