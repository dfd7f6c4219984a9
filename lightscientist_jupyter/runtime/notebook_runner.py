"""Run a notebook's code cells in a fresh kernel: the command `notebook_run` starts in the
worker's sandbox (see `notebook_tools`).

This file is copied into the worker's home and run there by the sandbox's Python, where the
package itself is not importable (the sandbox mounts the Python environment, not the
package's source): it imports nothing but the standard library, nbformat, nbclient and their
own dependencies (jupyter_client, jupyter_core).

    python notebook_runner.py JOB_FOLDER [--cells ID,ID] [--timeout SECONDS]

It reads `JOB_FOLDER/input.ipynb`, runs its code cells (or only those named) in order in a
new kernel whose working folder is the current one, stops at the first cell that raises, and
writes `JOB_FOLDER/executed.ipynb` (outputs up to and including that cell) and
`JOB_FOLDER/result.json`: which cells ran, which one failed or ran out of time, or why the
kernel could not start. The kernel's connection file and sockets are in a private temporary
folder (`ipc` transport: no port is opened, on any network the sandbox has). The kernel is
started first, and nbformat and nbclient imported while it starts: the kernel's start is most
of a short run's time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# jsonschema imports this optional IRI checker when it is installed, and building its grammar
# takes 1.7 s here; notebook schemas use no IRI format, so it is left out (jsonschema skips
# the format when the import fails)
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from jupyter_client.manager import AsyncKernelManager  # noqa: E402
from jupyter_core.utils import run_sync  # noqa: E402

KERNEL = "python3"


def start_kernel(folder: str) -> AsyncKernelManager:
    """A new kernel in the current folder, its connection file and sockets in `folder`."""
    manager = AsyncKernelManager(
        kernel_name=KERNEL,
        transport="ipc",
        connection_file=os.path.join(folder, "kernel.json"),
        ip=os.path.join(folder, "k"),
    )
    run_sync(manager.start_kernel)(cwd=os.getcwd())
    return manager


def run(job: Path, cells: list[str] | None, timeout: float) -> dict[str, Any]:
    """Run the notebook of `job`, write the executed one there; the result to report."""
    result: dict[str, Any] = {"ran": []}
    folder = tempfile.mkdtemp(prefix="nb-kernel-")
    try:
        manager = start_kernel(folder)
    except Exception as exc:  # no kernel to be had (its program missing or failing)
        shutil.rmtree(folder, ignore_errors=True)
        return {**result, "no_kernel": f"{type(exc).__name__}: {exc}"}
    # imported while the kernel starts (0.1-0.2 s of a run that is mostly that start)
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(job / "input.ipynb", as_version=4)
    wanted = set(cells) if cells is not None else None
    deadline = time.monotonic() + timeout
    client = NotebookClient(
        nb,
        km=manager,
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        record_timing=False,
        shutdown_kernel="immediate",
    )
    try:
        with client.setup_kernel(cleanup_kc=True):  # the kernel is shut down at the end
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or (wanted is not None and cell.id not in wanted):
                    continue
                result["ran"].append(cell.id)
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError:
                    result["failed"] = cell.id
                    break
                except CellTimeoutError:
                    result["timed_out"] = cell.id
                    break
                except DeadKernelError:
                    result["died"] = cell.id
                    break
    except Exception as exc:  # the kernel never answered, or failed to stop
        if not result["ran"]:
            result["no_kernel"] = f"{type(exc).__name__}: {exc}"
    finally:
        if run_sync(manager.is_alive)():
            run_sync(manager.shutdown_kernel)(now=True)
        shutil.rmtree(folder, ignore_errors=True)
    nbformat.write(nb, job / "executed.ipynb")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("job", type=Path)
    parser.add_argument("--cells", default=None)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    cells = args.cells.split(",") if args.cells is not None else None
    result = run(args.job, cells, args.timeout)
    (args.job / "result.json").write_text(json.dumps(result) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
