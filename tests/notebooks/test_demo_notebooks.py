"""The demo notebooks in `notebooks/`, executed by nbclient on a real kernel.

Each runs in a temporary copy of `notebooks/` (the kernel's working folder), so nothing it
writes lands in the repository. Nobody clicks here: `LIGHTSCIENTIST_AUTO_APPROVE=1` tells the
quickstart to press its dashboard's Approve button from code. The notebooks assert in their
own cells; these tests check what nbclient recorded, and that the committed files carry no
outputs.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import nbformat
import pytest
from support.notebooks import execute_notebook

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NAMES = ["quickstart.ipynb", "custom-stages.ipynb", "real-model.ipynb"]
WIDGET = "application/vnd.jupyter.widget-view+json"
MODEL_VARIABLES = [
    "LIGHTSCIENTIST_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "LIGHTSCIENTIST_AUTO_APPROVE",
]


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A copy of `notebooks/` for the kernel to work in; no model configured."""
    copy = tmp_path / "notebooks"
    shutil.copytree(
        NOTEBOOKS, copy, ignore=shutil.ignore_patterns("studies", "my-stages", ".ipynb_checkpoints")
    )
    for name in MODEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return copy


def execute(folder: Path, name: str) -> nbformat.NotebookNode:
    return execute_notebook(folder / name, folder)


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code"]


def assert_clean(nb: nbformat.NotebookNode) -> None:
    """No error, no stderr in any output."""
    for cell in code_cells(nb):
        for output in cell.outputs:
            assert output.output_type != "error", (cell.source, output)
            assert output.get("name") != "stderr", (cell.source, output.get("text"))


