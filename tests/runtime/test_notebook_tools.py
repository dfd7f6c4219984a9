"""The workers' notebook tools (runtime/notebook_tools.py): real notebooks in a real workspace,
run by a real kernel inside the worker's bubblewrap sandbox; what a worker reads is each tool's
one message."""

from __future__ import annotations

import json
import re
import threading
import uuid
from pathlib import Path

import pytest
from support.chat_server import answer, tool_call
from support.outside_net import HostListener, host_address
from support.runtime import finish

from lightscientist_jupyter.runtime.notebook_tools import Notebooks
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.values import notebook as nbv
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.usefixtures("needs_bwrap")

NB = "experiment/analysis.ipynb"
CELLS = [
    {"cell_type": "markdown", "source": "# Warmup runs"},
    {
        "id": "load",
        "source": "import os\nruns = {'lr': [0.1, 0.2], 'loss': [1.5, 1.25]}\nprint(os.getcwd())",
    },
    {"id": "summary", "source": "print(sum(runs['loss']) / len(runs['loss']))"},
    {
        "id": "plot",
        "source": "import matplotlib.pyplot as plt\nplt.plot(runs['lr'], runs['loss'])\nplt.show()",
    },
]
RUN_OK = re.compile(
    r"ran experiment/analysis\.ipynb: 3 code cells, no error \(saved with outputs\), \d+\.\d s"
)


@pytest.fixture
def books(ws: Workspace):
    groups = ProcessGroups()
    shell = WorkerShell.of(ws.root, "w-nb", threading.Event(), ShellPolicy(sandbox=True))
    yield Notebooks(ws.root, groups, lambda: shell)
    groups.kill_all()


def saved(ws: Workspace, path: str = NB):
    return nbv.loads((ws.root / path).read_text(), path)


def outputs_of(nb, cell_id: str) -> list[str]:
    cell = nb.cells[nbv.cell_index(nb, cell_id, "nb")]
    return [nbv.output_text(o) or "" for o in cell.outputs]


