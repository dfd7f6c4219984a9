"""A snapshot's cost: the time layer 1 spends recording the workspace in its history.

Runs the default offline auto run in this process (`Project.create(..., mode="auto")`), timing
every snapshot the controller takes (`History.take_all`: staging the files in the history's
own index, writing the tree and a commit per snapshot), then on the finished workspace times
a snapshot with nothing changed and one after a small file changed, `--reps` times each.

    python benchmarks/snapshots.py [--reps 20] [--quick] [--json OUT]

Target (issue 12): a snapshot takes under 50 ms on the default offline run's workspace.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter.app.project import Project  # noqa: E402
from lightscientist_jupyter.history.snapshots import History  # noqa: E402
from lightscientist_jupyter.workspace import Workspace  # noqa: E402

_taken: list[float] = []


def _timed_take() -> None:
    """Time `History.take_all`, what layer 1 calls: one staging for the snapshots one step
    makes due (a finish and the next start), each its own commit; counted per snapshot."""
    original = History.take_all

    @functools.wraps(original)
    def wrapper(self: History, marks: Any, at: float) -> Any:
        began = time.perf_counter()
        try:
            return original(self, marks, at)
        finally:
            _taken.extend([(time.perf_counter() - began) / max(1, len(marks))] * len(marks))

    History.take_all = wrapper  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="snapshots timed afterwards (20)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"from experiment.setup until {C.QUICK_SEARCH_UNTIL}, 3 reps",
    )
    parser.add_argument("--json", default=None, help="write the report for run_all.py here")
    args = parser.parse_args(argv)
    reps, stage, until = (
        (3, "experiment.setup", C.QUICK_SEARCH_UNTIL) if args.quick else (args.reps, None, None)
    )
    _timed_take()
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-snap-"))
    try:
        root = folder / "project"
        began = time.perf_counter()
        project = Project.create(root, C.GOAL, mode="auto", stage=stage, until=until)
        try:
            status = project.run()
        finally:
            project.close()
        wall = time.perf_counter() - began
        in_run = list(_taken)
        history = History(Workspace.at(root))
        files, _ = history.files()
        size = sum((root / f).stat().st_size for f in files)
        idle, touched = [], []
        for rep in range(reps):
            _taken.clear()
            history.take_all([("bench", 1, "finish")], time.time())
            idle.extend(_taken)
            (root / "bench-note.md").write_text(f"note {rep}\n")
            _taken.clear()
            history.take_all([("bench", 1, "finish")], time.time())
            touched.extend(_taken)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    report = C.Report("Snapshots")
    report.say(
        "The offline auto run"
        + (f" from {stage}" if stage else " (the default table)")
        + (f" until {until}" if until else "")
        + f", in this process ({status}, {wall:.1f} s): {len(in_run)} snapshots during the "
        f"run; then {reps} snapshots of its finished workspace ({len(files)} files, "
        f"{C.fmt_bytes(size)}) unchanged and {reps} after one small file changed."
    )
    rows = [
        ("during the run", in_run),
        ("finished workspace, unchanged", idle),
        ("finished workspace, one file changed", touched),
    ]
    report.table(
        ["snapshots", "count", "median", "max"],
        [
            [name, len(v), f"{C.median(v) * 1000:.1f} ms", f"{max(v) * 1000:.1f} ms"]
            for name, v in rows
        ],
    )
    worst = max(C.median(v) for _, v in rows)
    report.check(
        C.target(
            "one snapshot of the default offline run's workspace",
            f"{worst * 1000:.1f} ms (median, worst of the three)",
            "< 50 ms",
            value=worst * 1000,
            limit=50,
            higher=False,
            why="a snapshot runs git add, write-tree, commit-tree and update-ref (a finish and "
            "the next start share the first two)",
        )
    )
    report.data = {"in_run_s": in_run, "idle_s": idle, "touched_s": touched, "files": len(files)}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
