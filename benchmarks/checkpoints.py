"""PostgreSQL checkpoints' cost: wall time of the default offline auto run with
`--checkpoints postgresql://…` against the same run on the workspace's SQLite file.

Starts a PostgreSQL server of its own in a temporary folder (as the tests do, see
tests/support/postgres.py; `initdb`/`pg_ctl` from Debian's package, as the `postgres` user when
run as root), then runs `python -m lightscientist_jupyter research GOAL --mode auto` in an empty
folder, alternating the two checkpointers `--reps` times each (each PostgreSQL run on a fresh
database), and compares the medians.

    python benchmarks/checkpoints.py [--reps 3] [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))

import _common as C  # noqa: E402
from support.postgres import PostgresServer  # noqa: E402

KINDS = ("sqlite", "postgres")


def one_run(url: str | None, stage: str | None, until: str | None) -> float:
    extra = ["--checkpoints", url] if url else []
    return C.timed_auto_run("postgres" if url else "sqlite", *extra, stage=stage, until=until)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="runs of each checkpointer")
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

    base = Path(tempfile.mkdtemp(prefix="ls-bench-postgres-", dir="/tmp"))  # not $TMPDIR
    base.chmod(0o755)  # the server's user must get in
    server = PostgresServer(base / "server")
    walls: dict[str, list[float]] = {k: [] for k in KINDS}
    try:
        for rep in range(args.reps):
            for kind in KINDS if rep % 2 == 0 else KINDS[::-1]:
                url = server.new_database() if kind == "postgres" else None
                walls[kind].append(one_run(url, args.stage, args.until))
                print(f"  run {rep + 1}/{args.reps} {kind}: {walls[kind][-1]:.2f} s")
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    med = {k: C.median(walls[k]) for k in KINDS}
    ratio = med["postgres"] / med["sqlite"]

    report = C.Report("Checkpoints in PostgreSQL")
    report.say(
        f'`lightscientist research "{C.GOAL}" --mode auto [--checkpoints postgresql://…]`'
        f"{C.span_words(args.stage, args.until)} in an empty folder, offline model, "
        f"{args.reps} run(s) of each, alternating; a local PostgreSQL server (127.0.0.1, "
        "fsync off, a fresh database per run)."
    )
    report.table(
        ["run", "SQLite (default)", "PostgreSQL"],
        [
            [i + 1, f"{walls['sqlite'][i]:.2f} s", f"{walls['postgres'][i]:.2f} s"]
            for i in range(args.reps)
        ],
    )
    report.say(
        f"Medians: SQLite {med['sqlite']:.2f} s, PostgreSQL {med['postgres']:.2f} s "
        f"({ratio:.2f} ×): what moving the checkpoints to a server costs a run."
    )
    report.check(
        C.target(
            "offline auto run, PostgreSQL / SQLite checkpoints wall time",
            f"{ratio:.2f} × ({med['postgres']:.2f} s / {med['sqlite']:.2f} s)",
            "≤ 1.5 ×",
            value=ratio,
            limit=1.5,
            higher=False,
            why="each checkpoint is a round trip to the server",
        )
    )
    report.data = {"walls": walls, "ratio": ratio}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
