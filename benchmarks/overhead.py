"""Orchestration overhead: wall time per model step, three layers against a bare agent.

- **Three layers**: `Project.create(…, mode="auto")` → `run()` → `close()` in this process with
  the offline model: controller, supervisor agent, worker sessions on SQLite checkpoints, the
  event log. Its steps are all its model calls (`model.call` events: workers and supervisor).
- **Bare deepagents**: one `create_deep_agent` with the worker's system prompt, tools and
  workspace backend, the same offline model and a SQLite checkpointer, given each task the
  three-layer run gave a worker (its `task.md`, in the same order, a fresh thread each, as a
  worker has), in a fresh folder holding the same skill files. No controller, supervisor,
  records or events. Its steps are its model calls (a callback counts them). Its lifecycle
  tools do not end the turn, so it makes one more model call per task (its closing message).

Both do the same real work (files, experiment scripts, the figure, the paper). The runs
alternate (three-layer first in even repetitions, bare first in odd ones) after one untimed
warm-up of each; the ratio is of the medians of wall time per model step. The ratio of
median total wall times (same work) is printed too.

    python benchmarks/overhead.py [--reps 5] [--quick] [--bare-checkpointer sqlite|memory]
                                  [--json OUT]

Targets (issue 17): ≤ 1.0 × per model step, ≤ 1.2 × for the same work (the ratio of each
three-layer run to the bare run beside it, median), ≤ 1.3 supervisor model calls per decision.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402

from lightscientist_jupyter.offline.model import OfflineScientistModel  # noqa: E402


def run_layers(ws: Path, start: str | None, until: str | None) -> dict[str, Any]:
    from lightscientist_jupyter.app.project import Project

    os.environ["LIGHTSCIENTIST_MODEL"] = ""
    began = time.perf_counter()
    project = Project.create(ws, C.GOAL, mode="auto", stage=start, model="offline", until=until)
    try:
        status = project.run()
    finally:
        project.close()
    wall = time.perf_counter() - began
    if status != C.end_of(until):
        raise SystemExit(f"the three-layer run ended {status}")
    log = C.read_events(ws)
    calls = [e for e in log if e["type"] == "model.call"]
    busy, began_at = 0.0, None  # the supervisor's turns: the control loop waits for each
    for e in log:
        if e["worker_id"] == "supervisor" and e["type"] == "session.start":
            began_at = e["ts"]
        elif e["worker_id"] == "supervisor" and e["type"] == "session.end" and began_at:
            busy, began_at = busy + e["ts"] - began_at, None
    return {
        "wall_s": wall,
        "steps": len(calls),
        "supervisor_steps": sum(1 for e in calls if e["worker_id"] == "supervisor"),
        "decisions": sum(1 for e in log if e["type"] == "supervisor.decision"),
        "supervisor_busy_s": busy,
    }


def profile_layers(ws: Path, start: str | None, until: str | None) -> dict[str, Any]:
    """One more three-layer run with timers around the costly calls (cumulative seconds,
    summed over threads, so parts can add up to more than the wall time)."""
    import threading

    from langgraph.checkpoint.sqlite import SqliteSaver

    from lightscientist_jupyter.runtime.sandbox import sandbox
    from lightscientist_jupyter.runtime.session import graphs

    stats: dict[str, list[float]] = {}
    lock = threading.Lock()
    undo = []

    def wrap(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def timed(*a: Any, **k: Any) -> Any:
            began = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                with lock:
                    entry = stats.setdefault(label, [0, 0.0])
                    entry[0] += 1
                    entry[1] += time.perf_counter() - began

        setattr(owner, name, timed)
        undo.append((owner, name, original))

    wrap(SqliteSaver, "put", "SQLite checkpoint writes (put)")
    wrap(SqliteSaver, "put_writes", "SQLite pending writes (put_writes)")
    wrap(SqliteSaver, "get_tuple", "SQLite checkpoint reads (get_tuple)")
    wrap(sandbox.shell, "run_command", "shell commands (the real work)")
    wrap(graphs, "session_graph", "building or binding agent graphs")
    wrap(os, "fsync", "os.fsync (atomic JSON/records, PROCESS.md)")
    try:
        result = run_layers(ws, start, until)
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)
    result["parts"] = {k: {"calls": int(v[0]), "seconds": v[1]} for k, v in stats.items()}
    return result


def run_bare(
    ws: Path, tasks: list[dict[str, Any]], skills_from: Path, checkpointer: str
) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    ws.mkdir(parents=True)
    C.copy_skills(skills_from, ws)
    steps = [0]

    def count(_messages: list[Any]) -> None:
        steps[0] += 1

    callback = C.make_callback(count)
    began = time.perf_counter()
    saver = (
        C.sqlite_saver(ws / ".lightscientist" / "checkpoints.sqlite")
        if checkpointer == "sqlite"
        else InMemorySaver()
    )
    agent = C.bare_agent(ws, OfflineScientistModel(loops=2), saver)
    delivered = 0
    for i, task in enumerate(tasks):
        out = agent.invoke(
            {"messages": [HumanMessage(task["message"])]},
            {
                "configurable": {"thread_id": f"task-{i}"},
                "callbacks": [callback],
                "recursion_limit": 400,
            },
        )
        delivered += any(
            isinstance(m, ToolMessage) and m.name == "complete_stage" for m in out["messages"]
        )
    wall = time.perf_counter() - began
    if delivered != len(tasks):
        raise SystemExit(f"the bare agent delivered {delivered} of {len(tasks)} tasks")
    return {"wall_s": wall, "steps": steps[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions of each")
    C.span_arguments(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a tiny run: 1 repetition, from experiment.setup until {C.QUICK_UNTIL}, no "
        "warm-up (the timed three-layer run gives the bare agent its tasks and is the "
        "instrumented one)",
    )
    parser.add_argument("--bare-checkpointer", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument(
        "--no-profile", action="store_true", help="skip the extra, instrumented three-layer run"
    )
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps = 1
        C.quick_span(args)
    profile: dict[str, Any] | None = None

    report = C.Report("Orchestration overhead")
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-overhead-"))
    layers: list[dict[str, Any]] = []
    bare: list[dict[str, Any]] = []
    try:
        # the untimed warm-up run also gives the tasks (and skill files) the bare agent replays;
        # --quick has none: its timed three-layer run, the first of rep 1, gives them
        source: Path | None = None
        tasks: list[dict[str, Any]] = []
        if not args.quick:
            print("warm-up (untimed): one three-layer run, one bare run …", flush=True)
            source = folder / "warmup-layers"
            run_layers(source, args.stage, args.until)
            tasks = C.worker_tasks(source)
            run_bare(folder / "warmup-bare", tasks, source, args.bare_checkpointer)
        for rep in range(args.reps):
            order = ("layers", "bare") if rep % 2 == 0 else ("bare", "layers")
            for kind in order:
                gc.collect()
                ws = folder / f"{kind}-{rep}"
                if kind == "layers":
                    # --quick: its one timed run is the instrumented one too, not a third run
                    instrumented = args.quick and not args.no_profile
                    result = (profile_layers if instrumented else run_layers)(
                        ws, args.stage, args.until
                    )
                    layers.append(result)
                    profile = result if instrumented else None
                    if source is None:
                        source, tasks = ws, C.worker_tasks(ws)
                else:
                    assert source is not None  # rep 1 runs the three layers first
                    result = run_bare(ws, tasks, source, args.bare_checkpointer)
                    bare.append(result)
                print(
                    f"  rep {rep + 1}/{args.reps} {kind:6}: {result['wall_s']:.2f} s, "
                    f"{result['steps']} model steps, "
                    f"{1000 * result['wall_s'] / result['steps']:.1f} ms/step",
                    flush=True,
                )
                if ws != source:
                    shutil.rmtree(ws, ignore_errors=True)
        if not args.no_profile and profile is None:
            print("instrumented three-layer run (untimed) …", flush=True)
            profile = profile_layers(folder / "profile", args.stage, args.until)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    def per_step(r: dict[str, Any]) -> float:
        return 1000 * r["wall_s"] / r["steps"]

    rows = [
        [
            i + 1,
            f"{lay['wall_s']:.2f} s",
            lay["steps"],
            f"{per_step(lay):.1f} ms",
            f"{b['wall_s']:.2f} s",
            b["steps"],
            f"{per_step(b):.1f} ms",
            f"{per_step(lay) / per_step(b):.2f}×",
        ]
        for i, (lay, b) in enumerate(zip(layers, bare, strict=True))
    ]
    m_l, m_b = C.median([per_step(r) for r in layers]), C.median([per_step(r) for r in bare])
    w_l, w_b = C.median([r["wall_s"] for r in layers]), C.median([r["wall_s"] for r in bare])
    rows.append(
        [
            "median",
            f"{w_l:.2f} s",
            C.median([r["steps"] for r in layers]),
            f"{m_l:.1f} ms",
            f"{w_b:.2f} s",
            C.median([r["steps"] for r in bare]),
            f"{m_b:.1f} ms",
            f"{m_l / m_b:.2f}×",
        ]
    )
    ratio, same_work = m_l / m_b, w_l / w_b
    report.say(
        f"The default offline auto run{' from ' + args.stage if args.stage else ''}"
        f"{' until ' + args.until if args.until else ''} "
        f"({len(tasks)} worker tasks) against a bare deepagents agent doing the same "
        f"{len(tasks)} tasks with the same offline model (checkpointer: "
        f"{args.bare_checkpointer}); {args.reps} alternating repetitions after a warm-up."
    )
    report.table(
        ["rep", "3 layers wall", "steps", "per step", "bare wall", "steps", "per step", "ratio"],
        rows,
    )
    n_sup = C.median([r["supervisor_steps"] for r in layers])
    n_work = C.median([r["steps"] - r["supervisor_steps"] for r in layers])
    report.say(
        f"Per model step: {m_l:.1f} ms against {m_b:.1f} ms = **{ratio:.2f}×**. "
        f"Same work, total wall time: {w_l:.2f} s against {w_b:.2f} s = "
        f"**{same_work:.2f}×**. The two ratios differ because the steps differ: of the "
        f"three-layer run's {C.median([r['steps'] for r in layers]):.0f} steps, "
        f"{n_sup:.0f} are the supervisor's (a small graph, no command) and {n_work:.0f} "
        f"the workers'; the bare agent's "
        f"{C.median([r['steps'] for r in bare]):.0f} are all worker steps (the workers' "
        f"plus one closing message per task, since nothing ends its turn). A supervisor "
        "step is cheaper than a worker step, so per step the layers look cheap; for the "
        "same work they add the supervisor's steps on top. The supervisor's turns "
        f"(for {C.median([r['decisions'] for r in layers]):.0f} decisions) took "
        f"{C.median([r['supervisor_busy_s'] for r in layers]):.1f} s of the "
        f"{w_l:.1f} s, and the control loop waits for each."
    )
    if profile:
        report.say(
            f"Where an instrumented three-layer run spent its time ({profile['wall_s']:.2f} s "
            "wall; cumulative over threads, so the parts can exceed the wall time):"
        )
        report.table(
            ["part", "calls", "seconds"],
            [
                [k, v["calls"], f"{v['seconds']:.2f} s"]
                for k, v in sorted(profile["parts"].items(), key=lambda kv: -kv[1]["seconds"])
            ],
        )
    pairs = [lay["wall_s"] / b["wall_s"] for lay, b in zip(layers, bare, strict=True)]
    paired = C.median(pairs)
    per_decision = C.median([r["supervisor_steps"] / max(1, r["decisions"]) for r in layers])
    report.say(
        f"Pair by pair (each three-layer run against the bare run beside it), same work: "
        f"median **{paired:.2f}×** ({', '.join(f'{x:.2f}' for x in pairs)}). Supervisor "
        f"model calls per decision: **{per_decision:.2f}** ({n_sup:.0f} calls for "
        f"{C.median([r['decisions'] for r in layers]):.0f} decisions)."
    )
    report.check(
        C.target(
            "supervisor model calls per decision",
            f"{per_decision:.2f}",
            "≤ 1.3",
            value=per_decision,
            limit=1.3,
            higher=False,
            why="a decision that needed a query first, or a tool that did not settle its event",
        )
    )
    report.check(
        C.target(
            "orchestration overhead, same work (pair by pair)",
            f"{paired:.2f}× ({w_l:.2f} s / {w_b:.2f} s medians)",
            "≤ 1.2×",
            value=paired,
            limit=1.2,
            higher=False,
            why="the supervisor's turns and the workers' records, events and checkpoints are "
            "on top of the bare agent's work",
        )
    )
    report.check(
        C.target(
            "orchestration overhead per model step",
            f"{ratio:.2f}× per step",
            "≤ 1.0×",
            value=ratio,
            limit=1.0,
            higher=False,
            why="with one supervisor call per decision few cheap supervisor steps dilute the "
            "per-step figure; what is left is the layers' own cost per worker step",
        )
    )
    report.data = {
        "layers": layers,
        "bare": bare,
        "ratio": ratio,
        "same_work": same_work,
        "same_work_paired": paired,
        "calls_per_decision": per_decision,
        "tasks": len(tasks),
        "checkpointer": args.bare_checkpointer,
        "profile": profile,
    }
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
