#!/usr/bin/env python3
"""Cheap probe for one candidate of the warmup study.

Written by LightScientist's offline demo model, one copy per probed candidate, named after it.
Run from the workspace root:
    python idea/probes/<candidate>.py [<candidate>]
The candidate defaults to the script's own name. It trains the study's small MLP for a few
steps (well under a second), prints its numbers and writes them with a verdict to
idea/probes/<candidate>.md (next to this script). The verdict follows the criteria fixed in
idea/probes/plan.md before the probe ran.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import fmt, write_atomic  # noqa: E402
from study_design import (  # noqa: E402
    DATA_SEED,
    DISCLAIMER,
    HIDDEN,
    N_POINTS,
    PROBE_STEPS,
    TrainResult,
    probe_info,
    train,
)

HERE = Path(__file__).resolve().parent
CANDIDATE_ID = re.compile(r"[a-z0-9][a-z0-9-]*")

Finding = tuple[list[tuple[str, TrainResult]], tuple[str, str]]
"""A probe's runs (label, result) and its verdict with the reason."""


def outcome(r: TrainResult) -> str:
    if r["diverged"]:
        return f"diverged at step {r['diverged_at']} (best loss {fmt(r['best_loss'])})"
    return f"final loss {fmt(r['final_loss'])}"


def probe_c1() -> Finding:
    runs = [
        ("lr=0.8, warmup 0", train(0.8, 0, 0, steps=PROBE_STEPS)),
        ("lr=0.8, warmup 25", train(0.8, 25, 0, steps=PROBE_STEPS)),
    ]
    (_, base), (_, warm) = runs
    if base["diverged"] and not warm["diverged"]:
        verdict = "supports", "warmup avoided the divergence that constant rate ran into"
    elif warm["diverged"] and not base["diverged"]:
        verdict = "against", "warmup diverged where constant rate did not"
    elif base["diverged"] and warm["diverged"]:
        verdict = (
            "inconclusive",
            f"both diverged; warmup moved the divergence from step "
            f"{base['diverged_at']} to step {warm['diverged_at']}, so there is a signal "
            "but no benefit at this rate",
        )
    elif warm["final_loss"] <= 0.9 * base["final_loss"]:
        verdict = "supports", "warmup lowered the final loss by at least 10%"
    elif warm["final_loss"] >= 1.1 * base["final_loss"]:
        verdict = "against", "warmup raised the final loss by at least 10%"
    else:
        verdict = "inconclusive", "the final losses differ by less than 10%"
    return runs, verdict


def probe_c2() -> Finding:
    runs = [(f"lr={lr:g}, warmup 0", train(lr, 0, 0, steps=PROBE_STEPS)) for lr in (0.05, 0.2, 0.8)]
    slow, fast, big = (r for _, r in runs)
    finals = [r["final_loss"] for _, r in runs]
    spans = (
        not slow["diverged"]
        and not fast["diverged"]
        and fast["final_loss"] <= 0.9 * slow["final_loss"]
        and (big["diverged"] or big["final_loss"] > fast["final_loss"])
    )
    if spans:
        verdict = (
            "supports",
            "0.2 trains faster than 0.05 and 0.8 is unstable or worse, so the "
            "range covers slow, fast and unstable training",
        )
    elif all(v == v and v != float("inf") for v in finals) and max(finals) <= 1.1 * min(finals):
        verdict = "against", "the learning rate hardly changes the final loss in this range"
    else:
        verdict = "inconclusive", "the pattern is neither a clean span nor flat"
    return runs, verdict


def probe_c3() -> Finding:
    runs = [(f"lr=0.8, warmup {w}", train(0.8, w, 0, steps=PROBE_STEPS)) for w in (0, 10, 50)]
    steps = [r["diverged_at"] if r["diverged_at"] is not None else float("inf") for _, r in runs]
    if not any(r["diverged"] for _, r in runs):
        verdict = "inconclusive", "no run diverged, so there is nothing to postpone"
    elif all(a < b for a, b in itertools.pairwise(steps)):
        verdict = "supports", "the divergence step increases with the warmup length"
    else:
        verdict = "against", "the divergence step does not increase with the warmup length"
    return runs, verdict


def probe_generic() -> Finding:
    runs = [("lr=0.2, warmup 0", train(0.2, 0, 0, steps=PROBE_STEPS))]
    return runs, ("inconclusive", "no specific probe exists for this candidate; the pipeline runs")


RUNNERS = {"c1-linear-warmup": probe_c1, "c2-lr-sweep": probe_c2, "c3-warmup-length": probe_c3}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run the cheap probe of one candidate.")
    p.add_argument(
        "candidate",
        nargs="?",
        default=Path(__file__).stem,
        help="candidate id (default: this script's name); its result goes to "
        "<candidate>.md next to this script",
    )
    args = p.parse_args(argv)
    if not CANDIDATE_ID.fullmatch(args.candidate):
        p.error(
            f"candidate id {args.candidate!r} must use lowercase letters, digits and "
            "hyphens (it becomes a file name)"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    candidate: str = parse_args(argv).candidate
    info = probe_info(candidate)
    out = HERE / f"{candidate}.md"
    t0 = time.perf_counter()
    problems = "none"
    try:
        runs, (verdict, reason) = RUNNERS.get(candidate, probe_generic)()
    except Exception as exc:  # a crash is evidence too: record it
        runs, verdict, reason = [], "inconclusive", "the probe crashed"
        problems = f"{type(exc).__name__}: {exc}"
    elapsed = time.perf_counter() - t0
    for label, r in runs:
        print(
            f"{candidate}: {label}: final_loss={fmt(r['final_loss'])} "
            f"best_loss={fmt(r['best_loss'])} diverged={r['diverged']} "
            f"diverged_at={r['diverged_at']}"
        )
    print(f"{candidate}: verdict {verdict} ({reason}); {elapsed:.2f} s")
    table = "\n".join(
        f"| {label} | {fmt(r['final_loss'])} | {fmt(r['best_loss'])} | {r['diverged']} | "
        f"{'' if r['diverged_at'] is None else r['diverged_at']} |"
        for label, r in runs
    )
    result = "; ".join(f"{label}: {outcome(r)}" for label, r in runs) or "no numbers"
    settings = (
        f"weight seed 0, the study's fixed dataset ({N_POINTS} points, data seed {DATA_SEED}), "
        f"2-{HIDDEN}-1 tanh MLP, {PROBE_STEPS} full-batch GD steps."
    )
    text = f"""# Probe result: {candidate} — {info["title"]}

> **Offline demo.** {DISCLAIMER}

- **Candidate:** `{candidate}`
- **Question:** {info["question"]}
- **Command:** `python idea/probes/{Path(__file__).name} {candidate}`
- **Settings:** {settings}
- **Metric:** {info["metric"]}
- **Result:** {result}
- **Verdict:** {verdict} — {reason}
- **Criteria (fixed in plan.md):** {info["criteria"]}
- **Time:** {elapsed:.2f} s
- **Problems:** {problems}

## Raw numbers

| setting | final_loss | best_loss | diverged | diverged_at_step |
|---|---:|---:|---:|---:|
{table}

Numbers are formatted with `f"{{x:.4g}}"` from the values this script computed; they are the
same values it printed to stdout.
"""
    write_atomic(out, text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
