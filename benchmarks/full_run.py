"""The full run: wall time and peak memory of the default offline auto run, and the size of
what it leaves on disk.

Runs `python -m lightscientist_jupyter research GOAL --mode auto` (the offline model, the
default stage table) in an empty folder, as a user would, `--reps` times. Memory is measured
two ways:

- **process tree peak**: the sum of the RSS of the `lightscientist` process and every
  descendant (the experiment scripts, the figure, …), sampled from /proc every `--poll` s;
  a spike shorter than the interval can be missed;
- **largest process peak**: `resource.getrusage(RUSAGE_CHILDREN).ru_maxrss` after the run —
  the kernel's exact high-water mark of the largest single process among the descendants
  (not a sum), normally the `lightscientist` process itself.

After each run: the size of `.lightscientist/checkpoints.sqlite` (with its `-wal` and `-shm`
files, which stay on disk when the process exits without closing the connection) and of
`.lightscientist/events.jsonl`.

    python benchmarks/full_run.py [--reps 3] [--quick] [--json OUT]

Targets (issue 17; issues 4 and 8 had ≤ 20 s and ≤ 400 MB): ≤ 6 s, ≤ 250 MB, and at most
3 MB of checkpoints with no WAL file left.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def _processes() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, RSS bytes) for every process we can read."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        out[int(name)] = (int(fields[1]), int(fields[21]) * PAGE)  # ppid, rss pages
    return out


def tree_rss(root: int) -> tuple[int, int]:
    """(RSS of `root` and all its descendants, number of processes)."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    total, count, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            total += procs[pid][1]
            count += 1
        todo.extend(children.get(pid, ()))
    return total, count


def breakdown(events: Path, began: float, ended: float) -> dict[str, float]:
    """Where one run's wall time went, from its event log: before the first event (Python,
    the imports, the project's set-up), while at least one worker command or job ran (the
    real work: the union of their intervals, so parallel probes count once), after the last
    event (closing, exit), and the rest (orchestration and model steps)."""
    spans, open_calls, open_jobs = [], {}, {}
    first = last = None
    with events.open(encoding="utf-8") as fh:
        for line in fh:
            e = json.loads(line)
            first = e["ts"] if first is None else first
            last = e["ts"]
            data, who = e.get("data") or {}, e.get("worker_id")
            if data.get("tool") == "execute" and e["type"] == "tool.call":
                open_calls.setdefault(who, []).append(e["ts"])
            elif data.get("tool") == "execute" and e["type"] == "tool.result":
                if open_calls.get(who):
                    spans.append((open_calls[who].pop(0), e["ts"]))
            elif e["type"] in ("job.submitted", "job.finished"):
                job = (data.get("job") or {}).get("id")
                if e["type"] == "job.submitted":
                    open_jobs[job] = e["ts"]
                elif job in open_jobs:
                    spans.append((open_jobs.pop(job), e["ts"]))
    commands, reach = 0.0, 0.0
    for start, end in sorted(spans):
        start = max(start, reach)
        if end > start:
            commands += end - start
            reach = end
    first, last = first or began, last or ended
    return {
        "before_first_event_s": first - began,
        "commands_s": commands,
        "after_last_event_s": ended - last,
        "orchestration_s": (last - first) - commands,
    }


def one_run(folder: Path, poll: float, stage: str | None, until: str | None) -> dict[str, Any]:
    ws = folder / "project"
    cmd = [
        sys.executable,
        "-m",
        "lightscientist_jupyter",
        "research",
        C.GOAL,
        "--mode",
        "auto",
        "--workspace",
        str(ws),
    ]
    cmd += ["--stage", stage] if stage else []
    cmd += ["--until", until] if until else []
    peak, peak_procs, samples = 0, 0, 0
    began_wall = time.time()
    began = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=C.cli_env()
    )
    while proc.poll() is None:
        rss, n = tree_rss(proc.pid)
        samples += 1
        if rss > peak:
            peak, peak_procs = rss, n
        time.sleep(poll)
    out, err = proc.communicate()
    wall = time.perf_counter() - began
    ended_wall = began_wall + wall
    last = (out.strip().splitlines() or [""])[-1]
    if proc.returncode != 0 or last != C.end_of(until):
        raise SystemExit(
            f"the run did not end {C.end_of(until)} ({proc.returncode}, {last!r}):\n{err[-3000:]}"
        )
    state = ws / ".lightscientist"
    db = state / "checkpoints.sqlite"
    sizes = {
        "sqlite": db.stat().st_size,
        "sqlite_wal": (
            db.with_name(db.name + "-wal").stat().st_size
            if db.with_name(db.name + "-wal").exists()
            else 0
        ),
        "sqlite_shm": (
            db.with_name(db.name + "-shm").stat().st_size
            if db.with_name(db.name + "-shm").exists()
            else 0
        ),
        "events_bytes": (state / "events.jsonl").stat().st_size,
    }
    with (state / "events.jsonl").open("rb") as fh:
        n_events = sum(1 for _ in fh)
    return {
        **breakdown(state / "events.jsonl", began_wall, ended_wall),
        "wall_s": wall,
        "tree_peak": peak,
        "tree_procs": peak_procs,
        "samples": samples,
        "events": n_events,
        **sizes,
    }


