"""The workers' notebook tools: create, read, change cell by cell and run Jupyter notebooks of
the workspace.

A worker could write a notebook's JSON with its file tools, but one misplaced brace makes it
unreadable, and a cell's outputs come only from a kernel. These tools take and give cells by
id, check every notebook they read or write (`values.notebook`), and change only notebooks a
worker made (`metadata.lightscientist.written_by`), never one of the researcher's.

`notebook_run` runs the notebook in a fresh kernel inside the worker's sandbox, exactly as one
of its shell commands (`shell.run_command` with its confinement, limits, network and
allow-listed environment): a small runner (`notebook_runner.py`, copied into the worker's home)
starts nbclient and its kernel there, in the notebook's folder, as JupyterLab does. The kernel
process reads the runner's results back with `NO_LINKS` and writes the notebook into the
workspace through the guarded path (`Beneath`), as every read and write of these tools does:
none follows a link a sandboxed command planted. What a model reads is one short message: what
ran and how long it took, or the cell that raised, its exception and the traceback's last lines,
and what to do next.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal, ParamSpec

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.runtime.sandbox import command_env
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import CommandResult, ProcessGroups, run_command
from lightscientist_jupyter.runtime.session.workspace_files import confine
from lightscientist_jupyter.values import notebook as nbv
from lightscientist_jupyter.workspace import STATE_DIR

TIMEOUT_S = 600
"""How long one `notebook_run` may take, all its cells together."""
STARTUP_S = 60.0
"""Beyond the run's timeout: the runner's start, the kernel's, and the notebook's saving."""
RUNNER = Path(__file__).with_name("notebook_runner.py")
TRACEBACK_LINES = 12
"""Lines of a traceback a failing run shows: the notebook's frame and the last one."""
SHOWN_IDS = 8

