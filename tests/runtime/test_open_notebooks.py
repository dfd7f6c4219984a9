"""A notebook open in the researcher's JupyterLab is never rewritten underneath it.

The worker's notebook tools and the server extension's two endpoints are the real ones; the
page is this test's thread, which reports the notebook open through `POST open-notebooks`'s
function and, given a change, does what the side panel's `opennotebooks.ts` does in a real
JupyterLab (tested in tests/jupyter/test_open_notebooks_browser.py): saves it, or refuses it
as a conflict, and reports through `POST notebook-change`'s function.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lightscientist_jupyter import open_notebooks
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.jupyter.server.open_pages import notebook_change
from lightscientist_jupyter.jupyter.server.open_pages import open_notebooks as report
from lightscientist_jupyter.jupyter.server.paths import Refused
from lightscientist_jupyter.runtime.notebook_tools import Notebooks
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values import notebook as nbv

pytestmark = pytest.mark.unit

NB = "experiment/analysis.ipynb"
SEEN = "project/experiment/analysis.ipynb"  # as the page names it: from the server root


@pytest.fixture
def server_root(tmp_path: Path) -> Path:
    (tmp_path / "project" / ".lightscientist").mkdir(parents=True)
    (tmp_path / "project" / ".lightscientist" / "state.json").write_text("{}")
    return tmp_path


@pytest.fixture
def books(server_root: Path) -> Iterator[Notebooks]:
    groups = ProcessGroups()
    root = server_root / "project"
    shell = WorkerShell.of(root, "w-nb", threading.Event(), ShellPolicy(sandbox=False))
    books = Notebooks(root, groups, lambda: shell)
    books.create(NB, [{"id": "load", "source": "x = 1"}, {"id": "show", "source": "print(x)"}])
    yield books
    groups.kill_all()


class Page:
    """A JupyterLab page with the notebook open, as the server sees it."""

    def __init__(self, root: Path, act: Callable[[dict[str, Any]], tuple[str, str]] | None):
        self.root, self.act = root, act
        self.seen: list[dict[str, Any]] = []
        self.on_disk_when_taken: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Page:
        report(self.root, {"page": "page-1", "paths": [SEEN]})
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            for change in report(self.root, {"page": "page-1", "paths": [SEEN]})["changes"]:
                self.seen.append(dict(change))
                self.on_disk_when_taken.append((self.root / SEEN).read_text())
                if self.act is None:
                    continue  # a page that takes a change and never answers
                outcome, detail = self.act(dict(change))
                body = {"project": change["project"], "id": change["id"]}
                notebook_change(self.root, {**body, "outcome": outcome, "detail": detail})


def save_it(root: Path) -> Callable[[dict[str, Any]], tuple[str, str]]:
    def act(change: dict[str, Any]) -> tuple[str, str]:
        (root / change["path"]).write_text(json.dumps(change["next"], indent=1) + "\n")
        return "saved", ""

    return act


def source(root: Path, cell_id: str) -> str:
    nb = nbv.loads((root / SEEN).read_text(), NB)
    return str(nb.cells[nbv.cell_index(nb, cell_id, NB)].source)


def test_a_change_to_an_open_notebook_goes_to_the_page_and_is_saved_by_it(server_root, books):
    before = (server_root / SEEN).read_text()
    with Page(server_root, save_it(server_root)) as page:
        answer = books.edit_cell(NB, "load", "x = 2")
    assert answer.startswith(f"edited cell 'load' of {NB} (it is open in JupyterLab: changed")
    (change,) = page.seen
    assert change["path"] == SEEN and change["project"] == "project" and change["by"] == "w-nb"
    assert change["base"] == json.loads(before)  # what the worker's change was made from
    assert page.on_disk_when_taken == [before]  # the tool wrote nothing underneath the page
    assert source(server_root, "load") == "x = 2"
    assert not list((server_root / "project" / open_notebooks.CHANGES_DIR).iterdir())


def test_a_cell_the_researcher_is_editing_is_a_conflict_and_nothing_is_written(server_root, books):
    before = (server_root / SEEN).read_text()
    with Page(server_root, lambda change: ("conflict", "cell 'load'")):
        answer = books.edit_cell(NB, "load", "x = 3")
    assert answer == (
        f"notebook_edit_cell: {NB} was not changed: the researcher is editing cell 'load' of "
        "it in JupyterLab and has not saved; change other cells, or try again later"
    )
    assert (server_root / SEEN).read_text() == before


def test_a_page_that_takes_a_change_and_never_answers_leaves_the_file_as_it_was(
    server_root, books, monkeypatch
):
    monkeypatch.setattr(open_notebooks, "WAIT_S", 0.3)
    before = (server_root / SEEN).read_text()
    with Page(server_root, None):
        began = time.monotonic()
        answer = books.add_cell(NB, "print(2 * x)")
    assert "was not changed: it is open in JupyterLab, which did not take" in answer
    assert time.monotonic() - began < 5
    assert (server_root / SEEN).read_text() == before


def test_a_page_closed_meanwhile_lets_the_tool_write_the_file(server_root, books, monkeypatch):
    monkeypatch.setattr(open_notebooks, "LIVE_S", 0.3)
    report(server_root, {"page": "page-1", "paths": [SEEN]})  # then the page is closed
    answer = books.edit_cell(NB, "show", "print(x + 1)")
    assert answer.startswith(f"edited cell 'show' of {NB} (its outputs cleared)")
    assert source(server_root, "show") == "print(x + 1)"


def test_the_page_closing_the_notebook_is_told_to_the_writers(server_root, books):
    tree = Beneath(server_root / "project")
    report(server_root, {"page": "page-1", "paths": [SEEN]})
    assert open_notebooks.pages_with(tree, NB) == ["page-1"]
    report(server_root, {"page": "page-1", "paths": []})
    assert open_notebooks.pages_with(tree, NB) == []
    assert books.edit_cell(NB, "show", "print(x)").startswith("edited cell 'show'")


def test_a_researchers_own_notebook_is_never_handed_a_change(server_root, tmp_path):
    tree = Beneath(server_root / "project")
    mine = nbv.new_notebook([], None)
    (server_root / "project" / "mine.ipynb").write_text(nbv.dumps(mine))
    report(server_root, {"page": "page-1", "paths": ["project/mine.ipynb"]})
    got: list[open_notebooks.Handed] = []
    writer = threading.Thread(
        target=lambda: got.append(
            open_notebooks.hand_to_pages(tree, "mine.ipynb", None, "{}", "w-1", wait_s=5)
        )
    )
    writer.start()
    deadline = time.monotonic() + 5
    while writer.is_alive() and time.monotonic() < deadline:
        answer = report(server_root, {"page": "page-1", "paths": ["project/mine.ipynb"]})
        assert answer["changes"] == []
        time.sleep(0.05)
    writer.join()
    assert got == [open_notebooks.Handed("failed", "it is not a notebook a worker made")]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"page": "../x", "paths": []}, 400, "page must be 1–64 letters"),
        ({"page": "p", "paths": ["../secret.ipynb"]}, 403, "outside the server root"),
        ({"page": "p", "paths": ["/etc/x.ipynb"]}, 400, "relative to the server root"),
        ({"page": "p", "paths": "a.ipynb"}, 400, "paths must be a list"),
        ([], 400, 'send {"page"'),
    ],
)
def test_a_bad_report_is_refused_naming_what_to_fix(server_root, body, status, words):
    with pytest.raises(Refused) as refused:
        report(server_root, body)
    assert refused.value.status == status and words in refused.value.message


def test_a_report_on_a_change_no_writer_waits_for_is_refused(server_root):
    body = {"project": "project", "id": "abc", "outcome": "saved", "detail": ""}
    with pytest.raises(Refused) as refused:
        notebook_change(server_root, body)
    assert refused.value.status == 410 and "gave up" in refused.value.message
    with pytest.raises(Refused) as refused:
        notebook_change(server_root, {**body, "outcome": "merged"})
    assert refused.value.status == 400 and "saved, conflict, failed" in refused.value.message


def test_a_project_at_the_server_root_gets_its_changes_too(tmp_path):
    (tmp_path / ".lightscientist").mkdir()
    (tmp_path / ".lightscientist" / "state.json").write_text("{}")
    groups = ProcessGroups()
    shell = WorkerShell.of(tmp_path, "w-nb", threading.Event(), ShellPolicy(sandbox=False))
    books = Notebooks(tmp_path, groups, lambda: shell)
    books.create(NB, [{"id": "load", "source": "x = 1"}])
    stop = threading.Event()

    def page() -> None:
        while not stop.wait(0.05):
            for change in report(tmp_path, {"page": "p", "paths": [NB]})["changes"]:
                assert change["project"] == "" and change["path"] == NB
                (tmp_path / NB).write_text(json.dumps(change["next"]))
                body = {"project": "", "id": change["id"], "outcome": "saved", "detail": ""}
                notebook_change(tmp_path, body)

    report(tmp_path, {"page": "p", "paths": [NB]})
    thread = threading.Thread(target=page, daemon=True)
    thread.start()
    try:
        answer = books.edit_cell(NB, "load", "x = 2")
    finally:
        stop.set()
        thread.join(5)
        groups.kill_all()
    assert "(it is open in JupyterLab: changed and saved there)" in answer


def test_a_notebook_half_written_by_jupyterlabs_save_is_read_again(server_root, books):
    """JupyterLab writes a notebook in place: a tool that reads it mid-save waits a moment
    while the page has it open, instead of calling the researcher's notebook broken."""
    whole = (server_root / SEEN).read_text()
    (server_root / SEEN).write_text("")  # the save has truncated it, not yet written it
    report(server_root, {"page": "page-1", "paths": [SEEN]})
    threading.Timer(0.3, lambda: (server_root / SEEN).write_text(whole)).start()
    assert books.read(NB).startswith(f"{NB}: 2 cells\n--- cell load (code)\nx = 1")
