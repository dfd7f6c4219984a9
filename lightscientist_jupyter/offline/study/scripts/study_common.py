"""The helpers every script of the warmup study shares (standard library only).

Written by LightScientist's offline demo model next to each script. They read
experiment/summary.csv, format its numbers, compare warmup with constant-rate training and
judge the success criterion; the offline model imports the same module to write its briefs,
so a brief, the analysis and the paper format and judge every number the same way.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal, TypedDict

SUMMARY_COLUMNS = ["condition", "metric", "n", "mean", "std", "ci95_low", "ci95_high"]


class SummaryRow(TypedDict):
    """A row of summary.csv as `read_summary` gives it."""

    condition: str
    metric: str
    n: int
    mean: float
    std: float
    ci95_low: float
    ci95_high: float


class PlannedRun(TypedDict):
    """A run of the grid (`planned_runs`)."""

    run_id: str
    lr: float
    warmup: int
    seed: int
    condition: str


Verdict = Literal["helps", "hurts", "no clear difference", "both diverge", "inconclusive"]
"""What warmup did at one learning rate (`compare_warmup`)."""

Judgement = Literal["met", "not met", "inconclusive"]
"""The success criterion's outcome (`criterion`)."""


class Comparison(TypedDict):
    """Warmup against the constant-rate baseline at one learning rate (`compare_warmup`)."""

    lr: float
    warmup: int
    base: str
    warm: str
    base_row: SummaryRow | None
    warm_row: SummaryRow | None
    base_div: int | None
    warm_div: int | None
    verdict: Verdict
    reason: str


def write_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of a CSV file as dicts of strings; no rows when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def clean_goal(goal: str | None) -> str:
    """The goal text on one line, at most 400 characters (for quoting it)."""
    text = " ".join(str(goal or "").split())
    if not text:
        return "(no goal text given)"
    return text if len(text) <= 400 else text[:399] + "…"


def goal_sentence(goal: str | None) -> str:
    """The sentence that follows the disclaimer, quoting the goal text the study ignores."""
    return (
        f' The goal text given to this project was "{clean_goal(goal)}"; the study above '
        "does not depend on it and does not answer it."
    )


def planned_runs(
    learning_rates: Iterable[float], warmup_steps: Iterable[int], seeds: Iterable[int]
) -> list[PlannedRun]:
    """Every run of the grid, in a fixed order: r01, r02, … with its condition."""
    runs: list[PlannedRun] = []
    for lr in learning_rates:
        for warmup in warmup_steps:
            for seed in seeds:
                runs.append(
                    {
                        "run_id": f"r{len(runs) + 1:02d}",
                        "lr": lr,
                        "warmup": warmup,
                        "seed": seed,
                        "condition": condition_name(lr, warmup),
                    }
                )
    return runs


def summary_table_rows(rows: Iterable[SummaryRow]) -> str:
    """The Markdown rows of summary.csv, every number through `fmt`."""
    return "\n".join(
        f"| {r['condition']} | {r['metric']} | {fmt(r['n'])} | {fmt(r['mean'])} | "
        f"{fmt(r['std'])} | {fmt(r['ci95_low'])} | {fmt(r['ci95_high'])} |"
        for r in rows
    )