P = ParamSpec("P")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


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
            return nbv.loads(text, str(rel))
        except nbv.NotebookProblem as exc:
            raise Refused(str(exc)) from None

    def _own(self, tool: str, rel: PurePosixPath) -> Any:
        """The notebook at `rel`, which a worker made (else Refused)."""
        nb = self._load(tool, rel)
        if nbv.written_by(nb) is None:
            raise Refused(_not_ours(tool, rel))
        return nb

    def _save(self, rel: PurePosixPath, nb: Any) -> None:
        try:
            self.tree.write_atomic(rel, nbv.dumps(nb))
        except PathRefused as exc:
            raise Refused(f"{rel} was not saved: {exc}") from None

    # ------------------------------------------------------------------ the tools

    @_answers
    def create(self, path: str, cells: Sequence[NewCell | dict[str, Any]]) -> str:
        rel = self._rel("notebook_create", path)
        if self.tree.lstat(rel) is not None:
            try:
                self._own("notebook_create", rel)
            except Refused:
                raise Refused(_not_ours("notebook_create", rel)) from None
        given = [NewCell.model_validate(c) if isinstance(c, dict) else c for c in cells]
        try:
            nb = nbv.new_notebook([], self.shell_of().worker_id)
            for cell in given:
                nb.cells.append(nbv.new_cell(nb, cell.cell_type, cell.source, cell.id))
        except nbv.NotebookProblem as exc:
            raise Refused(f"{rel} was not written: {exc}") from None
        self._save(rel, nb)
        ids = [str(c.id) for c in nb.cells]
        shown = ", ".join(ids[:SHOWN_IDS]) + (", …" if len(ids) > SHOWN_IDS else "")
        return (
            f"created {rel}: {len(ids)} cell{'s' if len(ids) != 1 else ''} ({shown}); "
            "run it with notebook_run"
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
        nb = self._own("notebook_add_cell", rel)
        try:
            position = nbv.cell_index(nb, after, str(rel)) + 1 if after else len(nb.cells)
            cell = nbv.new_cell(nb, cell_type, source, cell_id)
        except nbv.NotebookProblem as exc:
            raise Refused(str(exc)) from None
        nb.cells.insert(position, cell)
        self._save(rel, nb)
        where = f"after '{after}'" if after else "at the end"
        return f"added cell '{cell.id}' ({cell_type}) to {rel} {where}: {len(nb.cells)} cells"

    @_answers
    def edit_cell(self, path: str, cell_id: str, source: str) -> str:
        rel = self._rel("notebook_edit_cell", path)
        nb = self._own("notebook_edit_cell", rel)
        try:
            cell = nb.cells[nbv.cell_index(nb, cell_id, str(rel))]
        except nbv.NotebookProblem as exc:
            raise Refused(str(exc)) from None
        cell["source"] = source
        nbv.clear_outputs(cell)
        self._save(rel, nb)
        cleared = " (its outputs cleared); run it with notebook_run" if _is_code(cell) else ""
        return f"edited cell '{cell_id}' of {rel}{cleared}"

    @_answers
    def delete_cell(self, path: str, cell_id: str) -> str:
        rel = self._rel("notebook_delete_cell", path)
        nb = self._own("notebook_delete_cell", rel)
        try:
            del nb.cells[nbv.cell_index(nb, cell_id, str(rel))]
        except nbv.NotebookProblem as exc:
            raise Refused(str(exc)) from None
        self._save(rel, nb)
        return f"deleted cell '{cell_id}' from {rel}: {len(nb.cells)} cells left"

    @_answers
    def read(self, path: str) -> str:
        rel = self._rel("notebook_read", path)
        return nbv.reading(self._load("notebook_read", rel), str(rel))

    @_answers
    def run(self, path: str, cells: Sequence[str] | None = None, timeout: int = TIMEOUT_S) -> str:
        rel = self._rel("notebook_run", path)
        nb = self._own("notebook_run", rel)
        chosen = _chosen(nb, rel, cells)
        shell = self.shell_of()
        job = self._prepare(shell, rel, nb)
        started = time.monotonic()
        result = self._start(shell, rel, job, chosen if cells is not None else None, timeout)
        took = time.monotonic() - started
        report = _result_of(job)
        if report is None:
            return _no_result(rel, result, timeout)
        if report.get("no_kernel"):
            return f"the kernel for {rel} did not start: {report['no_kernel']}"
        try:
            executed = nbv.loads(NO_LINKS.read_text(job / "executed.ipynb"), str(rel))
        except (OSError, nbv.NotebookProblem) as exc:
            return f"{rel}: the run's notebook could not be read back ({exc}); nothing was saved"
        ran = [str(i) for i in report.get("ran") or []]
        _take_outputs(nb, executed, chosen, ran)
        self._save(rel, nb)
        return _summary(rel, nb, chosen, ran, report, took, timeout, partial=cells is not None)

    # ------------------------------------------------------------------ running

    def _prepare(self, shell: WorkerShell, rel: PurePosixPath, nb: Any) -> Path:
        """The run's folder in the worker's home, holding the runner and the notebook to run
        (written through no link: the home is writable from the sandbox)."""
        folder = shell.home / "notebooks"
        job = folder / "--".join(rel.with_suffix("").parts)
        mkdirs(job)
        NO_LINKS.write_atomic(folder / RUNNER.name, RUNNER.read_text(encoding="utf-8"))
        for name in ("executed.ipynb", "result.json"):
            NO_LINKS.unlink(job / name)
        NO_LINKS.write_atomic(job / "input.ipynb", nbv.dumps(nb))
        return job

    def _start(
        self,
        shell: WorkerShell,
        rel: PurePosixPath,
        job: Path,
        cells: list[str] | None,
        timeout: int,
    ) -> CommandResult:
        words = [sys.executable, str(job.parent / RUNNER.name), str(job), f"--timeout={timeout}"]
        if cells is not None:
            words.append(f"--cells={','.join(cells)}")
        env = command_env.worker_env(self.root, shell.home)
        env.pop("MPLBACKEND", None)  # a notebook's figures are shown inline, as in JupyterLab
        env["IPYTHONDIR"] = str(shell.home / ".ipython")
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        folder = rel.parent.as_posix()
        return run_command(
            f"cd {shlex.quote(folder)} && {shlex.join(words)}",
            cwd=self.root,
            env=env,
            log_path=shell.log_dir / f"{next(shell.counter):04d}.log",
            timeout=timeout + STARTUP_S,
            cancel=shell.cancel,
            groups=self.groups,
            owner=shell.worker_id,
            confinement=shell.confinement,
        )


# ---------------------------------------------------------------------- pure helpers


def _not_ours(tool: str, rel: PurePosixPath) -> str:
    return (
        f"{tool} refused {rel}: it is not a notebook a worker made (workers only change "
        "notebooks of their own); read it with notebook_read, or make another with "
        "notebook_create"
    )


def _is_code(cell: Any) -> bool:
    return bool(cell.get("cell_type") == "code")


def _chosen(nb: Any, rel: PurePosixPath, cells: Sequence[str] | None) -> list[str]:
    """The ids of the code cells to run, in notebook order."""
    if cells is not None:
        for cell_id in cells:
            try:
                nbv.cell_index(nb, cell_id, str(rel))
            except nbv.NotebookProblem as exc:
                raise Refused(str(exc)) from None
    wanted = set(cells) if cells is not None else None
    chosen = [str(c.id) for c in nb.cells if _is_code(c) and (wanted is None or c.id in wanted)]
    if not chosen:
        raise Refused(f"{rel} has no code cell to run" + (" among those named" if cells else ""))
    return chosen


def _result_of(job: Path) -> dict[str, Any] | None:
    try:
        report = json.loads(NO_LINKS.read_text(job / "result.json"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


def _no_result(rel: PurePosixPath, result: CommandResult, timeout: int) -> str:
    if result.timed_out:
        return f"notebook_run {rel} was stopped after {timeout + STARTUP_S:g} s; nothing was saved"
    if result.cancelled:
        return f"notebook_run {rel} stopped: the worker is being cancelled; nothing was saved"
    tail = [_ANSI.sub("", line) for line in result.output.strip().splitlines()[-8:]]
    return "\n".join(
        [f"notebook_run {rel} failed (exit {result.exit_code}); nothing was saved:", *tail]
    )


def _take_outputs(nb: Any, executed: Any, chosen: list[str], ran: list[str]) -> None:
    """The executed cells' outputs and counts into `nb` (whose sources stay as the kernel
    read them); the chosen cells that did not run lose their old outputs."""
    done = {str(c.id): c for c in executed.cells if str(c.id) in ran}
    for cell in nb.cells:
        cell_id = str(cell.id)
        if cell_id in done:
            cell["outputs"] = done[cell_id].get("outputs", [])
            cell["execution_count"] = done[cell_id].get("execution_count")
        elif cell_id in chosen:
            nbv.clear_outputs(cell)


def _traceback_tail(output: Any) -> list[str]:
    """The traceback's frame of the cell's own line and its last frame, ANSI colours gone."""
    frames = [_ANSI.sub("", str(f)).rstrip("\n") for f in output.get("traceback") or []]
    in_cell = [i for i, f in enumerate(frames) if f.startswith("Cell In[")]
    keep = sorted({*in_cell[:1], len(frames) - 2, len(frames) - 1} - {-1, -2})
    lines = [line for i in keep if i >= 0 for line in frames[i].splitlines()]
    return lines[-TRACEBACK_LINES:]


def _summary(
    rel: PurePosixPath,
    nb: Any,
    chosen: list[str],
    ran: list[str],
    report: dict[str, Any],
    took: float,
    timeout: int,
    *,
    partial: bool,
) -> str:
    failed = report.get("failed") or report.get("timed_out") or report.get("died")
    code = sum(1 for c in nb.cells if _is_code(c))
    if not failed:
        what = (
            f"{len(ran)} of {code} code cells ({', '.join(ran)})"
            if partial
            else f"{code} code cells"
        )
        return f"ran {rel}: {what}, no error (saved with outputs), {took:.1f} s"
    cell = nb.cells[nbv.cell_index(nb, str(failed), str(rel))]
    later = len(chosen) - len(ran)
    saved = f"outputs saved up to cell '{failed}'" + (
        f"; the {later} cell{'s' if later != 1 else ''} after it did not run" if later else ""
    )
    if report.get("timed_out"):
        return "\n".join(
            [
                f"cell '{failed}' did not finish within the run's {timeout} s and was stopped",
                saved,
                f"make cell '{failed}' faster (a smaller run) with notebook_edit_cell, give "
                "notebook_run a longer timeout, or run long work as a script with submit_job",
            ]
        )
    if report.get("died"):
        return "\n".join(
            [
                f"the kernel died while cell '{failed}' ran (out of memory, or a crash)",
                saved,
                f"fix cell '{failed}' with notebook_edit_cell and run again",
            ]
        )
    error = next((o for o in cell.get("outputs") or [] if o.get("output_type") == "error"), None)
    said = f"{error.get('ename')}: {error.get('evalue')}" if error is not None else "an error"
    tail = _traceback_tail(error) if error is not None else []
    fresh = (
        ["only the cells named ran, in a fresh kernel: name the cells they need too"]
        if partial
        else []
    )
    return "\n".join(
        [
            f"cell '{failed}' raised {said}",
            *tail,
            saved,
            *fresh,
            f"fix cell '{failed}' with notebook_edit_cell and run again",
        ]
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