@pytest.mark.slow
def test_a_created_notebook_runs_in_its_folder_and_is_saved_with_its_outputs(ws, books):
    message = books.create(NB, CELLS)
    assert message == (
        "created experiment/analysis.ipynb: 4 cells (cell-1, load, summary, plot); "
        "run it with notebook_run"
    )
    nb = saved(ws)
    assert nbv.written_by(nb) == "w-nb"
    assert nbv.unexecuted(nb) == ["load", "summary", "plot"]

    assert RUN_OK.fullmatch(books.run(NB))
    nb = saved(ws)
    assert nbv.executed_problem((ws.root / NB).read_text(), NB) is None
    assert [c.get("execution_count") for c in nb.cells] == [None, 1, 2, 3]
    assert outputs_of(nb, "load") == [f"{ws.root}/experiment\n"]  # as JupyterLab: its folder
    assert outputs_of(nb, "summary") == ["1.375\n"]
    images = [o for o in nb.cells[3].outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1  # figures inline, as in JupyterLab
    assert re.search(r">> output 1: .*\n +\[image/png, \d+ KB\]", books.read(NB))
    assert nbv.written_by(nb) == "w-nb"


def test_a_notebook_run_twice_is_saved_byte_for_byte_the_same(ws, books):
    books.create(NB, CELLS[:3])
    books.run(NB)
    first = (ws.root / NB).read_bytes()
    books.run(NB)
    assert (ws.root / NB).read_bytes() == first  # no timings, no kernel ids


def test_cells_are_added_edited_and_deleted_by_id(ws, books):
    books.create(NB, CELLS[1:3])
    assert books.add_cell(NB, "print('first')", after=None, cell_id="intro") == (
        "added cell 'intro' (code) to experiment/analysis.ipynb at the end: 3 cells"
    )
    assert books.add_cell(NB, "## Mean", cell_type="markdown", after="load") == (
        "added cell 'cell-4' (markdown) to experiment/analysis.ipynb after 'load': 4 cells"
    )
    assert [c.id for c in saved(ws).cells] == ["load", "cell-4", "summary", "intro"]
    assert books.add_cell(NB, "x", cell_id="load") == (
        "cell id 'load' is taken: give another or edit that cell"
    )
    assert books.add_cell(NB, "x", after="nowhere").startswith(
        "experiment/analysis.ipynb has no cell 'nowhere' (its cells: load, cell-4, summary, intro)"
    )

    books.run(NB)
    assert outputs_of(saved(ws), "summary") == ["1.375\n"]
    assert books.edit_cell(NB, "summary", "print(max(runs['loss']))") == (
        "edited cell 'summary' of experiment/analysis.ipynb (its outputs cleared); "
        "run it with notebook_run"
    )
    nb = saved(ws)
    assert nb.cells[2].source == "print(max(runs['loss']))"
    assert outputs_of(nb, "summary") == [] and nb.cells[2].execution_count is None
    assert outputs_of(nb, "intro") == ["first\n"]  # the other cells keep theirs

    assert books.delete_cell(NB, "intro") == (
        "deleted cell 'intro' from experiment/analysis.ipynb: 3 cells left"
    )
    assert [c.id for c in saved(ws).cells] == ["load", "cell-4", "summary"]
    assert books.delete_cell(NB, "intro").startswith(
        "experiment/analysis.ipynb has no cell 'intro'"
    )


def test_a_failing_cell_is_named_with_its_error_and_fixed_by_id(ws, books):
    books.create(NB, [CELLS[1], {"id": "summary", "source": "print(runs['mean'])"}, CELLS[3]])
    message = books.run(NB)
    assert message.splitlines() == [
        "cell 'summary' raised KeyError: 'mean'",
        "Cell In[2], line 1",
        "----> 1 print(runs['mean'])",
        "KeyError: 'mean'",
        "outputs saved up to cell 'summary'; the 1 cell after it did not run",
        "fix cell 'summary' with notebook_edit_cell and run again",
    ]
    nb = saved(ws)
    assert nbv.errors(nb) == [("summary", "KeyError: 'mean'")]
    assert outputs_of(nb, "load") == [f"{ws.root}/experiment\n"]
    assert nbv.unexecuted(nb) == ["plot"]  # after the failing cell nothing ran
    assert nbv.executed_problem((ws.root / NB).read_text(), NB) == (
        "experiment/analysis.ipynb: cell 'summary' has an error output (KeyError: 'mean'): "
        "fix it and run the notebook again"
    )

    books.edit_cell(NB, "summary", "print(sum(runs['loss']) / len(runs['loss']))")
    assert RUN_OK.fullmatch(books.run(NB))
    assert nbv.executed_problem((ws.root / NB).read_text(), NB) is None


def test_an_error_deep_in_a_call_shows_the_cells_line_and_the_last_frame(ws, books):
    source = "def mean(xs):\n    return sum(xs) / len(xs)\n\nmean([])"
    books.create(NB, [{"id": "empty", "source": source}])
    lines = books.run(NB).splitlines()
    assert lines[0] == "cell 'empty' raised ZeroDivisionError: division by zero"
    assert "----> 4 mean([])" in lines  # the line of the cell that called
    assert "----> 2     return sum(xs) / len(xs)" in lines  # where it raised
    assert not any("\x1b[" in line for line in lines)


@pytest.mark.slow
def test_only_the_cells_named_run_in_notebook_order(ws, books):
    books.create(NB, CELLS)
    books.run(NB)
    books.edit_cell(NB, "summary", "print(min(runs['loss']))")
    message = books.run(NB, cells=["summary", "load"])
    assert re.fullmatch(
        r"ran experiment/analysis\.ipynb: 2 of 3 code cells \(load, summary\), no error "
        r"\(saved with outputs\), \d+\.\d s",
        message,
    )
    nb = saved(ws)
    assert outputs_of(nb, "summary") == ["1.25\n"]
    assert [c.get("execution_count") for c in nb.cells] == [None, 1, 2, 3]  # plot's, from before

    alone = books.run(NB, cells=["summary"]).splitlines()
    assert alone[0] == "cell 'summary' raised NameError: name 'runs' is not defined"
    assert "only the cells named ran, in a fresh kernel: name the cells they need too" in alone
    assert books.run(NB, cells=["cell-1"]) == (
        "experiment/analysis.ipynb has no code cell to run among those named"
    )
    assert books.run(NB, cells=["nope"]).startswith("experiment/analysis.ipynb has no cell 'nope'")


def test_a_researchers_notebook_is_read_but_never_changed(ws, books):
    theirs = nbv.new_notebook([("mine", "code", "print('by hand')")], written_by="")
    del theirs.metadata[nbv.OWNER_KEY]
    text = nbv.dumps(theirs)
    (ws.root / "theirs.ipynb").write_text(text)
    refusal = (
        "{tool} refused theirs.ipynb: it is not a notebook a worker made (workers only change "
        "notebooks of their own); read it with notebook_read, or make another with "
        "notebook_create"
    )
    assert books.read("/theirs.ipynb").startswith("theirs.ipynb: 1 cells\n--- cell mine (code)")
    calls = {
        "notebook_create": lambda: books.create("theirs.ipynb", CELLS),
        "notebook_edit_cell": lambda: books.edit_cell("theirs.ipynb", "mine", "1/0"),
        "notebook_add_cell": lambda: books.add_cell("theirs.ipynb", "1/0"),
        "notebook_delete_cell": lambda: books.delete_cell("theirs.ipynb", "mine"),
        "notebook_run": lambda: books.run("theirs.ipynb"),
    }
    for tool, call in calls.items():
        assert call() == refusal.format(tool=tool)
    (ws.root / "notes.ipynb").write_text("my notes, not JSON")
    assert books.create("notes.ipynb", CELLS) == refusal.format(tool="notebook_create").replace(
        "theirs", "notes"
    )
    assert (ws.root / "theirs.ipynb").read_text() == text
    assert (ws.root / "notes.ipynb").read_text() == "my notes, not JSON"
    assert books.read("notes.ipynb").startswith("notes.ipynb is not a notebook (not nbformat JSON")


def test_a_notebook_a_worker_made_is_rewritten_by_create(ws, books):
    books.create(NB, CELLS)
    assert books.create(NB, CELLS[1:2]).startswith(
        "created experiment/analysis.ipynb: 1 cell (load)"
    )
    assert [c.id for c in saved(ws).cells] == ["load"]


def test_paths_outside_links_and_other_files_are_refused_in_one_line(ws, books, tmp_path):
    outside = tmp_path / "outside.ipynb"
    outside.write_text(nbv.dumps(nbv.new_notebook([("a", "code", "1")], "w-other")))
    before = outside.read_text()
    (ws.root / "planted.ipynb").symlink_to(outside)
    (ws.root / "linked").symlink_to(tmp_path)
    (ws.root / ".lightscientist").mkdir(exist_ok=True)
    for call, expected in [
        (lambda: books.read("planted.ipynb"), "notebook_read refused planted.ipynb: "),
        (lambda: books.run("planted.ipynb"), "notebook_run refused planted.ipynb: "),
        (lambda: books.create("planted.ipynb", CELLS), "notebook_create refused planted.ipynb: "),
        (lambda: books.edit_cell("planted.ipynb", "a", "2"), "notebook_edit_cell refused "),
        (lambda: books.read("linked/outside.ipynb"), "notebook_read refused linked/outside.ipynb"),
        (lambda: books.read("../outside.ipynb"), "notebook_read refused ../outside.ipynb: "),
        (lambda: books.read("~/x.ipynb"), "notebook_read refused ~/x.ipynb: "),
        (lambda: books.create("notes.txt", CELLS), "notebook_create refused notes.txt: give a"),
        (
            lambda: books.create(".lightscientist/x.ipynb", CELLS),
            "notebook_create refused .lightscientist/x.ipynb: .lightscientist/ belongs to",
        ),
    ]:
        message = call()
        assert message.startswith(expected), message
        assert "\n" not in message and "Traceback" not in message
    assert "symbolic link" in books.run("planted.ipynb")
    assert outside.read_text() == before
    assert (ws.root / "planted.ipynb").is_symlink()
    home = books.shell_of().home
    (home / "notebooks").symlink_to(tmp_path)
    books.create("ok.ipynb", CELLS[1:2])
    message = books.run("ok.ipynb")
    assert message.startswith(f"notebook_run ok.ipynb did not run: {home}/notebooks"), message
    assert "symbolic link" in message and "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.ipynb", "ws"]
    assert books.read("experiment/none.ipynb") == (
        "experiment/none.ipynb does not exist: make it with notebook_create"
    )
    assert books.create(NB, [{"id": "bad id!", "source": "1"}]) == (
        "experiment/analysis.ipynb was not written: cell id 'bad id!': use 1-64 letters, "
        "digits, '-' or '_' (nbformat 4.5)"
    )


