"""Recording's cost: the default offline auto run with and without `--record`.

Runs the project in this process (`Project.create(..., record=…)`, the offline model, the
default stage table, auto mode) in an empty folder, alternating a plain run and a recording
run, `--reps` pairs. Two figures:

- **recording's own time**: the time spent in the recorder's callbacks
  (`Recorder.on_chat_model_start`, `on_llm_end`: views, redaction, hashes, the write) and in
  `WorkerSession.turn_config` (which reads the checkpoint once per turn to number the calls
  only when a run records), as a share of the recording run's wall time — timed directly, so
  it is not lost in the noise of a shared machine. This is the target's figure.
- **wall-time ratio**: median recording run / median plain run − 1 (noisy: two cores shared).

The offline model answers in well under a millisecond, so a run is almost all overhead and
this share is the worst case: against a real model, whose calls take seconds, the same
absolute cost is a far smaller share.

    python benchmarks/recording.py [--reps 3] [--quick] [--json OUT]

Target (issue 19): recording costs under 5 % of a run's wall time.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter.app.project import Project  # noqa: E402
from lightscientist_jupyter.runtime.recording import recorder as recording  # noqa: E402
from lightscientist_jupyter.runtime.session.session import WorkerSession  # noqa: E402

_spent = {"seconds": 0.0}
_lock = threading.Lock()


def _timed(cls: Any, name: str) -> None:
    """Wrap `cls.name` so that its time adds to `_spent` (this script only)."""
    original = getattr(cls, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            with _lock:
                _spent["seconds"] += time.perf_counter() - began

    setattr(cls, name, wrapper)


def one_run(folder: Path, record: bool, stage: str | None, until: str | None) -> dict[str, Any]:
    _spent["seconds"] = 0.0
    began = time.perf_counter()
    project = Project.create(folder, C.GOAL, mode="auto", stage=stage, record=record, until=until)
    try:
        status = project.run()
    finally:
        project.close()
    wall = time.perf_counter() - began
    files = sorted((folder / ".lightscientist" / "recordings").glob("*.jsonl"))
    texts = [f.read_text(encoding="utf-8") for f in files]
    calls = sum(text.count('"kind": "call"') for text in texts)  # not the run and update lines
    return {
        "record": record,
        "status": status,
        "wall_s": wall,
        "recording_s": _spent["seconds"] if record else 0.0,
        "recording_bytes": sum(f.stat().st_size for f in files),
        "calls": calls,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="pairs of runs (3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"one pair from experiment.setup until {C.QUICK_SEARCH_UNTIL}",
    )
    parser.add_argument("--json", default=None, help="write the report for run_all.py here")
    args = parser.parse_args(argv)
    reps, stage, until = (
        (1, "experiment.setup", C.QUICK_SEARCH_UNTIL) if args.quick else (args.reps, None, None)
    )
    for name in ("on_chat_model_start", "on_llm_end"):
        _timed(recording.Recorder, name)
    _timed(WorkerSession, "turn_config")

    report = C.Report("Recording")
    runs: list[dict[str, Any]] = []
    for rep in range(reps):
        for record in (False, True):
            folder = Path(tempfile.mkdtemp(prefix="ls-bench-record-"))
            try:
                runs.append(one_run(folder / "project", record, stage, until))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            r = runs[-1]
            print(
                f"  pair {rep + 1}/{reps}, {'recording' if record else 'plain'}: "
                f"{r['wall_s']:.2f} s ({r['status']})"
                + (f", recorder {r['recording_s'] * 1000:.0f} ms" if record else ""),
                flush=True,
            )
    plain = [r for r in runs if not r["record"]]
    rec = [r for r in runs if r["record"]]
    share = C.median([r["recording_s"] / r["wall_s"] for r in rec])
    ratio = C.median([r["wall_s"] for r in rec]) / C.median([r["wall_s"] for r in plain]) - 1
    per_call = C.median([r["recording_s"] / max(r["calls"], 1) for r in rec])
    report.say(
        "The offline auto run"
        + (f" from {stage}" if stage else " (the default table)")
        + (f" until {until}" if until else "")
        + f", in this process, {reps} pair(s) of a plain and a recording run."
    )
    report.table(
        ["run", "wall", "recorder's time", "share", "calls recorded", "recording size"],
        [
            [
                "recording" if r["record"] else "plain",
                f"{r['wall_s']:.2f} s",
                f"{r['recording_s'] * 1000:.0f} ms" if r["record"] else "",
                f"{100 * r['recording_s'] / r['wall_s']:.2f} %" if r["record"] else "",
                r["calls"] if r["record"] else "",
                C.fmt_bytes(r["recording_bytes"]) if r["record"] else "",
            ]
            for r in runs
        ],
    )
    report.say(
        f"Medians: recording's own time {100 * share:.2f} % of a recording run's wall time "
        f"({per_call * 1000:.2f} ms per model call); wall-time ratio recording / plain − 1 = "
        f"{100 * ratio:+.1f} % (noise included)."
    )
    report.check(
        C.target(
            "recording's cost in a run's wall time",
            f"{100 * share:.2f} % ({100 * ratio:+.1f} % wall-time ratio)",
            "< 5 %",
            value=100 * share,
            limit=5,
            higher=False,
            why="see the recorder's time per call; redaction and hashing scan every message",
        )
    )
    report.data = {"runs": runs, "share": share, "ratio": ratio, "per_call_s": per_call}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
