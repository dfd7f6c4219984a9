"""The notebook of a taken stage: written on take, run as is by a real kernel, and checked on
deliver (a notebook among the outputs must have run every cell without an error)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.controller.handoff_notebook import notebook_path
from lightscientist_jupyter.values import notebook
from lightscientist_jupyter.vocab import DecisionKind, ProjectStatus, ReplySource

TABLE = """\
start = "prep"

[stages.prep]
skill = "skills/prep.md"
outputs = ["data/runs.csv", "data/params.json", "data/notes.md", "data/plot.png"]
next = "study.analyze"
allowed = ["study.analyze"]

[stages."study.analyze"]
skill = "skills/analyze.md"
outputs = ["study/summary.csv", "study/report.md"]
next = "write"
allowed = ["write", "prep"]

[stages.write]
skill = "skills/write.md"
outputs = ["report.md", "paper/figures/fig.png"]
next = "done"
allowed = ["done"]
"""
BRIEF = """\
# study.analyze

## Read first

- `study/report.md` from an earlier visit, if any.

## Write

1. `study/summary.csv`: one row per condition, with mean and std.
2. `study/report.md`: what the numbers say.
"""
NOTEBOOK = "study/study.analyze.ipynb"
ONE_NOTEBOOK = """\
start = "a"

[stages.a]
skill = "a.md"
outputs = ["a/nb.ipynb"]
next = "done"
allowed = ["done"]
"""


@pytest.fixture
def at_analyze(tmp_path, workspace, recorder, write_table) -> ResearchController:
    """A project whose `prep` left real results, now at `study.analyze` (not yet taken)."""
    table = load_table(
        write_table(
            tmp_path / "table",
            TABLE,
            {"skills/prep.md": "# prep\n", "skills/analyze.md": BRIEF, "skills/write.md": "# w\n"},
        )
    )
    c = ResearchController.create(workspace, "Does warmup help?", table=table, bus=recorder.bus)
    data = workspace.root / "data"
    data.mkdir(parents=True)
    (data / "runs.csv").write_text("condition,seed,acc\nwarmup,1,0.91\nnone,1,0.87\n")
    (data / "params.json").write_text(json.dumps({"lr": 0.1, "seeds": [1, 2]}))
    (data / "notes.md").write_text("# Notes\n\nTwo conditions, one seed each.\n")
    (data / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a picture")
    assert c.finish_stage("prep wrote the runs.", ()).accepted
    assert c.stage == "study.analyze"
    return c


def run(path: Path, allow_errors: bool = False) -> nbformat.NotebookNode:
    """Execute the notebook at `path` as JupyterLab would (the kernel in its folder) and save
    it with its outputs, as the researcher does."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute()
    finally:
        nbformat.write(nb, path)
    return nb


def test_the_notebook_sits_in_the_folder_the_outputs_share(default_table, at_analyze):
    assert notebook_path(default_table["experiment.analyze"]) == (
        "experiment/experiment.analyze.ipynb"
    )
    assert notebook_path(default_table["paper.figure"]) == "paper/figures/paper.figure.ipynb"
    assert notebook_path(at_analyze.table["write"]) == "write.ipynb"  # nothing shared: the root


def test_take_writes_a_notebook_of_the_task_that_a_kernel_runs_as_is(at_analyze):
    c = at_analyze
    path = c.workspace.root / NOTEBOOK
    assert c.take().accepted and c.give_back().accepted  # the workers' task has feedback now
    path.unlink()
    taken = c.take(source=ReplySource.CLI)
    assert taken.accepted
    assert taken.message.endswith(f"open it in JupyterLab: {NOTEBOOK}")
    nb = notebook.loads(path.read_text(encoding="utf-8"), NOTEBOOK)
    assert nb.nbformat_minor == 5
    assert [cell.id for cell in nb.cells] == ["task", "inputs", "output-1", "output-2"]
    assert notebook.written_by(nb) is None and notebook.OWNER_KEY not in nb.metadata
    task = nb.cells[0].source
    for said in (
        "`study.analyze`",
        "Does warmup help?",
        "- `study/summary.csv`",
        "## Feedback for this stage",
        "The researcher worked on 'study.analyze' by hand and gave it back",
        "2. `study/report.md`: what the numbers say.",  # the brief itself
        "--next write",
    ):
        assert said in task
    assert "# the brief: 1. `study/summary.csv`: one row per condition" in nb.cells[2].source
    assert "summary_path = root / 'study/summary.csv'" in nb.cells[2].source

    ran = run(path)  # raises CellExecutionError on any error
    assert notebook.executed_problem(notebook.dumps(ran), NOTEBOOK) is None
    shown = "\n".join(p.text for p in notebook.printed(ran) if p.cell_id == "inputs")
    assert "warmup" in shown and "0.91" in shown  # the runs, read with pandas
    assert "Two conditions, one seed each." in shown  # the notes, printed
    assert not (c.workspace.root / "study" / "summary.csv").exists()  # stubs write nothing