def test_the_notebooks_kernel_cannot_read_the_users_home_or_reach_the_network(ws, books):
    secret = f"TOPSECRET-{uuid.uuid4().hex}"
    planted = Path.home() / f".ls-notebook-secret-{uuid.uuid4().hex[:8]}"
    planted.write_text(secret)
    listener = HostListener()
    probe = (
        "import socket\n"
        "def reach(family, address):\n"
        "    s = socket.socket(family)\n"
        "    s.settimeout(3)\n"
        "    try:\n"
        "        s.connect(address)\n"
        "        return 'reached ' + s.recv(64).decode()\n"
        "    except OSError as exc:\n"
        "        return type(exc).__name__\n"
        f"for target in [('127.0.0.1', {listener.port}), ('{host_address()}', {listener.port})]:\n"
        "    print(reach(socket.AF_INET, target))\n"
        f"print(reach(socket.AF_UNIX, '\\0{listener.abstract}'))\n"
    )
    try:
        books.create(
            NB,
            [
                {"id": "home", "source": f"print(open({str(planted)!r}).read())"},
                {"id": "net", "source": probe},
            ],
        )
        message = books.run(NB)
        assert message.startswith("cell 'home' raised FileNotFoundError: [Errno 2]"), message
        books.edit_cell(NB, "home", f"import os\nprint(os.path.exists({str(planted)!r}))")
        assert books.run(NB).startswith("ran experiment/analysis.ipynb: 2 code cells, no error")
        nb = saved(ws)
        assert outputs_of(nb, "home") == ["False\n"]
        reached = outputs_of(nb, "net")[0].split()
        assert len(reached) == 3 and "reached" not in reached, reached
        assert listener.accepted == []
        assert secret not in (ws.root / NB).read_text()
    finally:
        planted.unlink()
        listener.close()


