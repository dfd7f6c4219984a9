"""The guarded path's price: microseconds per file operation through `beneath.Beneath`
(openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, and the per-component O_NOFOLLOW
fallback) against the same operation with a plain `open`.

Operations, each on a small file (1 KB) three folders below the workspace root, as the kernel
meets them (`.lightscientist/workers/w1/…`):

- **open**: open and close (the path's resolution alone);
- **read**: open, read the whole file, close;
- **append**: one line appended and flushed to disk (`fsync`), as the event log and PROCESS.md
  are written (the guarded append also checks the file has one name);
- **atomic write**: a temporary file written and renamed over the target, not flushed (the
  durable variant adds an fsync to both, which this disk's latency would drown).

Two guarded forms: `Beneath(root)` (a path from a model or a person, checked against its
workspace) and `_fs.NO_LINKS` (`Beneath("/")`: an absolute path the kernel built, every one of
its components checked). Each figure is the median over `--reps` rounds of `--calls` calls,
in CPU time of this process (what the kernel pays; a shared machine inflates wall time far
more) and in wall time.

    python benchmarks/guarded_path.py [--calls 1000] [--reps 5] [--quick] [--json OUT]

Target: a guarded read costs at most 50 µs of CPU more than a plain one (openat2).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from lightscientist_jupyter._fs import NO_LINKS  # noqa: E402
from lightscientist_jupyter.beneath import Beneath, opening  # noqa: E402

REL = ".lightscientist/workers/w1/worker.json"
LINE = b'{"type": "tool.result", "message": "ok"}\n'


def plain_ops(path: Path) -> dict[str, Callable[[], object]]:
    """The operations with a plain `open` (no check of the path at all)."""
    tmp = path.with_name(f".{path.name}.plain.tmp")

    def opened() -> None:
        os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))

    def read() -> bytes:
        with open(path, "rb") as fh:
            return fh.read()

    def append() -> None:
        fd = os.open(path.with_suffix(".log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, LINE)
            os.fsync(fd)
        finally:
            os.close(fd)

    def atomic() -> None:
        with open(tmp, "wb") as fh:
            fh.write(LINE * 25)
        os.replace(tmp, path.with_suffix(".new"))

    return {"open": opened, "read": read, "append": append, "atomic write": atomic}


def guarded_ops(files: Beneath, path: Path) -> dict[str, Callable[[], object]]:
    """The same operations through `files` (a root and a path beneath it)."""
    return {
        "open": lambda: os.close(files.open_fd(path, os.O_RDONLY)),
        "read": lambda: files.read_bytes(path),
        "append": lambda: files.append_bytes(path.with_suffix(".log"), LINE),
        "atomic write": lambda: files.write_atomic(
            path.with_suffix(".new"), LINE * 25, durable=False
        ),
    }


def per_call_us(op: Callable[[], object], calls: int, reps: int) -> tuple[float, float]:
    """Median over `reps` rounds of the mean µs per call, (CPU, wall); one warm-up call."""
    op()
    cpu, wall = [], []
    for _ in range(reps):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            op()
        cpu.append((time.process_time() - cpu0) / calls * 1e6)
        wall.append((time.perf_counter() - wall0) / calls * 1e6)
    return C.median(cpu), C.median(wall)


def measure(root: Path, calls: int, reps: int) -> dict[str, dict[str, tuple[float, float]]]:
    """µs per call: {operation: {variant: (CPU µs, wall µs)}}."""
    path = root / REL
    variants: dict[str, dict[str, Callable[[], object]]] = {
        "plain open": plain_ops(path),
        "Beneath(root)": guarded_ops(Beneath(root), path),
        "NO_LINKS": guarded_ops(NO_LINKS, path),
    }
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for fallback in (False, True):
        opening._have_openat2 = not fallback
        for name, ops in variants.items():
            if fallback and name == "plain open":
                continue
            label = f"{name}, fallback" if fallback else name
            if not fallback and name != "plain open":
                label = f"{name}, openat2"
            for op_name, op in ops.items():
                out.setdefault(op_name, {})[label] = per_call_us(op, calls, reps)
    opening._have_openat2 = True
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per round")
    parser.add_argument("--reps", type=int, default=5, help="rounds (the median is kept)")
    parser.add_argument("--quick", action="store_true", help="tiny: 100 calls, 3 rounds")
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)
    if args.quick:
        args.calls, args.reps = 100, 3
    report = C.Report("Guarded path")
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-guarded-")).resolve()
    try:
        root = folder / "ws"
        (root / REL).parent.mkdir(parents=True)
        (root / REL).write_bytes(b"x" * 1024)
        if opening._openat2(os.open(root, os.O_PATH), ".", os.O_PATH, 0) is None:
            report.say("openat2 is not available here: both guarded columns use the fallback")
        us = measure(root, args.calls, args.reps)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    report.say(
        f"µs per call, median of {args.reps} rounds of {args.calls} calls; a 1 KB file at "
        f"`<workspace>/{REL}` ({len(Path(REL).parts)} components below the root, "
        f"{len((folder / 'ws' / REL).parts) - 1} below `/` for NO_LINKS)."
    )
    labels = list(next(iter(us.values())))
    for kind, which in (("CPU time", 0), ("wall time", 1)):
        report.say(f"{kind}, µs per call:")
        report.table(
            ["operation", *labels],
            [[op, *(f"{row[label][which]:.1f} µs" for label in labels)] for op, row in us.items()],
        )

    def extra(op: str, label: str) -> float:
        return us[op][label][0] - us[op]["plain open"][0]

    read = extra("read", "Beneath(root), openat2")
    report.say(
        f"CPU per call over a plain open: a guarded read {read:+.1f} µs with openat2 "
        f"({extra('read', 'NO_LINKS, openat2'):+.1f} µs from `/`), "
        f"{extra('read', 'Beneath(root), fallback'):+.1f} µs with the fallback; an append "
        f"{extra('append', 'Beneath(root), openat2'):+.1f} µs (it checks the file's names "
        f"too), an atomic write {extra('atomic write', 'Beneath(root), openat2'):+.1f} µs — "
        f"beside an fsync that takes {us['append']['plain open'][1]:.0f} µs of wall time here."
    )
    report.check(
        C.target(
            "guarded read, extra CPU per call (openat2)",
            f"{read:+.1f} µs",
            "≤ 50 µs",
            value=read,
            limit=50,
            higher=False,
            why="each call opens the root and resolves the path again",
        )
    )
    report.data = {"us": us, "calls": args.calls, "reps": args.reps}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
