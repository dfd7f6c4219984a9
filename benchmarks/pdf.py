"""The paper's PDF build: seconds for the workers' `build_pdf` tool to compile the offline
study's `paper/paper.tex` (latexmk: pdflatex and BibTeX, as often as the references need) to
`paper/paper.pdf`, inside the worker's bubblewrap sandbox when it works here.

The workspace is made once, as a run makes it: the study's scripts run for real (experiment,
analysis, figure 1), three works of the shipped library are cited as the `cite` tool cites
them, and `paper/build_paper.py` writes the source. Then two builds are timed, each `--runs`
times:

- **first build**: the worker's auxiliary folder emptied before each, as at a worker's first
  call (pdflatex, BibTeX, pdflatex twice more for the citations and references);
- **unchanged source**: the folder kept, so latexmk finds nothing to redo (what a second call
  without an edit costs).

    python benchmarks/pdf.py [--runs 5] [--quick] [--json OUT]

Target: the first build takes at most 10 s (median).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter import offline  # noqa: E402
from lightscientist_jupyter.literature import Literature  # noqa: E402
from lightscientist_jupyter.offline.study.files import (  # noqa: E402
    ANALYSIS,
    analysis_files,
    script_files,
    write_into,
)
from lightscientist_jupyter.runtime.latex_tools import build_pdf, missing_toolchain  # noqa: E402
from lightscientist_jupyter.runtime.sandbox import bwrap  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy  # noqa: E402

SCRIPTS = (
    "experiment/run_experiment.py",
    ANALYSIS,
    "paper/figures/make_figures.py",
    "paper/build_paper.py",
)
CITED = ("warmup large minibatch", "variance adaptive learning rate", "transformer")


def make_paper(root: Path) -> None:
    """The offline study's workspace up to paper/paper.tex, made by its real scripts."""
    for target in SCRIPTS:
        write_into(root, analysis_files() if target == ANALYSIS else script_files(target))
    hub = Literature(root, Path(offline.__file__).parent / "library" / "warmup.bib")
    for query in CITED:
        hub.cite(hub.search(query, sources=["library"])["results"][0]["id"])
    env = dict(os.environ, MPLBACKEND="Agg")
    for target in SCRIPTS:
        goal = [C.GOAL] if target == "paper/build_paper.py" else []
        run = ["-m", "jupyter", "execute", "--inplace"] if target == ANALYSIS else []
        subprocess.run(
            [sys.executable, *run, target, *goal],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
        )


def timed(root: Path, shell: WorkerShell, runs: int, fresh: bool) -> tuple[list[float], str]:
    """Wall seconds of `runs` builds (the auxiliary folder emptied first when `fresh`), and
    the last build's message."""
    seconds, message = [], ""
    for _ in range(runs):
        if fresh:
            shutil.rmtree(shell.home / "latex", ignore_errors=True)
        began = time.perf_counter()
        message = build_pdf(root, "paper/paper.tex", shell)
        seconds.append(time.perf_counter() - began)
        if not message.startswith("built "):
            raise SystemExit(f"the build failed:\n{message}")
    return seconds, message


def main(argv: list[str] | None = None) -> int:
    args = C.runs_arguments(__doc__, argv, "builds")
    report = C.Report("The paper's PDF")
    missing = missing_toolchain()
    if missing:
        report.say(f"{' and '.join(missing)} not found: scripts/setup installs TeX")
        report.check(
            C.target(
                "first build of the offline paper (median)",
                "no TeX",
                "≤ 10 s",
                value=float("inf"),
                limit=10,
                higher=False,
                why="no TeX toolchain on this machine",
            )
        )
        report.write(args.json)
        return 0
    sandboxed = bwrap.problem() is None
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-pdf-")).resolve()
    try:
        root = folder / "ws"
        root.mkdir()
        make_paper(root)
        shell = WorkerShell.of(root, "writer", threading.Event(), ShellPolicy(sandbox=sandboxed))
        first, message = timed(root, shell, args.runs, fresh=True)
        again, _ = timed(root, shell, args.runs, fresh=False)
        pages = re.search(r"(\d+) pages", message)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    where = "in bubblewrap" if sandboxed else "unsandboxed (bubblewrap does not work here)"
    report.say(
        f"The offline paper ({pages.group(1) if pages else '?'} pages, figure 1, three cited "
        f"works), built by `build_pdf` {where}; wall seconds over {args.runs} builds each. "
        f"The tool's message: `{message}`."
    )
    report.table(
        ["build", "min", "median", "max"],
        [C.spread(name, s) for name, s in (("first build", first), ("unchanged source", again))],
    )
    report.check(
        C.target(
            "first build of the offline paper (median)",
            f"{C.median(first):.2f} s",
            "≤ 10 s",
            value=C.median(first),
            limit=10,
            higher=False,
            why="pdflatex runs three times and BibTeX once, on a busy machine",
        )
    )
    report.data = {
        "first_s": first,
        "unchanged_s": again,
        "sandboxed": sandboxed,
        "message": message,
    }
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