def printed(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def cell_with(nb: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    (cell,) = [c for c in code_cells(nb) if source in c.source]
    return cell


def mimes(cell: nbformat.NotebookNode) -> list[dict]:
    return [o.get("data", {}) for o in cell.outputs if "data" in o]


def test_the_committed_notebooks_have_no_outputs():
    committed = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert set(NAMES) <= set(committed), committed
    for name in committed:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", name
        assert "widgets" not in nb.metadata, name
        for cell in code_cells(nb):
            assert cell.outputs == [] and cell.execution_count is None, (name, cell.source)
        for cell in nb.cells:
            assert "execution" not in cell.metadata, (name, cell.source)
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


def test_the_notebooks_links_into_the_repository_resolve():
    """A relative link opens the file in JupyterLab (on Binder, the repository's root)."""
    links = {
        (name, target)
        for name in NAMES
        for cell in nbformat.read(NOTEBOOKS / name, as_version=4).cells
        if cell.cell_type == "markdown"
        for target in re.findall(r"\]\(([^)#]+)\)", cell.source)
        if "://" not in target
    }
    assert ("custom-stages.ipynb", "../stages/review.toml") in links
    for name, target in links:
        assert (NOTEBOOKS / target).exists(), (name, target)


@pytest.mark.timeout(300)
def test_quickstart_runs_to_done_approving_each_gate_with_the_button(folder, monkeypatch):
    monkeypatch.setenv("LIGHTSCIENTIST_AUTO_APPROVE", "1")
    nb = execute(folder, "quickstart.ipynb")
    assert_clean(nb)

    dashboard = mimes(cell_with(nb, "%lightscientist research"))[0]
    assert WIDGET in dashboard and 'data-stage="idea.survey"' in dashboard["text/html"]
    assert "Approved idea.gate from code" in printed(cell_with(nb, "NOBODY_WATCHING = "))
    assert printed(cell_with(nb, "while run.wait(")).splitlines() == [
        "approving experiment.gate",
        "approving paper.review",
        "The project is done",
    ]
    assert "All checks passed" in printed(cell_with(nb, "info = api.status(PROJECT)"))

    process = mimes(cell_with(nb, "show PROCESS.md"))[0]["text/markdown"]
    for gate in ("idea.gate", "experiment.gate", "paper.review"):  # each approved by a click
        entry = process[process.rindex(f"## {gate}") :]  # (the reviewers' round 1 before it)
        assert "approved by the user via widget" in entry.split("\n## ")[0], entry[:400]
    assert any("image/png" in m for m in mimes(cell_with(nb, "show paper.figure")))
    paper = [
        m["text/markdown"] for m in mimes(cell_with(nb, "show paper.write")) if "text/markdown" in m
    ]
    assert any("\\begin{document}" in text for text in paper[1:]), paper[:2]
    counts = mimes(cell_with(nb, "events.groupby"))[0]["text/html"]
    assert "stage.transition" in counts and "user.decision" in counts

    (project,) = (folder / "studies").iterdir()
    state = json.loads((project / ".lightscientist" / "state.json").read_text())
    assert state["status"] == "done"
    assert [(d["stage"], d["source"]) for d in state["decisions"]] == [
        ("idea.gate", "widget"),
        ("experiment.gate", "widget"),
        ("paper.review", "widget"),
    ]
    assert (project / "paper" / "figures" / "figure1.png").stat().st_size > 0


@pytest.mark.timeout(300)
def test_the_quickstarts_check_accepts_a_gate_rejected_once_then_approved(folder):
    """A newcomer rejects `paper.review` once with a comment, then approves: the project is
    done, and the quickstart's closing check says so instead of stopping "Run All" with an
    AssertionError (it asserted exactly three approvals)."""
    project = folder / "studies" / "rejected-once"
    project.mkdir(parents=True)
    answers = [("y",), ("y",), ("n", "--comment", "Say what the figure shows.", "--to",
               "paper.write"), ("y",)]  # fmt: skip
    proc = lightscientist(project, "research", "Does warmup help?", "--mode", "manual")
    for answer in answers:
        assert proc.stdout.strip().splitlines()[-1] == "waiting_user", proc.stdout + proc.stderr
        proc = lightscientist(project, "reply", *answer)
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr

    quickstart = nbformat.read(folder / "quickstart.ipynb", as_version=4)
    (check,) = [c for c in quickstart.cells if c.get("id") == "qs-23"]
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("from lightscientist_jupyter import api"),
        nbformat.v4.new_code_cell(f"PROJECT = {str(project.relative_to(folder))!r}\n"
                                  "NOBODY_WATCHING = True"),
        nbformat.v4.new_code_cell(check.source),
    ]  # fmt: skip
    nbformat.write(nb, folder / "check.ipynb")
    nb = execute(folder, "check.ipynb")
    assert_clean(nb)
    said = printed(nb.cells[-1])
    assert "All checks passed: the project is done" in said
    assert "Rejected on the way: paper.review; each approved later." in said


def lightscientist(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip


@pytest.mark.timeout(300)
def test_custom_stages_validates_reports_a_broken_table_and_runs_its_own_flow(folder):
    nb = execute(folder, "custom-stages.ipynb")
    assert_clean(nb)

    copied = printed(cell_with(nb, "shutil.copytree(shipped")).splitlines()
    assert copied[0] == f"shipped tables in {REPO / 'stages'}"
    assert "your copy: my-stages/review.toml" in copied
    shipped, mine = REPO / "stages", folder / "my-stages"
    assert (mine / "review.toml").read_text() == (shipped / "review.toml").read_text()
    assert (mine / "skills" / "review.read.md").read_text() == (
        shipped / "skills" / "review.read.md"
    ).read_text()
    edited = (mine / "skills" / "review.scope.md").read_text()  # the copy changed, not the source
    assert edited.endswith("Keep to work published in the last ten years.\n")
    assert "ten years" not in (shipped / "skills" / "review.scope.md").read_text()

    drawing = mimes(cell_with(nb, "%lightscientist stages --stages my-stages/review.toml"))[0]
    assert 'data-stage="review.gate"' in drawing["text/html"]
    report = printed(cell_with(nb, "my-stages/broken.toml\nexcept"))
    for problem in (
        "'review.reed' is not in 'allowed'",
        "unknown key 'aproval'",
        "must be a list",
        "review.missing.md does not exist",
    ):
        assert problem in report, report
    assert "All checks passed." in printed(nb.cells[-2])

    (project,) = (folder / "studies").iterdir()
    report_md = (project / "review" / "report.md").read_text()
    assert "does not know the stage 'review.write'" in report_md  # the offline model says so
    state = json.loads((project / ".lightscientist" / "state.json").read_text())
    assert state["status"] == "done"
    assert [(d["stage"], d["source"], d["comment"]) for d in state["decisions"]] == [
        ("review.gate", "api", "Enough reading; write it up.")
    ]
    assert (
        "approved by the user via api — “Enough reading; write it up.”"
        in (project / "PROCESS.md").read_text()
    )


@pytest.mark.timeout(120)
def test_real_model_skips_cleanly_with_no_model_configured(folder):
    nb = execute(folder, "real-model.ipynb")
    assert_clean(nb)
    assert "Skipping the run: no real model is configured." in printed(
        cell_with(nb, "def reason_to_skip")
    )
    assert printed(code_cells(nb)[-1]).strip() == "Skipped: no real model is configured"
    assert not (folder / "studies").exists()  # nothing started


class _FakeServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that lists one model and answers only the model check."""

    def do_GET(self) -> None:  # the http.server API names it
        if self.path.rstrip("/") == "/v1/models":
            body = json.dumps({"object": "list", "data": [{"id": "tiny-model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        """Passes the model check (one call offering `report_word`), refuses all else."""
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        tools = [t.get("function", {}).get("name") for t in request.get("tools") or []]
        if tools != ["report_word"]:
            self.send_error(400, "this test server answers no other chat requests")
            return
        call = {
            "id": "call_0",
            "type": "function",
            "function": {"name": "report_word", "arguments": '{"word": "ready"}'},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        body = json.dumps(
            {
                "id": "c1",
                "object": "chat.completion",
                "model": "tiny-model",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def fake_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _FakeServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.timeout(120)
def test_real_model_checks_a_local_server_before_starting(folder, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server)
    monkeypatch.setenv("LIGHTSCIENTIST_MODEL", "qwen3:8b")
    nb = execute(folder, "real-model.ipynb")
    assert_clean(nb)
    assert f"{fake_server} serves tiny-model, not qwen3:8b" in printed(
        cell_with(nb, "def reason_to_skip")
    )
    assert not (folder / "studies").exists()

    monkeypatch.setenv("LIGHTSCIENTIST_MODEL", "tiny-model")  # served: the run starts
    nb = execute(folder, "real-model.ipynb")
    assert_clean(nb)
    assert "Ready: tiny-model at " + fake_server in printed(cell_with(nb, "def reason_to_skip"))
    dashboard = mimes(cell_with(nb, "%lightscientist research"))[0]
    # the cell returns at once (the project opens on the run's thread): "starting" until then
    assert WIDGET in dashboard and "starting in " in dashboard["text/plain"]
    assert "· model tiny-model ·" in printed(code_cells(nb)[-1])
    (project,) = (folder / "studies").iterdir()
    assert project.name.startswith("real-model-")