def test_a_notebook_already_there_is_never_written_over(at_analyze):
    c = at_analyze
    assert c.take().accepted
    path = c.workspace.root / NOTEBOOK
    mine = path.read_text(encoding="utf-8").replace("what the numbers say", "my own words")
    path.write_text(mine, encoding="utf-8")
    assert c.give_back().accepted
    assert c.take().accepted
    assert path.read_text(encoding="utf-8") == mine


def test_a_give_back_names_the_notebook_only_when_the_researcher_touched_it(at_analyze):
    c = at_analyze
    assert c.take().accepted
    assert "they see what you wrote: no files yet" in c.give_back().message
    assert c.take().accepted
    run(c.workspace.root / NOTEBOOK)
    assert f"they see what you wrote: {NOTEBOOK}" in c.give_back().message


def test_a_stage_entered_as_marked_gets_its_notebook_too(at_analyze, advance):
    c = at_analyze
    assert c.take("write").accepted  # later: when the project reaches it
    assert not (c.workspace.root / "write.ipynb").exists()
    advance(c)
    assert (c.stage, c.pending_kind) == ("write", DecisionKind.HANDOFF)
    run(c.workspace.root / "write.ipynb")  # at the root: the workspace is '.'


def test_deliver_refuses_a_notebook_not_run_or_with_an_error_and_accepts_an_executed_one(
    at_analyze, produce
):
    c = at_analyze
    assert c.take().accepted
    produce(c)
    before = (len(c.state.decisions), c.workspace.process_md.read_text(encoding="utf-8"))

    unrun = c.deliver("Done by hand.", outputs=[NOTEBOOK], source=ReplySource.CLI)
    assert not unrun.accepted
    assert f"{NOTEBOOK} (cell 'inputs' was never run: run the notebook to the end)" in (
        unrun.message
    )
    assert (c.status, c.pending_kind) == (ProjectStatus.WAITING_USER, DecisionKind.HANDOFF)
    assert (len(c.state.decisions), c.workspace.process_md.read_text(encoding="utf-8")) == before

    path = c.workspace.root / NOTEBOOK
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source += '\nraise ValueError("no seeds left")'
    nbformat.write(nb, path)
    with pytest.raises(CellExecutionError):
        run(path)
    failed = c.deliver("Done by hand.", outputs=[NOTEBOOK])
    assert not failed.accepted
    assert (
        f"{NOTEBOOK} (cell 'output-1' has an error output (ValueError: no seeds left)"
        in failed.message
    )
    assert c.pending_kind == DecisionKind.HANDOFF

    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = nb.cells[2].source.replace('raise ValueError("no seeds left")', "")
    nbformat.write(nb, path)
    run(path)
    done = c.deliver("Done by hand.", outputs=[NOTEBOOK])
    assert done.accepted, done.message
    assert c.stage == "write"
    assert NOTEBOOK in c.workspace.process_md.read_text(encoding="utf-8")


def test_a_required_notebook_is_checked_alike_for_a_workers_finish(
    tmp_path, workspace, recorder, write_table
):
    """The rule lives where a finish reads the disk, so workers and the researcher agree."""
    table = load_table(write_table(tmp_path / "t", ONE_NOTEBOOK))
    c = ResearchController.create(workspace, "g", table=table, bus=recorder.bus)
    nb = notebook.new_notebook([("c1", "code", "print(1)")], written_by="worker-1")
    (workspace.root / "a").mkdir()
    (workspace.root / "a" / "nb.ipynb").write_text(notebook.dumps(nb), encoding="utf-8")
    refused = c.finish_stage("ran it", ())
    assert not refused.accepted
    assert "a/nb.ipynb (cell 'c1' was never run" in refused.message
    assert "call finish_stage again" in refused.message
