"""Run every benchmark, print its tables, and rewrite benchmarks/RESULTS.md.

    scripts/bench                      # = python benchmarks/run_all.py
    scripts/bench --quick --out /tmp/R.md   # tiny sizes (what the smoke test runs)

Runs, each in its own process, one after the other: prompt_growth.py, overhead.py,
events.py, full_run.py, recording.py, sandbox.py, checkpoints.py (PostgreSQL: it starts a server
of its own), magic_latency.py (the research cell in fresh kernels), snapshots.py (the
workspace history's snapshots), jobs.py (a job's submit to resume, local and on a Ray head it
starts, or on `--ray ADDRESS`), guarded_path.py (µs per file operation through the guarded
path of `beneath` against a plain open), search.py (a search stage: the layers' time per
node, two nodes at a time against one, the supervisor's input as the tree grows), pdf.py
(the offline paper's LaTeX built to a PDF by the workers' build_pdf tool), notebook.py (the
workers' notebook_run against the same code run as a script with execute), memory.py (the
user's memory: a recall and a write in a store of 100,000 entries), memory_prompts.py (a
project's prompts with memory on against off), acp_worker.py (a coding agent's start over
ACP, unsandboxed and in the sandbox) — and cell_latency.py
(the notebook-latency benchmark; it needs a Jupyter kernel, about 15 s; `--no-latency` skips
it, `--quick` skips it unless `--latency` is given). RESULTS.md records the machine (CPU,
cores, memory, Python, load average, date), a table of every target, and for each missed
target by how much and why.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

SCRIPTS = [
    ("prompt_growth", "1. Prompt growth"),
    ("overhead", "2. Orchestration overhead"),
    ("events", "3. Event pipeline"),
    ("full_run", "4. The full run"),
    ("recording", "5. Recording"),
    ("sandbox", "6. Sandbox"),
    ("checkpoints", "7. Checkpoints in PostgreSQL"),
    ("magic_latency", "8. The research cell"),
    ("snapshots", "9. Snapshots"),
    ("jobs", "10. Jobs: submit to resume"),
    ("guarded_path", "11. Guarded path"),
    ("search", "12. Search"),
    ("pdf", "13. The paper's PDF"),
    ("notebook", "14. The notebook run"),
    ("memory", "15. Memory"),
    ("memory_prompts", "16. Memory and prompt size"),
    ("acp_worker", "17. ACP worker start-up"),
]
LATENCY = len(SCRIPTS) + 1
"""cell_latency.py's section number: after the scripts'."""


def run_script(name: str, extra: list[str], out: Path) -> tuple[int, float]:
    cmd = [sys.executable, str(C.BENCH / f"{name}.py"), "--json", str(out), *extra]
    print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
    began = time.perf_counter()
    code = subprocess.call(cmd)
    return code, time.perf_counter() - began


def run_latency(quick: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(C.BENCH / "cell_latency.py")]
    if quick:
        cmd += ["--max-samples", "20"]
    print(f"\n=== cell_latency: {' '.join(cmd[1:])}", flush=True)
    began = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - began
    text = "\n".join(line for line in proc.stdout.splitlines() if line.strip())
    print(text or proc.stderr[-2000:], flush=True)
    found = re.search(r"p95 ([\d.]+) ms", text)
    p95 = float(found.group(1)) if found else float("nan")
    return {
        "code": proc.returncode,
        "seconds": seconds,
        "text": text,
        "p95": p95,
        "stderr": proc.stderr[-2000:] if proc.returncode not in (0, 1) else "",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument(
        "--out",
        default=None,
        help="where to write the results (default benchmarks/RESULTS.md; "
        "with --quick, nothing unless given)",
    )
    parser.add_argument("--only", nargs="*", choices=[s for s, _ in SCRIPTS], default=None)
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="a Ray head's address for jobs.py's Ray jobs (default: it starts a local head; "
        "'none': local jobs only)",
    )
    parser.add_argument(
        "--from-json",
        metavar="DIR",
        default=None,
        help="run nothing: write the results from DIR/<script>.json files that "
        "the scripts wrote with --json",
    )
    latency = parser.add_mutually_exclusive_group()
    latency.add_argument(
        "--latency", action="store_true", help="run cell_latency.py even with --quick"
    )
    latency.add_argument("--no-latency", action="store_true", help="skip cell_latency.py")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else (None if args.quick else C.BENCH / "RESULTS.md")

    info = {**C.machine(), "load": os.getloadavg()}
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ls-bench-") as tmp:
        for name, _ in SCRIPTS:
            if args.only is not None and name not in args.only:
                continue
            if args.from_json:
                path, code, seconds = Path(args.from_json) / f"{name}.json", 0, float("nan")
            else:
                path = Path(tmp) / f"{name}.json"
                extra = ["--quick"] if args.quick else []
                extra += ["--ray", args.ray] if args.ray and name == "jobs" else []
                code, seconds = run_script(name, extra, path)
            if code != 0 or not path.exists():
                failed.append(f"{name} (exit {code})" if code else f"{name} (no {path.name})")
                continue
            results[name] = {**json.loads(path.read_text(encoding="utf-8")), "seconds": seconds}
    lat = None
    if (
        not args.no_latency
        and (not args.quick or args.latency)
        and args.only is None
        and not args.from_json
    ):
        try:
            lat = run_latency(args.quick)
        except Exception as exc:  # noqa: BLE001 - a kernel that would not start: say so
            lat = {
                "code": -1,
                "text": "",
                "p95": float("nan"),
                "seconds": 0.0,
                "stderr": f"{type(exc).__name__}: {exc}",
            }
    total = time.perf_counter() - started
    info["load_end"] = os.getloadavg()

    rows, misses = [], []
    for name, title in SCRIPTS:
        for t in results.get(name, {}).get("targets", []):
            rows.append(
                [
                    title.split(". ", 1)[1],
                    t["name"],
                    t["target"],
                    t["measured"],
                    "met" if t["met"] else f"**missed** ({t['miss_by']})",
                ]
            )
            if not t["met"]:
                misses.append((title, t))
    if lat is not None and lat["p95"] == lat["p95"]:
        met = lat["p95"] <= 100
        rows.append(
            [
                "Notebook latency",
                "trivial cell p95 during a run (cell_latency.py)",
                "≤ 100 ms",
                f"{lat['p95']:.1f} ms",
                "met"
                if met
                else f"**missed** ({100 * (lat['p95'] - 100) / 100:.0f}% above the target)",
            ]
        )
        if not met:
            misses.append(
                (
                    f"{LATENCY}. Notebook latency",
                    {
                        "name": "cell p95",
                        "measured": f"{lat['p95']:.1f} ms",
                        "target": "≤ 100 ms",
                        "miss_by": "",
                        "why": "see cell_latency.py's output below",
                    },
                )
            )
    text, md_targets = C.table(["benchmark", "target", "goal", "measured", "verdict"], rows)
    print("\n=== targets\n" + text)
    if failed:
        print("FAILED: " + ", ".join(failed))

    if out is not None:
        out.write_text(
            render(info, results, lat, md_targets, misses, failed, total, args.quick),
            encoding="utf-8",
        )
        print(f"\nwrote {out}")
    return 1 if failed else 0


def render(
    info: dict[str, Any],
    results: dict[str, dict[str, Any]],
    lat: dict[str, Any] | None,
    md_targets: str,
    misses: list[tuple[str, dict[str, Any]]],
    failed: list[str],
    total: float,
    quick: bool,
) -> str:
    v = C.versions()
    load = ", ".join(f"{x:.2f}" for x in info["load"])
    load_end = ", ".join(f"{x:.2f}" for x in info.get("load_end", ()))
    lines = [
        "# Benchmark results",
        "",
        "Written by `scripts/bench` (`python benchmarks/run_all.py`"
        + (" --quick: tiny sizes, not the real figures" if quick else "")
        + f"), which ran every benchmark below in {total / 60:.1f} min. Each figure is a "
        "median of repeated runs unless said otherwise; the machine is shared and noisy, so "
        "expect a few percent of drift between two runs.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {info['cpu']} |",
        f"| cores | {info['cores']} |",
        f"| memory | {info['memory_gib']} GiB |",
        f"| OS | {info['os']} |",
        f"| Python | {info['python']} |",
        "| packages | " + ", ".join(f"{k} {val}" for k, val in v.items()) + " |",
        f"| load average (1, 5, 15 min) at start / at end | {load} / {load_end} |",
        f"| date | {info['date']} |",
        "",
        "## Targets",
        "",
        md_targets,
        "",
    ]
    if failed:
        lines += [f"**Benchmarks that failed to run:** {', '.join(failed)}.", ""]
    if misses:
        lines += ["### Missed targets: by how much, and why", ""]
        for title, t in misses:
            lines.append(
                f"- **{t['name']}** ({title.split('. ', 1)[1]}): {t['measured']} "
                f"against {t['target']}"
                + (f" — {t['miss_by']}" if t["miss_by"] else "")
                + f". {t['why']}."
            )
        lines.append("")
    else:
        lines += ["Every target was met.", ""]
    lines += [NOTES, "", changes(results), ""]
    for name, title in SCRIPTS:
        if name not in results:
            continue
        took = results[name]["seconds"]
        lines += [
            f"## {title}",
            "",
            f"`python benchmarks/{name}.py`" + (f" ({took:.0f} s)" if took == took else ""),
            "",
            results[name]["markdown"],
            "",
        ]
    if lat is not None:
        lines += [
            f"## {LATENCY}. Notebook latency (cell_latency.py)",
            "",
            f"`python benchmarks/cell_latency.py` ({lat['seconds']:.0f} s): a trivial cell "
            "executed over and over in a real kernel while the `%lightscientist research` "
            "magic runs the offline project.",
            "",
            "```",
            lat["text"] or lat["stderr"],
            "```",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


NOTES = """## What is measured (read before the figures)

