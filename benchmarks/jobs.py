"""A job's submit-to-resume latency: from `submit_job` to the worker running again.

Runs the offline project from experiment.setup in auto mode in this process, `--runs` times
with local jobs and as many times with Ray jobs; each node of the experiment's search runs its
script as a job, and its worker waits for it (eight jobs a run). The Ray
jobs go to `--ray ADDRESS`, or else to a one-CPU Ray head this script starts on this machine
for the runs (as the tests do, see tests/support/ray_head.py), and ends after them; `--ray
none`, or `--quick` without an address, times local jobs only. From the events: the job's own
wall time (submitted → finished), layer 2's reaction (finished → the worker resumed,
`resume.fired`) and the whole submit-to-resume.

    python benchmarks/jobs.py [--runs 2] [--quick] [--ray ADDRESS|none] [--json OUT]

Target (issue 16): layer 2 resumes a worker within 1 s of its job's end (it polls every
0.5 s; a Ray job's end is seen through the Jobs API).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))

import _common as C  # noqa: E402

from lightscientist_jupyter.app.project import Project  # noqa: E402


def one_run(root: Path, ray: str | None, until: str | None) -> list[dict[str, float]]:
    project = Project.create(
        root, C.GOAL, mode="auto", stage="experiment.setup", model="offline", ray=ray, until=until
    )
    try:
        status = project.run()
    finally:
        project.close()
    if status != C.end_of(until):
        raise SystemExit(f"the run ended {status}")
    events = C.read_events(root)
    submitted = {e["data"]["job"]["id"]: e for e in events if e["type"] == "job.submitted"}
    finished = {e["data"]["job"]["id"]: e for e in events if e["type"] == "job.finished"}
    fired = {
        job: e for e in events if e["type"] == "resume.fired" for job in e["data"].get("jobs") or ()
    }
    if not submitted or set(submitted) != set(finished) or set(submitted) - set(fired):
        raise SystemExit(f"jobs without an end or a resume: {sorted(submitted)}")
    return [
        {
            "job_s": finished[j]["ts"] - submitted[j]["ts"],
            "react_s": fired[j]["ts"] - finished[j]["ts"],
            "total_s": fired[j]["ts"] - submitted[j]["ts"],
        }
        for j in sorted(submitted)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="runs per backend (2)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny: one run per backend, until {C.QUICK_SEARCH_UNTIL} (its search makes the jobs)",
    )
    parser.add_argument(
        "--ray",
        default=None,
        help="a Ray head's address; 'none': local jobs only (default: start a local head, "
        "except with --quick)",
    )
    parser.add_argument("--json", default=None, help="write the report here")
    args = parser.parse_args(argv)
    args.runs = 1 if args.quick else max(1, args.runs)
    until = C.QUICK_SEARCH_UNTIL if args.quick else None
    results: dict[str, list[dict[str, float]]] = {}
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-jobs-"))
    head = None
    try:
        results["local"] = [
            j for i in range(args.runs) for j in one_run(folder / f"local-{i}", None, until)
        ]
        address = args.ray
        if address is None and not args.quick:
            from support.ray_head import RayHead

            print("starting a local Ray head for the Ray jobs…", file=sys.stderr, flush=True)
            head = RayHead()
            address = head.address
        where = "a one-CPU Ray head started on this machine" if head else f"the head at {address}"
        if address and address != "none":
            results["ray"] = [
                j for i in range(args.runs) for j in one_run(folder / f"ray-{i}", address, until)
            ]
    finally:
        if head is not None:
            head.stop()
        shutil.rmtree(folder, ignore_errors=True)

    report = C.Report("Jobs: submit to resume")
    report.say(
        f"The offline project from experiment.setup{' until ' + until if until else ''}, "
        f"{args.runs} run(s) per backend; each node "
        "of its search is a job (a fraction of a second of numpy), its worker waiting for it. "
        "Medians over every job of the runs."
        + (f" The Ray jobs ran on {where}." if "ray" in results else "")
    )
    rows: list[list[Any]] = []
    for name, runs in results.items():
        med = {k: C.median([r[k] for r in runs]) for k in ("job_s", "react_s", "total_s")}
        rows.append(
            [
                name,
                len(runs),
                f"{med['job_s']:.2f} s",
                f"{med['react_s'] * 1000:.0f} ms",
                f"{med['total_s']:.2f} s",
            ]
        )
    report.table(
        ["backend", "jobs", "submitted → finished", "finished → resumed", "submit → resume"], rows
    )
    worst = max(C.median([r["react_s"] for r in runs]) for runs in results.values())
    report.check(
        C.target(
            "a worker resumed after its job ended",
            f"{worst * 1000:.0f} ms (median, worst backend)",
            "< 1000 ms",
            value=worst * 1000,
            limit=1000,
            higher=False,
            why="layer 2 polls the jobs every 0.5 s (a Ray job: one Jobs API request)",
        )
    )
    report.data = results
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
