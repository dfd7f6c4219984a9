#!/usr/bin/env python3
"""Run the warmup study: Does learning-rate warmup help plain gradient descent train a small MLP?

Written by LightScientist's offline demo model (see DISCLAIMER in study_design.py). Each run
trains a 2-16-1 tanh MLP by full-batch gradient descent on a fixed generated regression task and
records three metrics: final_loss, best_loss and diverged.

Run from the workspace root:
    python experiment/run_experiment.py                       every planned run
    python experiment/run_experiment.py --run r01 --run r02   only these runs
    python experiment/run_experiment.py --batch 1 --batches 2 runs whose index % 2 == 0
    python experiment/run_experiment.py --status --batches 2  which batches are done
    python experiment/run_experiment.py --check               one short run; writes nothing
    --out PATH   write results to PATH instead of experiment/results.csv; log.md and
                 curves.csv are then left alone (for reproducibility reruns)

Writes experiment/results.csv (run_id,condition,seed,metric,value,status; one row per run and
metric; a diverged run's final_loss is `inf`; a failed run has status `failed` and an empty
value), experiment/curves.csv (run_id,step,loss every 10 steps) and one line per invocation in
experiment/log.md. Rerunning a run replaces its rows; other runs' rows are kept. Every file is
written to a temporary file first and then moved into place (os.replace), under a lock
whose file its holder removes when done.
Results depend only on the settings in study_design.py, never on the clock.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import io
import json
import math
import os
import shlex
import sys
import time
import traceback
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import PlannedRun, fmt, planned_runs, read_rows, write_atomic  # noqa: E402
from study_design import (  # noqa: E402
    DESIGN_SETTINGS,
    LEARNING_RATES,
    METRICS,
    SEEDS,
    STUDY_QUESTION,
    WARMUP_STEPS,
    train,
)

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT = ROOT / "experiment"
RESULTS = EXPERIMENT / "results.csv"
CURVES = EXPERIMENT / "curves.csv"
LOG = EXPERIMENT / "log.md"
DESIGN_FILE = EXPERIMENT / "design.json"
LOCK = EXPERIMENT / ".run_experiment.lock"
RESULT_COLUMNS = ["run_id", "condition", "seed", "metric", "value", "status"]
CURVE_COLUMNS = ["run_id", "step", "loss"]

Row = dict[str, str]
"""A row of results.csv or curves.csv, column -> text."""

RUNS = planned_runs(LEARNING_RATES, WARMUP_STEPS, SEEDS)


# ---- files -------------------------------------------------------------------------------


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """One writer at a time (POSIX advisory lock; a no-op where fcntl is missing). The lock
    file is removed by its holder when it is done, so no run leaves it behind: a writer that
    waited for a file removed meanwhile takes the lock again on the one now in its place."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:
        yield
        return
    while True:
        fh = open(LOCK, "a")
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            if os.stat(LOCK).st_ino == os.fstat(fh.fileno()).st_ino:
                break  # still the lock file: ours
        except FileNotFoundError:
            pass
        fh.close()  # its holder removed it while we waited
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(LOCK)  # still held: nobody can take a lock on it any more
        fh.close()  # releases the lock


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def number(x: float) -> str:
    """Full-precision text of a value: repr of the float (`inf` for a diverged run)."""
    return repr(float(x))


def merge(
    old_rows: list[Row],
    new_rows: list[Row],
    replaced_ids: Container[str],
    key: Callable[[Row], tuple[str | int, ...]],
) -> list[Row]:
    """Keep old rows of runs not replaced, add the new ones, sort."""
    kept = [r for r in old_rows if r.get("run_id") not in replaced_ids]
    return sorted(kept + new_rows, key=key)


def result_key(row: Row) -> tuple[str, int, str]:
    metric = row.get("metric", "")
    return (row.get("run_id", ""), METRICS.index(metric) if metric in METRICS else 99, metric)


def curve_key(row: Row) -> tuple[str, int]:
    try:
        step = int(row.get("step", 0))
    except ValueError:
        step = 0
    return (row.get("run_id", ""), step)


def completed_ids(rows: Iterable[Row]) -> set[str | None]:
    """Run ids with a row for every metric (ok or failed)."""
    seen: dict[str | None, set[str | None]] = {}
    for r in rows:
        seen.setdefault(r.get("run_id"), set()).add(r.get("metric"))
    return {rid for rid, metrics in seen.items() if set(METRICS) <= metrics}


