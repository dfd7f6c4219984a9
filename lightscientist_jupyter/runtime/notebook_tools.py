"""The workers' notebook tools: create, read, change cell by cell and run Jupyter notebooks of
the workspace.

A worker could write a notebook's JSON with its file tools, but one misplaced brace makes it
unreadable, and a cell's outputs come only from a kernel. These tools take and give cells by
id, check every notebook they read or write (`values.notebook`), and change only notebooks a
worker made (`metadata.lightscientist.written_by`), never one of the researcher's.

`notebook_run` runs the notebook in a fresh kernel inside the worker's sandbox, exactly as one
of its shell commands (`notebook_run.run_notebook`). Every notebook these tools read or write
in the workspace goes through the guarded path (`Beneath`): none follows a link a sandboxed
command planted. What a model reads is one short message a call, a refusal included (a path
outside the workspace, a link, a notebook of the researcher's): one line, never a traceback.

A notebook the researcher has open in JupyterLab is never rewritten underneath the page: the
change goes to the page, which applies it cell by cell and saves it (`open_notebooks`).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal, ParamSpec

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.open_notebooks import Handed, hand_to_pages, pages_with
from lightscientist_jupyter.runtime.notebook_run import TIMEOUT_S, is_code, run_notebook
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.session.workspace_files import confine
from lightscientist_jupyter.values import notebook as nbv
from lightscientist_jupyter.workspace import STATE_DIR

SHOWN_IDS = 8
"""Cell ids `notebook_create`'s message names before `…`."""

SAVE_RETRIES, SAVE_RETRY_S = 5, 0.2
"""How often, and after how long, a notebook open in JupyterLab is read again when it does
not parse (a save of JupyterLab's under way)."""

P = ParamSpec("P")


class NewCell(BaseModel):
    """One cell of a notebook `notebook_create` writes."""

    id: str | None = Field(
        default=None, description="a short name (letters, digits, - or _); default cell-N"
    )
    cell_type: Literal["code", "markdown"] = "code"
    source: str


class Refused(Exception):
    """A call that cannot be done; its message is the tool's whole answer."""


