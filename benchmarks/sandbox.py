"""The sandbox's cost: wall time of the default offline auto run with every worker command in
bubblewrap (`--sandbox bwrap`) against the same run unsandboxed (`--sandbox none`).

Runs `python -m lightscientist_jupyter research GOAL --mode auto --sandbox …` in an empty
folder, as a user would, alternating the two modes `--reps` times each (so a slow spell of a
shared machine hits both), and compares the medians. Also times single commands through the
workers' shell (`true`, `python -c 'import numpy'`) both ways: the per-command price.

    python benchmarks/sandbox.py [--reps 3] [--quick] [--json OUT]

Target (issue 15): sandboxed ≤ 1.3 × unsandboxed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter.runtime.sandbox import bwrap  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.cgroups import CommandCgroups  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups  # noqa: E402
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy  # noqa: E402

MODES = ("none", "bwrap")


def one_run(mode: str, stage: str | None, until: str | None) -> float:
    return C.timed_auto_run(f"--sandbox {mode}", "--sandbox", mode, stage=stage, until=until)


def per_command(reps: int) -> dict[str, dict[str, float]]:
    """Median ms of one command through a worker's shell, unsandboxed and sandboxed."""
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-sandbox-cmd-"))
    groups = ProcessGroups()
    out: dict[str, dict[str, float]] = {}
    try:
        root = folder / "ws"
        (root / ".lightscientist").mkdir(parents=True)
        for mode in MODES:
            policy = ShellPolicy(sandbox=mode == "bwrap", cgroups=CommandCgroups())
            sh = WorkspaceBackend(
                root, worker_id=f"w-{mode}", cancel=threading.Event(), groups=groups, policy=policy
            )
            for command in ("true", "python -c 'import numpy'"):
                times = []
                for _ in range(reps):
                    began = time.perf_counter()
                    sh.execute(command)
                    times.append((time.perf_counter() - began) * 1000)
                out.setdefault(command, {})[mode] = C.median(times)
            if policy.cgroups is not None:
                policy.cgroups.close()
    finally:
        groups.kill_all()
        shutil.rmtree(folder, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="runs of each mode")
    C.span_arguments(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny: one run of each, from experiment.setup until {C.QUICK_UNTIL}",
    )
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps = 1
        C.quick_span(args)
    why = bwrap.problem()
    if why is not None:
        raise SystemExit(f"sandbox.py needs bubblewrap: {why}")

    report = C.Report("Sandbox")
    walls: dict[str, list[float]] = {m: [] for m in MODES}
    for rep in range(args.reps):
        for mode in MODES if rep % 2 == 0 else MODES[::-1]:
            walls[mode].append(one_run(mode, args.stage, args.until))
            print(f"  run {rep + 1}/{args.reps} --sandbox {mode}: {walls[mode][-1]:.2f} s")
    med = {m: C.median(walls[m]) for m in MODES}
    ratio = med["bwrap"] / med["none"]
    commands = per_command(5 if args.quick else 20)

    report.say(
        f'`lightscientist research "{C.GOAL}" --mode auto --sandbox none|bwrap`'
        f"{C.span_words(args.stage, args.until)} in an empty folder, offline "
        f"model, {args.reps} run(s) of each, alternating."
    )
    report.table(
        ["run", "--sandbox none", "--sandbox bwrap"],
        [
            [i + 1, f"{walls['none'][i]:.2f} s", f"{walls['bwrap'][i]:.2f} s"]
            for i in range(args.reps)
        ],
    )
    report.say(
        f"Medians: unsandboxed {med['none']:.2f} s, sandboxed {med['bwrap']:.2f} s "
        f"({ratio:.2f} ×). One command through a worker's shell (median ms, "
        "unsandboxed → sandboxed): "
        + "; ".join(f"`{c}` {v['none']:.0f} → {v['bwrap']:.0f}" for c, v in commands.items())
        + ". Sandboxed, each command also gets its limits and, as root, a pids cgroup."
    )
    report.check(
        C.target(
            "offline auto run, sandboxed / unsandboxed wall time",
            f"{ratio:.2f} × ({med['bwrap']:.2f} s / {med['none']:.2f} s)",
            "≤ 1.3 ×",
            value=ratio,
            limit=1.3,
            higher=False,
            why="bwrap sets up namespaces and mounts for every command",
        )
    )
    report.data = {"walls": walls, "ratio": ratio, "per_command_ms": commands}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
