"""`notebook_run`'s run: a notebook's code cells executed in a fresh kernel inside the
worker's sandbox, and the one message a model reads about it.

The run is one of the worker's shell commands (`shell.run_command` with its confinement,
limits, network and allow-listed environment): a small runner (`notebook_runner.py`, copied
into the worker's home through no link) starts nbclient and its kernel there, in the
notebook's folder, as JupyterLab does, and leaves the executed notebook and a result in the
home. The kernel process reads them back with `NO_LINKS`, checks the notebook
(`values.notebook`), and takes the outputs of the cells that ran into the notebook it read
(whose sources stay as they were); the caller saves it. The message says what ran and how
long it took, or names the cell that raised with its exception and the traceback's last
lines, and what to do next.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.runtime.sandbox import command_env
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.sandbox.shell import CommandResult, ProcessGroups, run_command
from lightscientist_jupyter.values import notebook as nbv

TIMEOUT_S = 600
"""How long one `notebook_run` may take, all its cells together."""
STARTUP_S = 60.0
"""Beyond the run's timeout: the runner's start, the kernel's, and the notebook's saving."""
RUNNER = Path(__file__).with_name("notebook_runner.py")
TRACEBACK_LINES = 12
"""Lines of a traceback a failing run shows: the cell's own frame and the last one."""


def is_code(cell: Any) -> bool:
    return bool(cell.get("cell_type") == "code")


def chosen_cells(nb: Any, rel: PurePosixPath, cells: Sequence[str] | None) -> list[str]:
    """The ids of the code cells to run (all, or those of `cells`), in notebook order; a
    NotebookProblem naming a cell that is not there."""
    if cells is not None:
        for cell_id in cells:
            nbv.cell_index(nb, cell_id, str(rel))
    wanted = set(cells) if cells is not None else None
    chosen = [str(c.id) for c in nb.cells if is_code(c) and (wanted is None or c.id in wanted)]
    if not chosen:
        raise nbv.NotebookProblem(
            f"{rel} has no code cell to run" + (" among those named" if cells else "")
        )
    return chosen


def run_notebook(
    root: Path,
    rel: PurePosixPath,
    nb: Any,
    shell: WorkerShell,
    groups: ProcessGroups | None,
    cells: Sequence[str] | None = None,
    timeout: int = TIMEOUT_S,
) -> tuple[Any | None, str]:
    """Run the code cells of `nb` (at `rel` in the workspace `root`; only those of `cells`
    when given) in `shell`'s sandbox. Returns the notebook with the outputs to save (None:
    nothing to save) and the tool's message."""
    chosen = chosen_cells(nb, rel, cells)
    job = _prepare(shell, rel, nb)
    started = time.monotonic()
    result = _start(root, shell, groups, rel, job, chosen if cells is not None else None, timeout)
    took = time.monotonic() - started
    report = _result_of(job)
    if report is None:
        return None, _no_result(rel, result, timeout)
    if report.get("no_kernel"):
        return None, f"the kernel for {rel} did not start: {report['no_kernel']}"
    try:
        executed = nbv.loads(NO_LINKS.read_text(job / "executed.ipynb"), str(rel))
    except (OSError, nbv.NotebookProblem) as exc:
        return None, f"{rel}: the run's notebook could not be read back ({exc}); nothing was saved"
    ran = [str(i) for i in report.get("ran") or []]
    _take_outputs(nb, executed, chosen, ran)
    return nb, _summary(rel, nb, chosen, ran, report, took, timeout, partial=cells is not None)


def _prepare(shell: WorkerShell, rel: PurePosixPath, nb: Any) -> Path:
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
    root: Path,
    shell: WorkerShell,
    groups: ProcessGroups | None,
    rel: PurePosixPath,
    job: Path,
    cells: list[str] | None,
    timeout: int,
) -> CommandResult:
    words = [sys.executable, str(job.parent / RUNNER.name), str(job), f"--timeout={timeout}"]
    if cells is not None:
        words.append(f"--cells={','.join(cells)}")
    env = command_env.worker_env(root, shell.home)
    env.pop("MPLBACKEND", None)  # a notebook's figures are shown inline, as in JupyterLab
    # Jupyter's and IPython's own files in the worker's home (the kernel's connection file and
    # sockets go to a folder of the runner's in /tmp: a Unix socket's path is at most 107
    # bytes, and a home deep in a workspace can be longer)
    env["IPYTHONDIR"] = str(shell.home / ".ipython")
    env["JUPYTER_RUNTIME_DIR"] = str(shell.home / ".jupyter" / "runtime")
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    folder = rel.parent.as_posix()
    return run_command(
        f"cd {shlex.quote(folder)} && {shlex.join(words)}",
        cwd=root,
        env=env,
        log_path=shell.log_dir / f"{next(shell.counter):04d}.log",
        timeout=timeout + STARTUP_S,
        cancel=shell.cancel,
        groups=groups,
        owner=shell.worker_id,
        confinement=shell.confinement,
    )


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
    tail = [nbv.plain_text(line) for line in result.output.strip().splitlines()[-8:]]
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
    frames = [nbv.plain_text(str(f)).rstrip("\n") for f in output.get("traceback") or []]
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
    code = sum(1 for c in nb.cells if is_code(c))
    if not failed:
        what = (
            f"{len(ran)} of {code} code cells ({', '.join(ran)})"
            if partial
            else f"{code} code cell{'s' if code != 1 else ''}"
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
