"""The notebook run: what the workers' `notebook_run` costs over running the same code as a
script with their `execute` tool, both inside the worker's bubblewrap sandbox when it works
here.

A notebook of five code cells (numpy: data, a loop of fits, a summary table printed) is made
with `notebook_create`; the same cells, joined, are `experiment/analysis.py`. Each is run
`--runs` times, alternating: the notebook with `notebook_run` (a fresh kernel each time,
started with nbclient by the runner in the sandbox, the outputs saved into the notebook), the
script with `execute` (`cd experiment && python analysis.py`). The overhead is the difference
of the medians: starting the runner, nbclient and a kernel, and saving the notebook.

    python benchmarks/notebook.py [--runs 5] [--quick] [--json OUT]

Target: the overhead is at most 1.5 s per notebook (median).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter.runtime.notebook_tools import Notebooks  # noqa: E402
from lightscientist_jupyter.runtime.sandbox import bwrap  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell, WorkspaceBackend  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy  # noqa: E402

CELLS = [
    ("data", "import numpy as np\nrng = np.random.default_rng(0)\nx = rng.normal(size=(2000, 8))"),
    ("truth", "w = np.arange(8) / 8\ny = x @ w + rng.normal(scale=0.1, size=2000)"),
    (
        "fits",
        "fits = []\nfor n in (100, 500, 2000):\n"
        "    coef, *_ = np.linalg.lstsq(x[:n], y[:n], rcond=None)\n"
        "    fits.append((n, float(np.abs(coef - w).max())))",
    ),
    ("table", "for n, err in fits:\n    print(f'{n:5d} {err:.4f}')"),
    ("summary", "print('largest error', max(err for _, err in fits))"),
]
NOTEBOOK = "experiment/analysis.ipynb"
SCRIPT = "experiment/analysis.py"


def timed(call: Callable[[], str], check: str) -> tuple[float, str]:
    """Wall seconds of `call` and what it answered, which must contain `check`."""
    began = time.perf_counter()
    message = call()
    took = time.perf_counter() - began
    if check not in message:
        raise SystemExit(f"the run failed:\n{message}")
    return took, message


def main(argv: list[str] | None = None) -> int:
    args = C.runs_arguments(__doc__, argv, "runs")
    report = C.Report("The notebook run")
    sandboxed = bwrap.problem() is None
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-nb-")).resolve()
    groups = ProcessGroups()
    notebook_s: list[float] = []
    script_s: list[float] = []
    try:
        root = folder / "ws"
        (root / "experiment").mkdir(parents=True)
        (root / SCRIPT).write_text("\n\n".join(source for _, source in CELLS) + "\n")
        shell = WorkerShell.of(root, "analyst", threading.Event(), ShellPolicy(sandbox=sandboxed))
        books = Notebooks(root, groups, lambda: shell)
        backend = WorkspaceBackend(root, groups=groups, shell_of=lambda: shell)
        books.create(NOTEBOOK, [{"id": i, "source": s} for i, s in CELLS])
        message = ""
        for _ in range(args.runs):
            took, message = timed(lambda: books.run(NOTEBOOK), "no error")
            notebook_s.append(took)
            took, _ = timed(
                lambda: backend.execute("cd experiment && python analysis.py").output,
                "largest error",
            )
            script_s.append(took)
    finally:
        groups.kill_all()
        shutil.rmtree(folder, ignore_errors=True)

    overhead = C.median(notebook_s) - C.median(script_s)
    where = "in bubblewrap" if sandboxed else "unsandboxed (bubblewrap does not work here)"
    report.say(
        f"Five numpy cells run {where}, {args.runs} times each, alternating: as a notebook with "
        f"`notebook_run` (a fresh kernel each time, outputs saved) and as a script with "
        f"`execute`; wall seconds. The tool's message: `{message}`."
    )
    report.table(
        ["run", "min", "median", "max"],
        [
            C.spread(name, s)
            for name, s in (("notebook_run", notebook_s), ("execute (script)", script_s))
        ],
    )
    report.check(
        C.target(
            "notebook_run over the same code as a script (medians)",
            f"+{overhead:.2f} s ({C.median(notebook_s):.2f} s against {C.median(script_s):.2f} s)",
            "≤ 1.5 s",
            value=overhead,
            limit=1.5,
            higher=False,
            why="a kernel's start (ipykernel imports IPython and matplotlib's backend registry) "
            "and nbclient's import, on a busy machine",
        )
    )
    report.data = {
        "notebook_s": notebook_s,
        "script_s": script_s,
        "overhead_s": overhead,
        "sandboxed": sandboxed,
        "message": message,
    }
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