def fix_the_notebook(body: dict) -> dict:
    """A worker that writes a notebook with a bug, runs it, edits the cell the run named and
    runs it again, then completes."""
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if not results:
        cells = [CELLS[1], {"id": "summary", "source": "print(runs['mean'])"}, CELLS[3]]
        return tool_call("notebook_create", path="/experiment/analysis.ipynb", cells=cells)
    if len(results) in (1, 3):
        return tool_call("notebook_run", path="experiment/analysis.ipynb")
    if len(results) == 2:
        named = re.match(r"cell '([\w-]+)' raised KeyError", results[1])
        assert named is not None, results[1]
        return tool_call(
            "notebook_edit_cell",
            path="experiment/analysis.ipynb",
            cell_id=named.group(1),
            source="print(sum(runs['loss']) / len(runs['loss']))",
        )
    if len(results) == 4:
        return tool_call(
            "complete_stage",
            summary="analysis ran",
            outputs=["experiment/analysis.ipynb"],
            next_stage="",
        )
    return answer("done")


@pytest.mark.slow
def test_a_worker_fixes_the_cell_the_run_names(chat_server, chat_model, make_runtime, ws):
    chat_server.answer_with(fix_the_notebook)
    runtime = make_runtime(chat_model, retries=0, shell_policy=ShellPolicy(sandbox=True))
    worker = runtime.start(WorkerSpec(message="Analyse the runs.", stage="experiment.loop"))
    record = finish(runtime, worker, timeout=120)
    assert record["status"] == "completed", record
    results = [m["content"] for m in chat_server.requests[-1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("created experiment/analysis.ipynb: 3 cells (load, summary, plot)")
    assert results[1].startswith("cell 'summary' raised KeyError: 'mean'\n")
    assert results[1].endswith("fix cell 'summary' with notebook_edit_cell and run again")
    assert RUN_OK.fullmatch(results[3])
    text = (ws.root / NB).read_text()
    assert nbv.executed_problem(text, NB) is None
    nb = json.loads(text)
    assert nb["metadata"]["lightscientist"]["written_by"] == worker


@pytest.mark.slow
def test_a_cell_past_the_runs_timeout_is_stopped_and_named(ws, books):
    books.create(NB, [CELLS[1], {"id": "train", "source": "import time\ntime.sleep(60)"}])
    message = books.run(NB, timeout=3)
    assert message.splitlines() == [
        "cell 'train' did not finish within the run's 3 s and was stopped",
        "outputs saved up to cell 'train'",
        "make cell 'train' faster (a smaller run) with notebook_edit_cell, give notebook_run a "
        "longer timeout, or run long work as a script with submit_job",
    ]
    assert outputs_of(saved(ws), "load") == [f"{ws.root}/experiment\n"]


def test_a_kernel_that_dies_is_named_with_the_cell_it_ran(ws, books):
    books.create(NB, [CELLS[1], {"id": "crash", "source": "import os\nos._exit(3)"}, CELLS[2]])
    message = books.run(NB)
    assert message.splitlines() == [
        "the kernel died while cell 'crash' ran (out of memory, or a crash)",
        "outputs saved up to cell 'crash'; the 1 cell after it did not run",
        "fix cell 'crash' with notebook_edit_cell and run again",
    ]
    nb = saved(ws)
    assert outputs_of(nb, "load") == [f"{ws.root}/experiment\n"]
    assert nbv.unexecuted(nb)[-1:] == ["summary"]  # the crash may have got its count first


def test_one_cell_is_one_code_cell(ws, books):
    books.create("one.ipynb", [{"id": "only", "source": "print('hi')"}])
    assert books.run("one.ipynb").startswith("ran one.ipynb: 1 code cell, no error")


def test_edits_of_one_notebook_in_parallel_calls_all_land(ws, books):
    # a model's tool calls of one message run in threads: each reads and saves the whole file
    books.create(NB, [{"id": f"c{i}", "source": ""} for i in range(8)])
    threads = [
        threading.Thread(target=books.edit_cell, args=(NB, f"c{i}", f"print({i})"))
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [c.source for c in saved(ws).cells] == [f"print({i})" for i in range(8)]
