"""The warmup study's summary and its report, as the analysis notebook uses them.

Written by LightScientist's offline demo model beside experiment/analysis.ipynb, whose cells
load experiment/results.csv, compute experiment/summary.csv, show the summary table and the
success criterion, and write experiment/analysis.md with `analysis_text`.
For every condition and metric it takes the rows with status `ok`, and writes n, mean, sample
std and a 95% t-interval over seeds (mean +- t(0.975, n-1) * std / sqrt(n), t from a small
table; no resampling, so nothing random). A diverged run's final_loss is inf, which makes its
condition's mean inf and its std and interval nan: divergence is counted by the `diverged`
metric instead. Numbers in analysis.md use fmt() = f"{x:.4g}" on the values in summary.csv.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path

import pandas as pd

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import (  # noqa: E402
    SUMMARY_COLUMNS,
    SummaryRow,
    best_condition,
    compare_warmup,
    comparison_line,
    criterion,
    describe,
    fmt,
    interval,
    parse_condition,
    search_lines,
    summary_index,
    summary_table_rows,
)
from study_design import DISCLAIMER, METRICS, N_RUNS, SUCCESS_CRITERION  # noqa: E402


def condition_order(name: str) -> tuple[int, float, int, str]:
    parsed = parse_condition(name)
    return (0, parsed[0], parsed[1], name) if parsed else (1, 0.0, 0, name)


def search_section(lines: list[str]) -> str:
    """The section on the experiment search (none when the stage ran no search)."""
    if not lines:
        return ""
    return (
        "## Search over configurations\n\n"
        "Best-first search over the study's space (learning rate, warmup, schedule, epochs), "
        "from experiment/search.json:\n\n" + "\n".join(lines) + "\n\n"
    )


def load_results(path: Path) -> pd.DataFrame:
    """results.csv with `value` as numbers (a failed run's empty value is nan)."""
    df = pd.read_csv(
        path,
        dtype={"run_id": str, "condition": str, "metric": str, "status": str, "value": str},
        keep_default_na=False,
    )
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    return df


def summary_csv(df: pd.DataFrame) -> str:
    """summary.csv's text: n, mean, std and the 95% interval of every condition and metric
    over the runs with status `ok` (full precision: `repr` of each float)."""
    out_rows = []
    for cond in sorted(df["condition"].unique().tolist(), key=condition_order):
        part = df[df["condition"] == cond]
        for metric in METRICS:
            sel = part[(part["metric"] == metric) & (part["status"] == "ok")]
            n, mean, std, lo, hi = describe(sel["value"].astype(float).tolist())
            out_rows.append([cond, metric, str(n), *(repr(float(x)) for x in (mean, std, lo, hi))])
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    writer.writerows(out_rows)
    return buf.getvalue()


def data_lines(df: pd.DataFrame) -> list[str]:
    """One table row per condition: its runs, how many ran, which failed."""
    lines = []
    for cond in sorted(df["condition"].unique().tolist(), key=condition_order):
        part = df[df["condition"] == cond]
        runs = sorted(part["run_id"].unique().tolist())
        bad = sorted(part.loc[part["status"] != "ok", "run_id"].unique().tolist())
        lines.append(
            f"| {cond} | {len(runs)} | {len(runs) - len(bad)} | "
            f"{', '.join(bad) if bad else 'none'} |"
        )
    return lines


def best_sentence(rows: list[SummaryRow]) -> str:
    best = best_condition(rows)
    if best is None:
        return "No condition has a finite mean final loss."
    return (
        f"`{best['condition']}` has the lowest mean final loss, {interval(best)} "
        f"(mean [95% CI], n={best['n']})."
    )


def analysis_text(df: pd.DataFrame, rows: list[SummaryRow], root: Path) -> str:
    """experiment/analysis.md: the data used, the main result, the criterion, the table."""
    index = summary_index(rows)
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    n_runs = int(df["run_id"].nunique())
    n_failed = int(df.loc[df["status"] != "ok", "run_id"].nunique())
    table = summary_table_rows(rows)
    best_text = best_sentence(rows)
    bl_lines = []
    for c in comps:
        b = index.get((c["base"], "best_loss"))
        w = index.get((c["warm"], "best_loss"))
        if b and w:
            bl_lines.append(
                f"- lr={c['lr']:g}: best loss during training {interval(b)} without "
                f"warmup, {interval(w)} with {c['warmup']}-step warmup."
            )
    spread = []
    for c in comps:
        b, w = c["base_row"], c["warm_row"]
        if b and w and all(math.isfinite(v) for v in (b["mean"], w["mean"], b["std"], w["std"])):
            spread.append(
                f"- lr={c['lr']:g}: difference of means (warmup - constant) "
                f"{fmt(w['mean'] - b['mean'])}; seed std {fmt(b['std'])} (constant) "
                f"and {fmt(w['std'])} (warmup)."
            )
        elif b and w:
            spread.append(f"- lr={c['lr']:g}: no finite spread to compare (diverged runs).")
    text = f"""# Analysis

> **Offline demo.** {DISCLAIMER}

Numbers below are formatted with `f"{{x:.4g}}"` from experiment/summary.csv, which the notebook
experiment/analysis.ipynb computes from experiment/results.csv (its cells show each step).

## Data used

{n_runs} of {N_RUNS} planned runs are in results.csv; {n_failed} failed (excluded from the
summary, listed below). Diverged runs are not failures: they are kept, with final_loss inf and
diverged = 1.

| condition | runs | ok | failed runs |
|---|---:|---:|---|
{chr(10).join(data_lines(df))}

## Main result

{best_text} Warmup against the constant-rate baseline at each learning rate (final_loss mean
[95% CI]):

{chr(10).join(comparison_line(c) for c in comps) or "- (no comparison possible)"}

**Success criterion** (idea/brief.md): {SUCCESS_CRITERION}

**Met: {verdict}** — {why}.

## Summary table

| condition | metric | n | mean | std | ci95_low | ci95_high |
|---|---|---:|---:|---:|---:|---:|
{table}

## Method

For each condition and metric: mean and sample standard deviation over the seeds with status
`ok`; 95% interval mean +- t(0.975, n-1)·std/√n with t from a table (4.303 for n = 3). "Helps"
or "hurts" at a learning rate requires non-overlapping intervals, or at least two fewer (more)
diverged runs. No other test was run, so no p-values are claimed.

{search_section(search_lines(root / "experiment" / "search.json"))}## Secondary results

{chr(10).join(bl_lines) or "- (no best_loss rows)"}

## Robustness

{chr(10).join(spread) or "- (nothing to compare)"}

With three seeds, one unusual seed moves a mean a lot; the per-run values are in
experiment/results.csv.

## Threats to validity

- Small n: three seeds per condition, so intervals are wide.
- One generated task, one 2-16-1 network, one warmup length (50 steps), training loss only.
- At stable learning rates warmup takes smaller early steps, so within a fixed budget it can
  lag for reasons unrelated to stability.
- The divergence threshold (loss above 1e6 or nan/inf) is a choice; runs that oscillate below it
  count as not diverged.

## Conclusion

On this tiny task, the success criterion for "warmup helps plain gradient descent" was
**{verdict}** ({why}). {best_text} The study is small (three seeds, one network, one dataset),
so it describes this setting only.
"""
    return text