def _answers(method: Callable[P, str]) -> Callable[P, str]:
    """A tool's method whose Refused is its answer (one line for the model, no traceback)."""

    @functools.wraps(method)
    def answer(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return method(*args, **kwargs)
        except Refused as exc:
            return str(exc)

    return answer


class Notebooks:
    """The notebook tools of the workers of one workspace; `shell_of` gives, at each call,
    the shell of the worker whose turn runs."""

    def __init__(
        self, root: Path, groups: ProcessGroups | None, shell_of: Callable[[], WorkerShell]
    ):
        self.root = Path(root).resolve()
        self.tree = Beneath(self.root)
        self.groups = groups
        self.shell_of = shell_of
        self._locks: dict[PurePosixPath, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    # ------------------------------------------------------------------ paths and files

    def _rel(self, tool: str, path: str) -> PurePosixPath:
        """The notebook's workspace-relative path, or Refused naming why not."""
        try:
            rel = confine(self.root, path)
        except PathRefused as exc:
            raise Refused(f"{tool} refused {path}: {exc}") from None
        if not rel.parts:
            raise Refused(f"{tool} refused {path}: give a notebook's path, a .ipynb file")
        if rel.parts[0] == STATE_DIR:
            raise Refused(f"{tool} refused {path}: {STATE_DIR}/ belongs to LightScientist")
        if not nbv.is_notebook(rel.name):
            raise Refused(f"{tool} refused {path}: give a notebook's path, a .ipynb file")
        try:
            self.tree.entry(rel)
        except PathRefused as exc:
            raise Refused(f"{tool} refused {rel}: {exc}") from None
        return rel

    def _load(self, tool: str, rel: PurePosixPath) -> Any:
        return self._read(tool, rel)[0]

    def _read(self, tool: str, rel: PurePosixPath) -> tuple[Any, str]:
        """The notebook at `rel` and the text it was read from. A notebook open in JupyterLab
        is read again for a moment when it does not parse: JupyterLab's save writes the file
        in place, and a read can meet it half-written."""
        for _ in range(SAVE_RETRIES):
            try:
                return self._read_once(tool, rel)
            except Refused:
                if not pages_with(self.tree, rel):
                    raise
                time.sleep(SAVE_RETRY_S)
        return self._read_once(tool, rel)

    def _read_once(self, tool: str, rel: PurePosixPath) -> tuple[Any, str]:
        try:
            text = self.tree.read_text(rel)
        except FileNotFoundError:
            raise Refused(f"{rel} does not exist: make it with notebook_create") from None
        except IsADirectoryError:
            raise Refused(f"{tool} refused {rel}: it is a folder") from None
        except PathRefused as exc:
            raise Refused(f"{tool} refused {rel}: {exc}") from None
        except UnicodeDecodeError:
            raise Refused(f"{rel} is not a notebook (not UTF-8 text)") from None
        try:
            return nbv.loads(text, str(rel)), text
        except nbv.NotebookProblem as exc:
            raise Refused(str(exc)) from None

    def _own(self, tool: str, rel: PurePosixPath) -> tuple[Any, str]:
        """The notebook at `rel`, which a worker made (else Refused), and its text."""
        nb, text = self._read(tool, rel)
        if nbv.written_by(nb) is None:
            raise Refused(_not_ours(tool, rel))
        return nb, text

    @contextlib.contextmanager
    def _changing(self, rel: PurePosixPath) -> Iterator[None]:
        """One change of the notebook `rel` at a time: a model's parallel tool calls (two
        edits in one message) run in threads, and each reads, changes and saves the whole
        file."""
        with self._locks_lock:
            lock = self._locks.setdefault(rel, threading.Lock())
        with lock:
            yield

    def _save(self, tool: str, rel: PurePosixPath, nb: Any, base: str | None) -> str:
        """Save the notebook `nb` made from the text `base` (None: a new file). One that is
        open in the researcher's JupyterLab is changed there, by cell, and saved by
        JupyterLab, never rewritten underneath it (`open_notebooks`); what the answer adds
        to say so."""
        text = nbv.dumps(nb)
        try:
            if pages_with(self.tree, rel):
                handed = hand_to_pages(self.tree, rel, base, text, self.shell_of().worker_id)
                if handed.outcome == "saved":
                    return " (it is open in JupyterLab: changed and saved there)"
                if handed.outcome != "closed":
                    raise Refused(_not_handed(tool, rel, handed))
            self.tree.write_atomic(rel, text)
        except PathRefused as exc:
            raise Refused(f"{rel} was not saved: {exc}") from None
        return ""

    # ------------------------------------------------------------------ the tools

    @_answers
    def create(self, path: str, cells: Sequence[NewCell | dict[str, Any]]) -> str:
        rel = self._rel("notebook_create", path)
        with self._changing(rel):
            base = None
            if self.tree.lstat(rel) is not None:
                try:
                    base = self._own("notebook_create", rel)[1]
                except Refused:
                    raise Refused(_not_ours("notebook_create", rel)) from None
            given = [NewCell.model_validate(c) if isinstance(c, dict) else c for c in cells]
            try:
                nb = nbv.new_notebook([], self.shell_of().worker_id)
                for cell in given:
                    nb.cells.append(nbv.new_cell(nb, cell.cell_type, cell.source, cell.id))
            except nbv.NotebookProblem as exc:
                raise Refused(f"{rel} was not written: {exc}") from None
            where = self._save("notebook_create", rel, nb, base)
            ids = [str(c.id) for c in nb.cells]
            shown = ", ".join(ids[:SHOWN_IDS]) + (", …" if len(ids) > SHOWN_IDS else "")
            return (
                f"created {rel}: {len(ids)} cell{'s' if len(ids) != 1 else ''} ({shown})"
                f"{where}; run it with notebook_run"
            )

    @_answers
    def add_cell(
        self,
        path: str,
        source: str,
        cell_type: str = "code",
        after: str | None = None,
        cell_id: str | None = None,
    ) -> str:
        rel = self._rel("notebook_add_cell", path)
        with self._changing(rel):
            nb, base = self._own("notebook_add_cell", rel)
            try:
                position = nbv.cell_index(nb, after, str(rel)) + 1 if after else len(nb.cells)
                cell = nbv.new_cell(nb, cell_type, source, cell_id)
            except nbv.NotebookProblem as exc:
                raise Refused(str(exc)) from None
            nb.cells.insert(position, cell)
            saved = self._save("notebook_add_cell", rel, nb, base)
            where = f"after '{after}'" if after else "at the end"
            return (
                f"added cell '{cell.id}' ({cell_type}) to {rel} {where}: "
                f"{len(nb.cells)} cells{saved}"
            )

    @_answers
    def edit_cell(self, path: str, cell_id: str, source: str) -> str:
        rel = self._rel("notebook_edit_cell", path)
        with self._changing(rel):
            nb, base = self._own("notebook_edit_cell", rel)
            try:
                cell = nb.cells[nbv.cell_index(nb, cell_id, str(rel))]
            except nbv.NotebookProblem as exc:
                raise Refused(str(exc)) from None
            cell["source"] = source
            nbv.clear_outputs(cell)
            saved = self._save("notebook_edit_cell", rel, nb, base)
            cleared = " (its outputs cleared); run it with notebook_run" if is_code(cell) else ""
            return f"edited cell '{cell_id}' of {rel}{saved}{cleared}"

    @_answers
    def delete_cell(self, path: str, cell_id: str) -> str:
        rel = self._rel("notebook_delete_cell", path)
        with self._changing(rel):
            nb, base = self._own("notebook_delete_cell", rel)
            try:
                del nb.cells[nbv.cell_index(nb, cell_id, str(rel))]
            except nbv.NotebookProblem as exc:
                raise Refused(str(exc)) from None
            saved = self._save("notebook_delete_cell", rel, nb, base)
            return f"deleted cell '{cell_id}' from {rel}: {len(nb.cells)} cells left{saved}"

    @_answers
    def read(self, path: str) -> str:
        rel = self._rel("notebook_read", path)
        return nbv.reading(self._load("notebook_read", rel), str(rel))

    @_answers
    def run(self, path: str, cells: Sequence[str] | None = None, timeout: int = TIMEOUT_S) -> str:
        rel = self._rel("notebook_run", path)
        with self._changing(rel):
            nb, base = self._own("notebook_run", rel)
            try:
                ran, message = run_notebook(
                    self.root, rel, nb, self.shell_of(), self.groups, cells, timeout
                )
            except nbv.NotebookProblem as exc:
                raise Refused(str(exc)) from None
            except PathRefused as exc:  # a link planted in the worker's home, where the run goes
                raise Refused(f"notebook_run {rel} did not run: {exc}") from None
            if ran is not None:
                message += self._save("notebook_run", rel, ran, base)
            return message


# ---------------------------------------------------------------------- messages


def _not_handed(tool: str, rel: PurePosixPath, handed: Handed) -> str:
    """The answer when the researcher's open JupyterLab did not take a change: nothing is
    written, the worker may try again."""
    if handed.outcome == "conflict":
        why = (
            f"the researcher is editing {handed.detail} of it in JupyterLab and has not "
            "saved; change other cells, or try again later"
        )
    elif handed.outcome == "failed":
        why = f"JupyterLab could not apply the change ({handed.detail}); try again"
    else:
        why = "it is open in JupyterLab, which did not take the change in time; try again"
    return f"{tool}: {rel} was not changed: {why}"


def _not_ours(tool: str, rel: PurePosixPath) -> str:
    return (
        f"{tool} refused {rel}: it is not a notebook a worker made (workers only change "
        "notebooks of their own); read it with notebook_read, or make another with "
        "notebook_create"
    )


# ---------------------------------------------------------------------- the tools


def notebook_tools(
    root: Path, groups: ProcessGroups, shell_of: Callable[[], WorkerShell]
) -> list[BaseTool]:
    """The notebook tools; `shell_of` gives, at each call, the shell of the worker whose turn
    runs."""
    books = Notebooks(root, groups, shell_of)

    @tool("notebook_create")
    def create(path: str, cells: list[NewCell]) -> str:
        """Write a new Jupyter notebook (.ipynb) in the workspace from its cells, each with an
        id (a short name such as 'load' or 'plot'), a cell_type ('code' or 'markdown') and a
        source. Replaces a notebook a worker made at that path. Run it with notebook_run."""
        return books.create(path, cells)

    @tool("notebook_add_cell")
    def add_cell(
        path: str,
        source: str,
        cell_type: str = "code",
        after: str | None = None,
        cell_id: str | None = None,
    ) -> str:
        """Add a cell to a notebook: after the cell with id `after` (default: at the end),
        with id `cell_id` (default: cell-N). Returns the new cell's id."""
        return books.add_cell(path, source, cell_type, after, cell_id)

    @tool("notebook_edit_cell")
    def edit_cell(path: str, cell_id: str, source: str) -> str:
        """Replace the source of a notebook's cell (by its id); its outputs are cleared."""
        return books.edit_cell(path, cell_id, source)

    @tool("notebook_delete_cell")
    def delete_cell(path: str, cell_id: str) -> str:
        """Delete a notebook's cell (by its id)."""
        return books.delete_cell(path, cell_id)

    @tool("notebook_read")
    def read(path: str) -> str:
        """Read a notebook: each cell's id, type and source, and its outputs (long texts cut,
        images named by type and size)."""
        return books.read(path)

    @tool("notebook_run")
    def run(path: str, cells: list[str] | None = None, timeout: int = TIMEOUT_S) -> str:
        """Run a notebook's code cells in order in a fresh kernel (working folder: the
        notebook's), or only the cells whose ids are given, and save it with their outputs.
        Stops at the first cell that raises and names it with its error: fix that cell with
        notebook_edit_cell and run again. `timeout`: seconds for the whole run."""
        return books.run(path, cells, timeout)

    return [create, add_cell, edit_cell, delete_cell, read, run]
