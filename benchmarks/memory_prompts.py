"""Memory and prompt size: a project's model inputs with the user's memory on, against the
same project with memory off.

Three offline auto runs (`lightscientist research GOAL --mode auto`) under one private memory
(`$LIGHTSCIENTIST_MEMORY` in a temporary folder, as every benchmark script has: `_common`):

1. **first**: a fresh memory; it files its findings and, at its end, its lessons;
2. **memory on**: a second project in another folder — its stages' tasks recall the first's
   lessons and a finding, and its survey worker calls `recall`;
3. **memory off**: a third, with `--no-memory`.

From each run's event log: every model call's input (`model.call` → `input_chars`: system
prompt and messages, as the model receives them), summed and at its largest, and every
worker's first prompt (`worker.created` → `first_prompt_chars`). Memory off against memory on
is the same work (the offline study does not depend on what it recalls), so the ratio is what
memory adds to the prompts.

    python benchmarks/memory_prompts.py [--quick] [--json OUT]

Target: a project's prompts with memory on stay within 1.2 × their size with memory off (the
sum of all model inputs, and the largest worker's first prompt).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

LIMIT = 1.2
QUICK_STAGE = "experiment.setup"


def run(folder: Path, name: str, *extra: str, until: str | None = None) -> dict[str, Any]:
    """One offline auto run in `folder/name` (paused after `until`); its prompt sizes and
    memory events."""
    ws = folder / name
    span = ("--until", until) if until else ()
    proc = C.cli(ws, "research", C.GOAL, "--mode", "auto", *extra, *span, timeout=1800)
    C.ended_done(proc, f"the run {name}", until)
    events = C.read_events(ws)
    inputs = [int(e["data"].get("input_chars") or 0) for e in events if e["type"] == "model.call"]
    firsts = [
        int(e["data"].get("first_prompt_chars") or 0)
        for e in events
        if e["type"] == "worker.created"
    ]
    recalls = [e for e in events if e["type"] == "memory.recall" and e["data"]["for"] == "task"]
    return {
        "calls": len(inputs),
        "input_chars": sum(inputs),
        "largest_input": max(inputs, default=0),
        "largest_first_prompt": max(firsts, default=0),
        "recalled_tasks": len(recalls),
        "recalled_hits": sum(len(e["data"]["hits"]) for e in recalls),
        "filed": sum(len(e["data"]["entries"]) for e in events if e["type"] == "memory.filed"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"the same three runs, each from {QUICK_STAGE} until {C.QUICK_UNTIL} (both "
        "stages' tasks recall the first run's findings)",
    )
    parser.add_argument("--json", help="write the results here (for run_all.py)")
    args = parser.parse_args(argv)

    report = C.Report("Memory and prompt size")
    folder = Path(tempfile.mkdtemp(prefix="ls-bench-memory-"))
    try:
        runs = {}
        start = ("--stage", QUICK_STAGE) if args.quick else ()
        until = C.QUICK_UNTIL if args.quick else None
        for name, extra in (("first", ()), ("memory-on", ()), ("memory-off", ("--no-memory",))):
            print(f"{name}: an offline auto run …", flush=True)
            runs[name] = run(folder, name, *start, *extra, until=until)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    on, off = runs["memory-on"], runs["memory-off"]
    report.table(
        [
            "run",
            "model calls",
            "input chars",
            "largest input",
            "largest first prompt",
            "tasks recalling",
            "hits",
            "entries filed",
        ],
        [
            [
                name,
                r["calls"],
                C.fmt_int(r["input_chars"]),
                C.fmt_int(r["largest_input"]),
                C.fmt_int(r["largest_first_prompt"]),
                r["recalled_tasks"],
                r["recalled_hits"],
                r["filed"],
            ]
            for name, r in runs.items()
        ],
    )
    if not on["recalled_hits"]:
        raise SystemExit("the memory-on run recalled nothing: the benchmark measured no memory")
    total = on["input_chars"] / off["input_chars"]
    first = on["largest_first_prompt"] / off["largest_first_prompt"]
    report.check(
        C.target(
            "prompts with memory on / off",
            f"{total:.3f} × ({on['input_chars']:,} / {off['input_chars']:,} input chars)",
            f"≤ {LIMIT} ×",
            value=total,
            limit=LIMIT,
            higher=False,
        )
    )
    report.check(
        C.target(
            "largest worker prompt, memory on / off",
            f"{first:.3f} × ({on['largest_first_prompt']:,} / {off['largest_first_prompt']:,})",
            f"≤ {LIMIT} ×",
            value=first,
            limit=LIMIT,
            higher=False,
        )
    )
    report.data = {"runs": runs, "ratio_total": total, "ratio_first_prompt": first}
    report.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