def batch_runs(k: int, n: int) -> list[PlannedRun]:
    return [r for i, r in enumerate(RUNS) if i % n == k - 1]


# ---- running -----------------------------------------------------------------------------


def run_one(run: PlannedRun) -> tuple[list[Row], list[Row], str, bool]:
    """Train one run; returns (result rows, curve rows, one-line outcome, diverged)."""
    base = {"run_id": run["run_id"], "condition": run["condition"], "seed": str(run["seed"])}
    try:
        r = train(run["lr"], run["warmup"], run["seed"])
    except Exception:
        print(f"{run['run_id']} failed:\n{traceback.format_exc()}", file=sys.stderr)
        rows = [dict(base, metric=m, value="", status="failed") for m in METRICS]
        return rows, [], "failed (see stderr)", False
    rows = [
        dict(base, metric="final_loss", value=number(r["final_loss"]), status="ok"),
        dict(base, metric="best_loss", value=number(r["best_loss"]), status="ok"),
        dict(base, metric="diverged", value=str(int(r["diverged"])), status="ok"),
    ]
    curve = [{"run_id": run["run_id"], "step": str(s), "loss": number(v)} for s, v in r["curve"]]
    if r["diverged"]:
        text = f"ok, diverged at step {r['diverged_at']} (best loss {fmt(r['best_loss'])})"
    else:
        text = f"ok, final loss {fmt(r['final_loss'])}"
    return rows, curve, text, bool(r["diverged"])


def execute(
    selected: list[PlannedRun], out: Path, label: str, side_files: bool, batches: int | None
) -> int:
    t0 = time.perf_counter()
    result_rows, curve_rows, outcomes, diverged, failed = [], [], [], [], []
    for run in selected:
        rows, curve, text, div = run_one(run)
        result_rows += rows
        curve_rows += curve
        outcomes.append(f"{run['run_id']} {run['condition']} seed={run['seed']}: {text}")
        if div:
            diverged.append(run["run_id"])
        if rows[0]["status"] != "ok":
            failed.append(run["run_id"])
    ids = {run["run_id"] for run in selected}
    with locked():
        merged = merge(read_rows(out), result_rows, ids, result_key)
        write_atomic(out, csv_text(RESULT_COLUMNS, merged))
        if side_files:
            curves = merge(read_rows(CURVES), curve_rows, ids, curve_key)
            write_atomic(CURVES, csv_text(CURVE_COLUMNS, curves))
        elapsed = time.perf_counter() - t0
        done = completed_ids(merged)
        pending = [r["run_id"] for r in RUNS if r["run_id"] not in done]
        if side_files:
            append_log(label, selected, failed, diverged, elapsed, pending)
    for line in outcomes:
        print(line)
    print(
        f"wrote {len(result_rows)} rows for {len(selected)} run(s) to {out}"
        + (
            "; curves to experiment/curves.csv; log line in experiment/log.md"
            if side_files
            else "; log.md and curves.csv left alone (--out)"
        )
    )
    pending_text = ", ".join(pending) if pending else "none"
    if batches:
        open_batches = [
            k
            for k in range(1, batches + 1)
            if any(r["run_id"] in pending for r in batch_runs(k, batches))
        ]
        pending_text = ("batch " + ", ".join(map(str, open_batches))) if open_batches else "none"
    print(
        f"{label}: {len(selected) - len(failed)} run(s) ok, {len(failed)} failed, "
        f"{len(diverged)} diverged, {elapsed:.2f} s; {len(done & {r['run_id'] for r in RUNS})} "
        f"of {len(RUNS)} planned runs recorded; pending: {pending_text}"
    )
    return 1 if failed else 0


