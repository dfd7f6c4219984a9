#!/usr/bin/env python3
"""Check paper/paper.tex (the LaTeX source) against the data and write paper/review.md.

Written by LightScientist's offline demo model. Run from the workspace root:
    python paper/check_paper.py
Checks: every number in the Results table equals fmt(value) = f"{value:.4g}" of the matching
row of experiment/summary.csv, and the table covers every row; every decimal number in the
Abstract appears in summary.csv (formatted) or is a learning rate of the design; Figure 1
exists, is a PNG and is referenced; the disclaimer is present; and a rerun of
experiment/run_experiment.py (to paper/rerun_results.csv, never over the original) reproduces
experiment/results.csv. It exits 0 even when a check fails; review.md says which failed.
"""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Literal

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import (  # noqa: E402
    SummaryRow,
    best_condition,
    compare_warmup,
    criterion,
    fmt,
    read_summary,
    summary_index,
    write_atomic,
)
from study_design import DISCLAIMER, LEARNING_RATES, STUDY_QUESTION  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "experiment" / "summary.csv"
RESULTS = ROOT / "experiment" / "results.csv"
PAPER = ROOT / "paper" / "paper.tex"
FIGURE = ROOT / "paper" / "figures" / "figure1.png"
REVIEW = ROOT / "paper" / "review.md"
META = ROOT / "paper" / "reviews" / "meta.json"
RERUN = ROOT / "paper" / "rerun_results.csv"
RUNNER = ROOT / "experiment" / "run_experiment.py"
Column = Literal["n", "mean", "std", "ci95_low", "ci95_high"]
COLUMNS: list[Column] = ["n", "mean", "std", "ci95_low", "ci95_high"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def section(text: str, title: str) -> str | None:
    """The text of the LaTeX section `title` (`\\section{Results}` up to the next section or
    the bibliography), or of the abstract environment for "Abstract"."""
    if title == "Abstract":
        m = re.search(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", text, re.S)
    else:
        m = re.search(
            rf"^\\section\*?\{{{re.escape(title)}\}}(.*?)"
            r"(?=^\\section|^\\bibliography|^\\end\{document\}|\Z)",
            text,
            re.S | re.M,
        )
    return m.group(1) if m else None


def cells_of(line: str) -> list[str]:
    """The cells of a tabular row (`a & b \\\\`), LaTeX's escapes of `_` `%` `&` undone."""
    row = line.strip().removesuffix("\\\\").strip()
    return [re.sub(r"\\([_%&#$])", r"\1", c).strip() for c in re.split(r"(?<!\\)&", row)]


def results_table(results_text: str) -> tuple[list[str] | None, list[tuple[int, list[str]]]]:
    """The rows (line in the section, cells) of the first tabular whose header starts
    `condition & metric`."""
    lines = results_text.splitlines()
    for i, line in enumerate(lines):
        if "&" in line and cells_of(line)[:2] == ["condition", "metric"]:
            header = cells_of(line)
            rows = []
            for j, row in enumerate(lines[i + 1 :], start=i + 2):
                if row.strip().startswith(("\\bottomrule", "\\end{tabular}")):
                    break
                if "&" in row:
                    rows.append((j, cells_of(row)))
            return header, rows
    return None, []


def expected(row: SummaryRow, column: Column) -> str:
    return fmt(row["n"]) if column == "n" else fmt(row[column])


def same_value(a: str, b: str) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def rerun_check() -> tuple[bool, str]:
    if not RUNNER.exists():
        return False, "experiment/run_experiment.py is missing; nothing was rerun"
    if not RESULTS.exists():
        return False, "experiment/results.csv is missing"
    try:
        proc = subprocess.run(
            [sys.executable, str(RUNNER), "--out", str(RERUN)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return False, "the rerun took more than 600 s and was stopped"
    if proc.returncode != 0 or not RERUN.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        return False, f"the rerun failed (exit {proc.returncode}): {' / '.join(tail)}"

    def load(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
        with open(path, newline="", encoding="utf-8") as fh:
            return {
                (r["run_id"], r["metric"]): (r["value"], r["status"]) for r in csv.DictReader(fh)
            }

    orig, again = load(RESULTS), load(RERUN)
    if set(orig) != set(again):
        missing = sorted(set(again) - set(orig))
        return False, (
            f"results.csv has {len(orig)} rows, the rerun {len(again)}"
            + (f"; missing from results.csv e.g. {missing[0]}" if missing else "")
        )
    diff = [k for k in orig if orig[k][1] != again[k][1] or not same_value(orig[k][0], again[k][0])]
    if diff:
        return False, f"{len(diff)} of {len(orig)} values differ on rerun, e.g. {diff[0]}"
    return True, (
        f"`python experiment/run_experiment.py --out paper/rerun_results.csv` reproduced "
        f"all {len(orig)} rows of experiment/results.csv"
    )


def reviewer_lines(path: Path) -> str:
    """The review rounds of paper/reviews/meta.json (written by the review stage's layer 1)
    as Markdown: each round's mean and decision, each reviewer's scores in the last one."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "- no review round on record (paper/reviews/meta.json)."
    lines = []
    for r in [*(meta.get("rounds") or []), meta]:
        asked = "; ".join(r.get("required_changes") or [])
        lines.append(
            f"- Round {r.get('round')}: mean overall {r.get('mean')} against {r.get('accept')} "
            f"to accept: {r.get('decision')}" + (f"; asked: {asked}" if asked else "")
        )
    lines += [
        "",
        "| reviewer | soundness | presentation | contribution | overall | decision |",
        "|---|---|---|---|---|---|",
    ]
    for r in meta.get("reviews") or []:
        s = r.get("scores") or {}
        lines.append(
            f"| {r.get('reviewer')} | {s.get('soundness')} | {s.get('presentation')} | "
            f"{s.get('contribution')} | {r.get('overall')} | {r.get('decision')} |"
        )
    return "\n".join(lines)


def main() -> int:
    checks, number_rows, blocking = [], [], []

    def check(ok: bool, text: str) -> None:
        checks.append((ok, text))
        if not ok:
            blocking.append(text)

    paper = PAPER.read_text(encoding="utf-8") if PAPER.exists() else None
    rows = read_summary(SUMMARY.read_text(encoding="utf-8")) if SUMMARY.exists() else []
    check(paper is not None, "paper/paper.tex exists")
    check(bool(rows), "experiment/summary.csv exists and has rows")
    index = summary_index(rows)
    if paper is not None and rows:
        results = section(paper, "Results")
        header, table = results_table(results or "")
        check(
            header is not None,
            "the Results section has the summary table "
            "(`condition & metric & n & mean & std & ci95_low & ci95_high`)",
        )
        mismatches, seen = [], set()
        if header is not None:
            for line_no, cells in table:
                if len(cells) < 2:
                    continue
                key = (cells[0], cells[1])
                row = index.get(key)
                if row is None:
                    mismatches.append(
                        f"line {line_no}: row {key[0]} / {key[1]} is not in summary.csv"
                    )
                    continue
                seen.add(key)
                for col in COLUMNS:
                    pos = header.index(col) if col in header else None
                    value = cells[pos] if pos is not None and pos < len(cells) else "(missing)"
                    want = expected(row, col)
                    ok = value == want
                    number_rows.append(
                        f"| Results table, {key[0]} / {key[1]}, {col} (line {line_no}) "
                        f"| {value} | experiment/summary.csv, {key[0]} / {key[1]}, "
                        f"{col} = {want} | {'yes' if ok else '**NO**'} |"
                    )
                    if not ok:
                        mismatches.append(
                            f"line {line_no}, {key[0]} / {key[1]}, column {col}: "
                            f"paper has {value}, summary.csv gives {want} (mismatch)"
                        )
            absent = [k for k in index if k not in seen]
            check(
                not mismatches,
                "every number in the Results table equals the formatted "
                "summary.csv value" + ("" if not mismatches else ": " + "; ".join(mismatches)),
            )
            check(
                not absent,
                "the Results table covers every row of summary.csv"
                + ("" if not absent else ": missing " + ", ".join(f"{c} / {m}" for c, m in absent)),
            )
        abstract = section(paper, "Abstract") or ""
        allowed = {expected(r, c) for r in rows for c in COLUMNS} | {
            f"{lr:g}" for lr in LEARNING_RATES
        }
        tokens = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[+-]?\d+)?", abstract)
        stray = sorted({t for t in tokens if t not in allowed})
        for t in tokens:
            number_rows.append(
                f"| Abstract | {t} | summary.csv (formatted) or a learning rate | "
                f"{'yes' if t in allowed else '**NO**'} |"
            )
        check(
            not stray,
            f"every decimal number in the Abstract ({len(tokens)}) is a formatted "
            "summary.csv value or a learning rate"
            + ("" if not stray else ": not found: " + ", ".join(stray)),
        )
        check(DISCLAIMER in paper, "the paper states the offline-demo disclaimer")
        check("figures/figure1.png" in paper, "the paper references figures/figure1.png")
    fig_ok = (
        FIGURE.exists() and FIGURE.stat().st_size > 1000 and FIGURE.read_bytes()[:8] == PNG_MAGIC
    )
    check(fig_ok, "paper/figures/figure1.png exists and is a non-empty PNG")
    rerun_ok, rerun_text = rerun_check()
    check(rerun_ok, "reproducibility: " + rerun_text)

    failed = [t for ok, t in checks if not ok]
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    best = best_condition(rows)
    headline = (
        "**Verdict: all checks passed.**"
        if not failed
        else f"**Verdict: {len(failed)} check(s) FAILED** — the paper must not be accepted "
        "as it is; see the failed checks below."
    )
    check_lines = "\n".join(
        f"- [{'x' if ok else ' '}] {'passed' if ok else 'FAILED'}: {t}" for ok, t in checks
    )
    issues_blocking = "\n".join(
        f"- {t} (fix: regenerate with `python paper/build_paper.py`, "
        "or rerun the stage that produced the data)"
        for t in blocking
    )
    evidence = (
        f"{len(checks) - len(failed)} of {len(checks)} checks passed"
        + ("" if not failed else f" ({len(failed)} failed: see Checks)")
        + "; the number check compares every Results-table number with experiment/summary.csv; "
        + "reproducibility: "
        + ("the rerun matched" if rerun_ok else "the rerun did not match or did not run")
        + "."
    )
    review = f"""# Review of paper/paper.tex

> **Offline demo.** {DISCLAIMER}

{headline}

## Summary

The paper asks: {STUDY_QUESTION} It reports a grid of learning rates × warmup lengths × seeds
on a generated regression task, a summary table from experiment/summary.csv, Figure 1, and the
success criterion as **{verdict}** ({why}).
{("Lowest mean final loss: " + best["condition"] + ", " + fmt(best["mean"]) + ".") if best else ""}

## Checks

{check_lines}

## Reviewers

{reviewer_lines(META)}

## Number check

| location in paper | value in paper | source file and row | matches |
|---|---|---|---|
{chr(10).join(number_rows) or "| — | — | — | — |"}

## Claims and evidence

The paper's claims are generated from experiment/summary.csv by the same rules as
experiment/analysis.md (helper functions shared by both scripts): the criterion verdict, the
best condition and one comparison per learning rate. The claims go no further than the
interval comparison; the paper states its limitations (three seeds, one task, one network).

## Reproducibility check

- {rerun_text}.
- Figures: regenerate with `python paper/figures/make_figures.py` (not rerun by this check).

## Issues

**blocking**

{issues_blocking or "- none"}

**should fix**

- none found by the automatic checks; a human reader should still judge the prose.

**minor**

- The study is the offline demo's fixed study and does not address the project's goal text;
  the paper says so in its first lines.

## Decision brief

- **Proposal:** accept paper/paper.tex (and paper/paper.pdf, built from it) as the
  project's result.
- **Evidence:** {evidence}
- **Risks and limitations:** three seeds per condition, one synthetic task, one tiny network;
  the result says nothing about large models. The question was chosen by the offline demo,
  not by the goal.
- **What approval commits to:** the project ends with the paper as it is.
- **If rejected:** go back to **paper.write** with the failed checks listed above
  (`python paper/build_paper.py "<goal>"` regenerates the paper from the data), or to
  **experiment.analyze** / **experiment.loop** if the problem lies in the results; say in the
  comment which check or claim is wrong.
"""
    write_atomic(REVIEW, review)
    print("all checks passed" if not failed else f"{len(failed)} check(s) FAILED:")
    for t in failed:
        print(f"- {t}")
    print(f"wrote {REVIEW}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
