"""How long the `%lightscientist research` cell blocks, in fresh kernels.

For each of `--kernels` fresh IPython kernels (jupyter_client): `%load_ext
lightscientist_jupyter` (not timed), then

    %lightscientist research "…" --mode auto -w <an empty folder>      (the offline model)

timed from the execute request to its reply — what a user waits before the cell is done and
the dashboard is live. The run itself goes on in the kernel's background thread; the kernel
is then shut down. The project is created on the run's thread, where LangGraph, deepagents
and the model provider are imported, so the cell costs the input checks and the dashboard's
widgets.

    python benchmarks/magic_latency.py [--kernels 10] [--quick] [--json OUT]

Target (issue 17): ≤ 0.3 s, p95 over 10 fresh kernels.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from jupyter_client.manager import KernelManager

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from cell_latency import execute  # noqa: E402


def one_kernel(folder: Path) -> float:
    """Seconds the research cell took in one fresh kernel."""
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(folder), env=C.cli_env())
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        _, reply = execute(kc, "%load_ext lightscientist_jupyter", timeout=120)
        if reply["status"] != "ok":
            raise SystemExit(f"%load_ext failed: {reply}")
        line = f'%lightscientist research "{C.GOAL}" --mode auto -w "{folder / "project"}"'
        seconds, reply = execute(kc, line, timeout=120)
        if reply["status"] != "ok":
            raise SystemExit(f"the research cell failed: {reply}")
        execute(kc, "from lightscientist_jupyter import api; api.stop_all(10)", timeout=60)
        return seconds
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="tiny: 2 kernels")
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.kernels = 2

    report = C.Report("Magic latency")
    times = []
    for n in range(args.kernels):
        folder = Path(tempfile.mkdtemp(prefix="ls-bench-magic-"))
        try:
            times.append(one_kernel(folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print(f"  kernel {n + 1}/{args.kernels}: {times[-1] * 1000:.0f} ms", flush=True)
    p95 = C.percentile(times, 95)
    report.say(
        f"`%lightscientist research` (offline model, auto mode) in {args.kernels} fresh "
        "kernels, each after `%load_ext lightscientist_jupyter`, timed from the execute "
        f"request to its reply: median {C.median(times) * 1000:.0f} ms, p95 "
        f"{p95 * 1000:.0f} ms, slowest {max(times) * 1000:.0f} ms "
        f"({', '.join(f'{t * 1000:.0f}' for t in times)} ms)."
    )
    report.check(
        C.target(
            "`%lightscientist research` cell, p95 over fresh kernels",
            f"{p95 * 1000:.0f} ms",
            "≤ 0.3 s",
            value=p95,
            limit=0.3,
            higher=False,
            why="the dashboard's widgets are built in the cell (each one opens a comm)",
        )
    )
    report.data = {"seconds": times, "p95": p95}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