def starting_point() -> str:
    """What a run starts from besides the code: the package's compiled bytecode (a wheel
    install compiles it; `scripts/setup` does for the editable install) and the user's
    matplotlib font list, which a new project copies
    (`runtime.sandbox.command_env.seed_font_list`)."""
    import lightscientist_jupyter
    from lightscientist_jupyter.runtime.sandbox.command_env import user_font_lists

    sources = list(Path(lightscientist_jupyter.__file__).parent.rglob("*.py"))
    stale = 0
    for src in sources:
        pyc = Path(importlib.util.cache_from_source(str(src)))
        stale += not pyc.exists() or pyc.stat().st_mtime < src.stat().st_mtime
    fonts = user_font_lists()
    return (
        f"{len(sources) - stale} of the package's {len(sources)} modules had current bytecode; "
        + (
            f"the user's matplotlib font list ({fonts[0]}) was there to copy"
            if fonts
            else "there was no user matplotlib font list, so each run's first figure built one"
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--poll", type=float, default=0.02, help="RSS sampling interval (s)")
    C.span_arguments(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny: one run from experiment.setup until {C.QUICK_UNTIL}",
    )
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps = 1
        C.quick_span(args)

    report = C.Report("Full run")
    runs = []
    for rep in range(args.reps):
        folder = Path(tempfile.mkdtemp(prefix="ls-bench-full-"))
        try:
            runs.append(one_run(folder, args.poll, args.stage, args.until))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        r = runs[-1]
        print(
            f"  run {rep + 1}/{args.reps}: {r['wall_s']:.2f} s, tree peak "
            f"{C.fmt_bytes(r['tree_peak'])}",
            flush=True,
        )
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux

    med = {k: C.median([r[k] for r in runs]) for k in runs[0]}
    report.say(
        f'`lightscientist research "{C.GOAL}" --mode auto`'
        f"{C.span_words(args.stage, args.until)} in an empty folder, offline "
        f"model, {args.reps} run(s), RSS sampled every {args.poll * 1000:.0f} ms; "
        f"{starting_point()}."
    )
    report.table(
        [
            "run",
            "wall",
            "tree RSS peak",
            "processes then",
            "checkpoints.sqlite",
            "+ -wal",
            "events.jsonl (lines)",
        ],
        [
            [
                i + 1,
                f"{r['wall_s']:.2f} s",
                C.fmt_bytes(r["tree_peak"]),
                r["tree_procs"],
                C.fmt_bytes(r["sqlite"]),
                C.fmt_bytes(r["sqlite_wal"]),
                f"{C.fmt_bytes(r['events_bytes'])} ({r['events']:,})",
            ]
            for i, r in enumerate(runs)
        ],
    )
    report.say(
        f"Medians: wall {med['wall_s']:.2f} s; process-tree peak "
        f"{C.fmt_bytes(med['tree_peak'])}; largest single process (ru_maxrss, all runs) "
        f"{C.fmt_bytes(largest)}; checkpoints.sqlite {C.fmt_bytes(med['sqlite'])} + WAL "
        f"{C.fmt_bytes(med['sqlite_wal'])} + shm {C.fmt_bytes(med['sqlite_shm'])} left "
        f"after exit; events.jsonl {C.fmt_bytes(med['events_bytes'])} "
        f"({med['events']:,.0f} events). The wall time includes starting Python and "
        "importing LangChain, LangGraph and deepagents."
    )
    parts = (
        f"{med['before_first_event_s']:.2f} s before the first event (starting Python, "
        f"importing LangChain, LangGraph and deepagents, the project's set-up), "
        f"{med['commands_s']:.2f} s while a worker's command or job ran (the study's real "
        f"scripts: numpy runs, pandas, the matplotlib figure, the paper's check; parallel "
        f"commands counted once), {med['orchestration_s']:.2f} s for the three layers and the "
        f"model steps, {med['after_last_event_s']:.2f} s to exit"
    )
    report.say(f"Where the wall time went (medians): {parts}.")
    floor = med["before_first_event_s"] + med["commands_s"]
    report.check(
        C.target(
            "full offline auto run, wall time",
            f"{med['wall_s']:.2f} s",
            "≤ 6 s",
            value=med["wall_s"],
            limit=6,
            higher=False,
            why=f"{parts}: the imports and the real commands alone take {floor:.2f} s "
            "(see overhead.py for the layers' share against a bare agent)",
        )
    )
    report.check(
        C.target(
            "full offline auto run, peak memory",
            f"{C.fmt_bytes(med['tree_peak'])} (process tree)",
            "≤ 250 MB",
            value=med["tree_peak"] / 2**20,
            limit=250,
            higher=False,
            why="the process tree includes the experiment's numpy and matplotlib processes",
        )
    )
    left = max(r["sqlite"] + r["sqlite_wal"] + r["sqlite_shm"] for r in runs)
    wal = max(r["sqlite_wal"] for r in runs)
    report.check(
        C.target(
            "checkpoint storage after a full offline run",
            f"{C.fmt_bytes(left)}" + (f" (WAL {C.fmt_bytes(wal)} left)" if wal else ", no WAL"),
            "≤ 3 MB, no WAL",
            value=left / 2**20 if not wal else max(left / 2**20, 3 + wal / 2**20),
            limit=3,
            higher=False,
            why="a WAL left behind means the checkpoint connection was not closed"
            if wal
            else "intermediate checkpoints of threads that are still resumable",
        )
    )
    report.data = {"runs": runs, "largest_process": largest}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