def fmt(x: float) -> str:
    """The one number format of this study: `f"{x:.4g}"` (4 significant digits).

    Integers (n, counts) are printed as they are; inf and nan print as `inf` and `nan`.
    Every number in the analysis, the briefs and the paper is formatted by this function from
    the value in experiment/summary.csv, so it can be checked by formatting that value again.
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    return f"{float(x):.4g}"


_T975 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    25: 2.060,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}


def t975(df: int) -> float:
    """Two-sided 95% Student-t quantile for `df` degrees of freedom, from a small table.

    Between table entries the next smaller df is used (a slightly wider, conservative
    interval); beyond 120 degrees of freedom, 1.96.
    """
    if df < 1:
        return float("nan")
    if df > 120:
        return 1.96
    return _T975[max(k for k in _T975 if k <= df)]


def describe(values: Iterable[float]) -> tuple[int, float, float, float, float]:
    """(n, mean, std, ci95_low, ci95_high) of a list of floats, without numpy.

    std is the sample standard deviation (n - 1); the interval is mean +- t975(n-1)*std/sqrt(n).
    A diverged run's inf makes the mean inf; std and the interval are then nan, as they are
    for n < 2.
    """
    vals = [float(v) for v in values]
    n = len(vals)
    nan, inf = float("nan"), float("inf")
    if n == 0:
        return 0, nan, nan, nan, nan
    if any(math.isnan(v) for v in vals):
        mean = nan
    elif all(math.isfinite(v) for v in vals):
        mean = math.fsum(vals) / n
    else:
        pos, neg = inf in vals, -inf in vals
        mean = nan if (pos and neg) else (inf if pos else -inf)
    if n < 2 or not math.isfinite(mean):
        return n, mean, nan, nan, nan
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t975(n - 1) * std / math.sqrt(n)
    return n, mean, std, mean - half, mean + half


def condition_name(lr: float, warmup: int) -> str:
    """`lr=0.2,warmup=50`: the condition label used in every file (quoted in CSV)."""
    return f"lr={float(lr):g},warmup={int(warmup)}"


def parse_condition(name: str) -> tuple[float, int] | None:
    """(lr, warmup) from a condition label, or None."""
    m = re.fullmatch(r"\s*lr=([0-9.eE+-]+),\s*warmup=(\d+)\s*", str(name))
    if not m:
        return None
    try:
        return float(m.group(1)), int(m.group(2))
    except ValueError:
        return None


def read_summary(text: str) -> list[SummaryRow]:
    """The rows of summary.csv text as dicts (floats; n an int), in file order.

    Lines before the header `condition,metric,...` and rows that do not parse are skipped, so
    the text may come wrapped in other output (e.g. a shell's).
    """
    lines = str(text).splitlines()
    start = next(
        (i for i, line in enumerate(lines) if line.strip().lower().startswith("condition,metric,")),
        None,
    )
    if start is None:
        return []
    rows = []
    reader = csv.DictReader(io.StringIO("\n".join(lines[start:]) + "\n"))
    for raw in reader:
        try:
            row: SummaryRow = {
                "condition": raw["condition"].strip(),
                "metric": raw["metric"].strip(),
                "n": int(float(raw["n"])),
                "mean": _stat(raw, "mean"),
                "std": _stat(raw, "std"),
                "ci95_low": _stat(raw, "ci95_low"),
                "ci95_high": _stat(raw, "ci95_high"),
            }
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        rows.append(row)
    return rows


def _stat(raw: Mapping[str, str | None], key: str) -> float:
    """A statistic of a summary.csv row: its float, nan when the cell is empty or missing."""
    value = (raw.get(key) or "").strip()
    return float(value) if value else float("nan")


def summary_index(rows: Iterable[SummaryRow]) -> dict[tuple[str, str], SummaryRow]:
    return {(r["condition"], r["metric"]): r for r in rows}


def diverged_count(index: Mapping[tuple[str, str], SummaryRow], condition: str) -> int | None:
    """How many of a condition's runs diverged (mean of the 0/1 metric times n), or None."""
    row = index.get((condition, "diverged"))
    if row is None or not math.isfinite(row["mean"]):
        return None
    return int(round(row["mean"] * row["n"]))


def compare_warmup(rows: Sequence[SummaryRow]) -> list[Comparison]:
    """One comparison per learning rate: warmup 0 (baseline) vs the longest warmup in the file.

    Each is a dict with lr, warmup, base and warm (condition labels), base_row and warm_row
    (their final_loss rows, None when missing), base_div and warm_div (diverged counts),
    verdict ('helps', 'hurts', 'no clear difference', 'both diverge' or 'inconclusive') and
    reason. A learning rate with only one of the two conditions is 'inconclusive'.
    """
    index = summary_index(rows)
    parsed = [p for p in (parse_condition(r["condition"]) for r in rows) if p is not None]
    longest = max((w for _, w in parsed if w > 0), default=None)
    if longest is None:
        return []
    out: list[Comparison] = []
    for lr in sorted({lr for lr, _ in parsed}):
        base, warm = condition_name(lr, 0), condition_name(lr, longest)
        b, w = index.get((base, "final_loss")), index.get((warm, "final_loss"))
        bd, wd = diverged_count(index, base), diverged_count(index, warm)
        verdict, reason = _verdict(b, w, bd, wd)
        out.append(
            {
                "lr": lr,
                "warmup": longest,
                "base": base,
                "warm": warm,
                "base_row": b,
                "warm_row": w,
                "base_div": bd,
                "warm_div": wd,
                "verdict": verdict,
                "reason": reason,
            }
        )
    return out


def _verdict(
    b: SummaryRow | None, w: SummaryRow | None, bd: int | None, wd: int | None
) -> tuple[Verdict, str]:
    """The verdict and its reason, from the final_loss rows and diverged counts of the baseline
    (b, bd) and the warmup condition (w, wd)."""
    if b is None or w is None:
        return "inconclusive", "a final_loss row is missing from summary.csv"
    if bd is not None and wd is not None:
        if bd - wd >= 2:
            return "helps", f"warmup prevented divergence ({wd} vs {bd} diverged runs)"
        if wd - bd >= 2:
            return "hurts", f"warmup caused divergence ({wd} vs {bd} diverged runs)"
        if bd == b["n"] and wd == w["n"] and bd > 0:
            return "both diverge", "every run diverged with and without warmup"
    bounds = (b["mean"], w["mean"], b["ci95_low"], b["ci95_high"], w["ci95_low"], w["ci95_high"])
    if all(math.isfinite(v) for v in bounds):
        if w["ci95_high"] < b["ci95_low"]:
            return "helps", "lower mean final loss; the 95% intervals do not overlap"
        if w["ci95_low"] > b["ci95_high"]:
            return "hurts", "higher mean final loss; the 95% intervals do not overlap"
        return "no clear difference", "the 95% intervals overlap"
    return "inconclusive", "some runs diverged or too few runs for an interval"


def _lrs(comparisons: Iterable[Comparison]) -> str:
    return ", ".join(f"lr={c['lr']:g}" for c in comparisons)


def criterion(comparisons: Sequence[Comparison]) -> tuple[Judgement, str]:
    """('met' | 'not met' | 'inconclusive', one-sentence reason) for SUCCESS_CRITERION."""
    helps = [c for c in comparisons if c["verdict"] == "helps"]
    hurts = [c for c in comparisons if c["verdict"] == "hurts"]
    open_ = [c for c in comparisons if c["verdict"] == "inconclusive"]
    if not comparisons:
        return "inconclusive", "summary.csv has no warmup comparison to judge"
    if hurts:
        return "not met", f"warmup is worse at {_lrs(hurts)}"
    if helps:
        return "met", f"warmup helps at {_lrs(helps)} and is worse nowhere"
    if open_:
        return "inconclusive", f"no learning rate shows a clear effect; {_lrs(open_)} stays open"
    return "not met", "at no learning rate does warmup help by the criterion's standard"


def best_condition(rows: Iterable[SummaryRow]) -> SummaryRow | None:
    """The final_loss row with the lowest finite mean (ties: first in file), or None."""
    finite = [r for r in rows if r["metric"] == "final_loss" and math.isfinite(r["mean"])]
    return min(finite, key=lambda r: r["mean"]) if finite else None


def interval(row: SummaryRow | None) -> str:
    """`mean [ci95_low, ci95_high]` (or just the mean when there is no interval)."""
    if row is None:
        return "missing"
    if math.isfinite(row["ci95_low"]) and math.isfinite(row["ci95_high"]):
        return f"{fmt(row['mean'])} [{fmt(row['ci95_low'])}, {fmt(row['ci95_high'])}]"
    return fmt(row["mean"])


def verdict_phrase(c: Comparison) -> str:
    """The verdict of a comparison as a clause: 'warmup made no clear difference', ..."""
    return {
        "helps": "warmup helped",
        "hurts": "warmup hurt",
        "no clear difference": "warmup made no clear difference",
        "both diverge": "every run diverged with and without warmup",
        "inconclusive": "the comparison is inconclusive",
    }.get(c["verdict"], c["verdict"])


def before_divergence(rows: Iterable[SummaryRow], comparisons: Iterable[Comparison]) -> list[str]:
    """Sentences on best_loss where runs diverged (how far training got first)."""
    index = summary_index(rows)
    out: list[str] = []
    for c in comparisons:
        bd, wd = c["base_div"], c["warm_div"]
        b, w = index.get((c["base"], "best_loss")), index.get((c["warm"], "best_loss"))
        if b and w and bd is not None and wd is not None and (bd or wd):
            lower = "with" if w["mean"] < b["mean"] else "without"
            out.append(
                f"At lr={c['lr']:g}, where runs diverged, the best loss reached during "
                f"training (best_loss, mean [95% CI]) was {interval(b)} without and "
                f"{interval(w)} with warmup, lower {lower} warmup; this describes how far "
                "training got before diverging, not a usable result."
            )
    return out


def comparison_line(c: Comparison) -> str:
    """One Markdown bullet stating a comparison with its numbers from summary.csv."""

    def side(row: SummaryRow | None, div: int | None) -> str:
        text = interval(row)
        if row is not None and div is not None:
            text += f", {div}/{row['n']} runs diverged"
        return text

    return (
        f"- lr={c['lr']:g}: constant rate {side(c['base_row'], c['base_div'])}; "
        f"{c['warmup']}-step warmup {side(c['warm_row'], c['warm_div'])}: "
        f"**{c['verdict']}** ({c['reason']})."
    )


def _node_text(rec: Mapping[str, object] | None, metric: str) -> str:
    """`n004 (improve; lr 0.4, warmup 50, constant, 600 epochs): final_loss 0.0069`."""
    if not rec:
        return "(none)"
    value = rec.get("metric")
    number = fmt(float(value)) if isinstance(value, int | float) else "(no result)"
    settings = ""
    if "lr" in rec:
        settings = (
            f"; lr {rec.get('lr')}, warmup {rec.get('warmup')}, {rec.get('schedule')} "
            f"schedule, {rec.get('epochs')} epochs"
        )
    return f"{rec.get('node')} ({rec.get('kind')}{settings}): {metric} {number}"


def search_lines(path: str | Path) -> list[str]:
    """Markdown bullets on the experiment search from experiment/search.json (written by
    experiment/search_report.py): the tree's size, the best node, the first draft and the
    baseline, every number formatted by fmt() from that file. No lines without the file."""
    path = Path(path)
    if not path.exists():
        return []
    import json

    raw = json.loads(path.read_text(encoding="utf-8"))
    metric = str(raw.get("metric") or "final_loss")
    kinds = raw.get("kinds") or {}
    counts = raw.get("counts") or {}
    base = raw.get("baseline")
    lines = [
        f"- Search tree: {raw.get('nodes')} nodes ("
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        + "; "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        + "), every one run as a job writing its own result file (experiment/tree/).",
        f"- Best node: {_node_text(raw.get('best'), metric)}.",
        f"- First draft: {_node_text(raw.get('first_draft'), metric)}.",
    ]
    if base:
        lines.append(
            f"- Baseline (the study's {base['condition']}, {base['n']} seeds): {metric} "
            f"{fmt(float(base['final_loss']))}."
        )
    ratio = raw.get("best_over_first_draft")
    if isinstance(ratio, int | float):
        lines.append(f"- The best node's {metric} is {fmt(ratio)} times the first draft's.")
    return lines