- **Prompt sizes** are characters: message contents plus serialized tool calls, as the model
  receives them (system prompt included), without tool schemas — on both sides, counted by the
  same function (`runtime.session.observe.message_chars`). The offline model reports no token usage,
  so there are no token figures; with a real model the `model.output` events carry them.
- **The single-agent baseline** is one `create_deep_agent` session (the worker's system
  prompt, tools and workspace backend) on one thread, handed every worker task of the
  LightScientist run, in order, as new user messages: the same goal, stages, skill files and
  task texts, minus the PROCESS.md digest (a session that keeps its whole history does not need
  it; keeping it would make the baseline grow faster). A thin wrapper around the offline model
  (in `prompt_growth.py`, not in the package) lets the offline model's decision logic see only
  the messages from the latest task on, because it reads the first human message as its
  task; the size measured is the whole history the graph passes to the model. deepagents'
  own context management stays on: it truncates large tool-call arguments in older messages
  (which is why the baseline's input sometimes drops) and would summarize past ~170k tokens.
- **Overhead per model step** divides each run's wall time by its own model calls. The
  three-layer run's calls include the supervisor's, which are cheaper than a worker's, so the
  per-step ratio flatters the layers; the same-work ratio (total wall time for the same worker
  tasks) is the stricter figure and is printed beside it.
- **Peak memory** of the full run is the process tree's RSS (the `lightscientist` process and
  every command it runs), sampled every 20 ms; the exact peak of the largest single process
  (`ru_maxrss`) is given too."""


def changes(results: dict[str, dict[str, Any]]) -> str:
    """The fix made while writing the benchmarks and the open points, with this run's figures."""
    over = results.get("overhead", {}).get("data", {})
    full = results.get("full_run", {}).get("data", {})
    layers = over.get("layers") or []
    if layers:
        med = {
            k: C.median([r[k] for r in layers])
            for k in ("wall_s", "steps", "supervisor_steps", "decisions", "supervisor_busy_s")
        }
        supervisor = (
            f"In this run's three-layer repetitions (medians) the supervisor's turns "
            f"took {med['supervisor_busy_s']:.1f} s of {med['wall_s']:.1f} s — "
            f"{med['supervisor_steps']:.0f} supervisor model steps for "
            f"{med['decisions']:.0f} decisions, each step checkpointed to SQLite, "
            "on the critical path (the control loop waits for each decision)."
        )
        same = f"{over.get('same_work_paired', over['same_work']):.2f}×"
        per_decision = med["supervisor_steps"] / max(1, med["decisions"])
        need = med["wall_s"] - 1.2 * C.median([r["wall_s"] for r in over["bare"]])
        back = (
            f"A same-work ratio of 1.2× would need {need:.1f} s more back"
            if need > 0
            else "The same-work ratio is within 1.2× in this run"
        )
    else:
        supervisor, same, back = "", "?", "A same-work ratio of 1.2× needs time back"
        per_decision = float("nan")
    parts = (over.get("profile") or {}).get("parts") or {}
    sqlite_s = sum(v["seconds"] for k, v in parts.items() if "SQLite" in k and "writes" in k)
    shell_s = sum(v["seconds"] for k, v in parts.items() if k.startswith("shell"))
    profile = (
        f"The instrumented run in section 2 spent {sqlite_s:.1f} s (cumulative over "
        "threads, waits for the shared connection included) writing SQLite checkpoints, "
        f"against {shell_s:.1f} s in the real "
        "commands."
        if parts
        else ""
    )
    runs = full.get("runs") or []
    wal_bytes = C.median([r["sqlite_wal"] for r in runs]) if runs else 0
    size = C.fmt_bytes(C.median([r["sqlite"] for r in runs])) if runs else "?"
    wal = (
        f"- **A `checkpoints.sqlite-wal` stays behind** ({C.fmt_bytes(wal_bytes)} after a "
        f"run, beside a {size} database): the checkpoint connection was not closed."
        if wal_bytes
        else f"- No `checkpoints.sqlite-wal` is left behind after a run ({size} database)."
    )
    return f"""## Changes made, and open points

- **JSONL writer throughput, fixed in `events/`.** The first measurement (2026-11-30, this
  script, this machine) gave 73,000 and 80,000 events/s through `EventBus` + `JsonlWriter`
  in two runs: an event cost ≈ 13 µs, of which ≈ 7.5 µs was `json.dumps` (which builds a new
  encoder on every call) and ≈ 0.7 µs the `os.write`. Now `jsonl._encode` formats the fixed
  fields itself and sends only `data` through a C encoder made once; `json.dumps` stays the
  definition of the format and the fallback for anything unusual (a test checks byte-for-byte
  equality, and identical errors, on thousands of random events). The bus stamps `ts` from
  `time.time_ns()` (`round()` alone cost 0.7 µs) and iterates a subscriber tuple instead of
  copying a list. Each line is still encoded whole and written by one `os.write` before
  `emit` returns: nothing is batched or buffered.
- **One supervisor model call per decision (issue 17).** A scheduling event carries what the
  decision needs (a finished worker's summary, outputs and suggested next stage, the stage's
  allowed list and its other workers; a waiting worker's question), and a tool that settles
  the event (a started, resumed or scheduled worker, a question to the user: `continue`; an
  accepted `finish_stage`: `done`) ends the supervisor's turn without a further model call
  (`runtime/session/lifecycle.py`, `SETTLES`). Supervisor calls per decision: {per_decision:.2f}
  (83 for 34 decisions, 2.4, before). The same work costs {same} a bare agent's wall time
  (1.57× before). {supervisor} {profile}
  {back}.
- **Lighter checkpoints (issue 17).** LangGraph's SQLite saver stores each step's whole
  state, so the supervisor's thread (one session across every stage) grew with the square
  of its length: 202 checkpoints, 5 MB of the 7–12 MB a run left. A thread with no turn to
  resume mid-way (a worker in a final state; the supervisor between decisions) now keeps only
  its final state, carried over to a new thread as its one checkpoint through LangGraph's
  public `get_state` and `update_state` (deepagents' `DeltaChannel` messages whole), the old
  thread deleted, so its history stays readable (`runtime/checkpoints/prune.py`); the file is
  compacted and the connection closed when the run ends. The supervisor's thread is renewed
  instead: every 8 turns its next decision starts on a new, empty thread and the old one is
  deleted (its whole message list was read and written by every turn's checkpoint, 46 KB by
  the end of the default run, and it grew with the project).
- **The supervisor's path, second pass (issue 17).** Measured in this process with timers
  around the supervisor's calls, old and new code alternately on 2026-12-02: a stage's end
  wrote its snapshot through `git add` and `git write-tree` (15-20 ms in a busy run); the
  trees are now written in-process in git's loose format, hashing only the files whose stat
  changed (`history/git_objects.py`: `finish_stage` 14.6 → 9.5 ms a call; one snapshot
  in `snapshots.py` run alone 12 → 2-4 ms, medians, where this run's table has its own
  figure); the renewed thread above read back 0.35 ms a turn instead of
  0.74-0.86; and the supervisor's record is no longer fsynced when its turn settles (its
  start still is). Together the supervisor's turn went from 29.4-30.9 to 24.2-27.9 ms. What
  is left of a turn is about 9 ms of LangGraph's step machinery around the model and tool
  nodes, the tools' own durable writes (a started worker: its task, its record and layer 2's
  state, each fsynced), and the record of the decision.
- **The house (issue 35) against the code before it, on the same work.** 223572f (the last
  commit before the rooms) and main were run in turn as whole processes on 2026-12-05, on
  this machine and in one environment. The whole default run cannot be compared: it now
  carries the search, the reviewers, the notebooks and the lessons (813 events from
  experiment.setup against 393). The idea phase alone can: a table of the six `idea.*`
  stages, offline, auto, memory off, 314 events against 310.
  - The idea phase took 2.05 s against 1.82 s, **1.09×** (medians of 20 pairs). Start-up is
    not the cause: importing the CLI and the run loop costs the same (0.887 s against
    0.871 s), and the first event comes at 0.65 s in both.
  - About 0.2 s of CPU is one scan deepagents makes at the first `create_deep_agent` (the
    public seam that replaced a patched private): it parses every installed distribution's
    METADATA (216 here) to tell an editable install. With it skipped by a benchmark-only
    patch, the ratio was 1.07×. The rest comes with features the same run now has: the
    guarded path on every workspace read and write (issue 30), and more tools bound to each
    worker (notebooks, recall, LaTeX), whose schemas LangChain converts at every model call.
  - Recording: the recorder took 2.2 ms a model call against 1.0 ms. Each call made every
    bound tool's view and hash again, because the schemas arrive as new dicts each time.
    They are now looked up by content: 1.1 ms.
  - One command through a worker's shell, unsandboxed → sandboxed: `true` 7 → 12 ms and
    `python -c 'import numpy'` 86 → 82 ms, against 7 → 11 ms and 87 → 84 ms (medians of 6
    runs of 5; the figures are whole milliseconds).
  - PostgreSQL against SQLite checkpoints, each tree's own ratio: 0.96–1.07× against
    0.93–1.14× (6 runs each).
  - So issue 35's "within 5 %" is missed by 4 points on the idea phase, for the reasons above.
- **Start-up and the first figure (issue 17).** Three costs outside the layers' logic, each
  measured as whole-process pairs (A and B in turn) of this full run on 2026-12-02:
  `scripts/setup` compiles the package's bytecode (an editable install compiles none, and
  with `PYTHONDONTWRITEBYTECODE` set each start compiled the package again); the `research`
  and `resume` commands freeze the collector's view of the imports (`gc.freeze`: a full
  collection walked 100,000+ objects for 60-100 ms, two or three times a run) — together
  7.74 s against 8.11 s, medians of 8 pairs; and a new project copies the user's matplotlib
  font list, so its first figure does not scan the fonts again (the figure script 1.17 s
  against 1.40 s, 8 pairs). The machine of this run is faster than that of earlier ones (the
  bare agent's same work took 6.90 s at 82627ed): compare ratios between runs, not seconds.
{wal}"""


if __name__ == "__main__":
    sys.exit(main())