def append_log(
    label: str,
    selected: list[PlannedRun],
    failed: list[str],
    diverged: list[str],
    elapsed: float,
    pending: list[str],
) -> None:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    command = "python experiment/run_experiment.py" + (
        " " + shlex.join(sys.argv[1:]) if sys.argv[1:] else ""
    )
    line = (
        f"- {stamp} · {label} · `{command}` · runs {', '.join(r['run_id'] for r in selected)} "
        f"· {len(selected) - len(failed)} ok, {len(failed)} failed"
        f"{' (' + ', '.join(failed) + ')' if failed else ''} · diverged: "
        f"{', '.join(diverged) if diverged else 'none'} · {elapsed:.2f} s · still pending: "
        f"{', '.join(pending) if pending else 'none'}\n"
    )
    text = (
        LOG.read_text(encoding="utf-8")
        if LOG.exists()
        else (
            "# Experiment log\n\nOne line per invocation of experiment/run_experiment.py, "
            "appended by the script: time (UTC), what ran, the exact command, outcome, wall "
            "time and the runs still pending. Results never depend on the clock.\n\n"
        )
    )
    if not text.endswith("\n"):
        text += "\n"
    write_atomic(LOG, text + line)


def status(out: Path, n: int) -> int:
    rows = read_rows(out)
    done = completed_ids(rows)
    all_done = True
    for k in range(1, n + 1):
        ids = [r["run_id"] for r in batch_runs(k, n)]
        missing = [i for i in ids if i not in done]
        if not ids:
            print(f"batch {k}: done (empty: the plan has {len(RUNS)} runs)")
        elif missing:
            all_done = False
            print(
                f"batch {k}: pending ({len(missing)} of {len(ids)} runs missing: "
                f"{', '.join(missing)})"
            )
        else:
            failed = sorted(
                {r["run_id"] for r in rows if r.get("run_id") in ids and r.get("status") != "ok"}
            )
            print(
                f"batch {k}: done ({len(ids)} runs"
                + (f"; failed: {', '.join(failed)}" if failed else "")
                + ")"
            )
    print("all batches done" if all_done else "some batches pending")
    return 0


def check() -> int:
    a = train(0.2, 0, 0, steps=20)
    b = train(0.2, 0, 0, steps=20)
    if a["diverged"] or not math.isfinite(a["final_loss"]):
        print(f"check failed: the smoke run diverged (final loss {a['final_loss']})")
        return 1
    if a["final_loss"] != b["final_loss"]:
        print("check failed: two identical smoke runs gave different losses")
        return 1
    print(
        f"ok final_loss={a['final_loss']:.6g} (smoke run: lr=0.2, warmup=0, seed=0, 20 steps; "
        "identical on rerun; nothing written)"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=STUDY_QUESTION)
    p.add_argument(
        "--run", action="append", metavar="RUN_ID", help="run only this run (repeatable)"
    )
    p.add_argument("--batch", type=int, metavar="K", help="run batch K of --batches N")
    p.add_argument("--batches", type=int, metavar="N", help="number of batches (default 1)")
    p.add_argument("--status", action="store_true", help="print which batches are done")
    p.add_argument("--check", action="store_true", help="one short smoke run; writes nothing")
    p.add_argument("--out", metavar="PATH", help="results file (default experiment/results.csv)")
    args = p.parse_args(argv)
    if args.check:
        return check()
    out = Path(args.out) if args.out else RESULTS
    n = 1 if args.batches is None else args.batches
    if n < 1:
        p.error("--batches must be at least 1")
    if args.status:
        return status(out, n)
    # the settings the runs use, beside their results (the paper's design numbers trace here)
    write_atomic(DESIGN_FILE, json.dumps(DESIGN_SETTINGS, indent=2) + "\n")
    if args.batch is not None:
        if args.run:
            p.error("use either --run or --batch, not both")
        if not 1 <= args.batch <= n:
            p.error(f"--batch must be between 1 and --batches ({n})")
        selected = batch_runs(args.batch, n)
        label = f"batch {args.batch} of {n}"
        if not selected:
            print(
                f"{label} is empty: the plan has {len(RUNS)} runs, so batches beyond "
                f"{len(RUNS)} hold none. Nothing to run."
            )
            return 0
        return execute(selected, out, label, args.out is None, n)
    if args.run:
        known = {r["run_id"]: r for r in RUNS}
        unknown = [r for r in args.run if r not in known]
        if unknown:
            p.error(f"unknown run id(s) {', '.join(unknown)}; planned: r01..r{len(RUNS):02d}")
        selected = [r for r in RUNS if r["run_id"] in set(args.run)]
        return execute(
            selected,
            out,
            "runs " + ", ".join(r["run_id"] for r in selected),
            args.out is None,
            None,
        )
    return execute(RUNS, out, "all runs", args.out is None, None)


if __name__ == "__main__":
    sys.exit(main())
