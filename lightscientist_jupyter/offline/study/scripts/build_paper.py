#!/usr/bin/env python3
"""Write paper/paper.md for the warmup study from experiment/summary.csv and results.csv.

Written by LightScientist's offline demo model. Run from the workspace root:
    python paper/build_paper.py "<goal text>"
The goal text is only quoted in the disclaimer; the study does not depend on it.

Number format: every number in the paper is fmt(value) = f"{value:.4g}" (4 significant
digits; integers such as n unchanged; `inf`/`nan` as written) applied to the value in
experiment/summary.csv, so paper/check_paper.py can verify each one by formatting again.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# Imported modules beside a script leave no __pycache__ in the workspace.
sys.dont_write_bytecode = True
from study_common import (  # noqa: E402
    before_divergence,
    best_condition,
    compare_warmup,
    comparison_line,
    criterion,
    goal_sentence,
    interval,
    read_rows,
    read_summary,
    search_lines,
    summary_table_rows,
    verdict_phrase,
    write_atomic,
)
from study_design import (  # noqa: E402
    DESIGN,
    DESIGN_SHORT,
    DISCLAIMER,
    STUDY_QUESTION,
    SUCCESS_CRITERION,
)

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "experiment" / "summary.csv"
RESULTS = ROOT / "experiment" / "results.csv"
CAPTIONS = ROOT / "paper" / "figures" / "captions.md"
PAPER = ROOT / "paper" / "paper.md"
REFERENCES = ROOT / "paper" / "references.bib"
RELATED = {
    "1706.02677": "a gradual warmup made large-minibatch SGD on ImageNet work",
    "1706.03762": "the Transformer is trained with a learning rate that rises linearly at first",
    "1908.03265": "warmup is related to the variance of adaptive learning rates early on",
    "2002.04745": "the need for warmup depends on where layer normalization sits",
    "1810.13243": "warmup is examined among other deep-learning heuristics",
    "1910.04209": "an untuned warmup is studied for adaptive optimisers",
    "1608.03983": "warm restarts reset the learning rate during training",
    "2103.00065": "full-batch gradient descent is observed at the edge of stability",
    "1512.03385": "a small initial learning rate warmed up a very deep residual network",
}
"""What each work of the survey's library is cited for (by arXiv id)."""
Reference = tuple[str, dict[str, str]]
"""An entry of paper/references.bib: its key and its fields."""
TABLE_HEADER = "| condition | metric | n | mean | std | ci95_low | ci95_high |"


def figure1_caption() -> str:
    if not CAPTIONS.exists():
        return "Figure 1 (captions.md is missing; run python paper/figures/make_figures.py)."
    text = CAPTIONS.read_text(encoding="utf-8")
    m = re.search(r"^## Figure 1\s*\n+(.*?)(?:\n\s*\n|\Z)", text, re.S | re.M)
    return " ".join(m.group(1).split()) if m else "Figure 1."


def read_references() -> list[Reference]:
    """(key, fields) of each entry of paper/references.bib (the entries `cite` wrote)."""
    if not REFERENCES.exists():
        return []
    text = REFERENCES.read_text(encoding="utf-8")
    entries: list[Reference] = []
    for m in re.finditer(r"@\w+\{([^,\s]+),(.*?)\n\}", text, re.S):
        fields: dict[str, str] = dict(
            re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", m.group(2), re.M)
        )
        entries.append((m.group(1), fields))
    return entries


def related_work(entries: list[Reference]) -> str:
    if not entries:
        return "No related work was found in the literature searched for this study."
    said = [
        f"{RELATED.get(f.get('eprint', ''), 'related work on learning-rate schedules')} [@{k}]"
        for k, f in entries
    ]
    return "Related work: " + "; ".join(said) + "."


def reference_list(entries: list[Reference]) -> str:
    if not entries:
        return "No external works are cited."
    lines = []
    for key, f in entries:
        authors = f.get("author", "").split(" and ")
        who = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
        venue = f.get("booktitle") or f.get("journal") or "preprint"
        ids = f" arXiv:{f['eprint']}." if f.get("eprint") else ""
        ids += f" doi:{f['doi']}." if f.get("doi") else ""
        lines.append(
            f"- [@{key}] {who} ({f.get('year', 'n.d.')}). {f.get('title', '')}. {venue}.{ids}"
        )
    return "\n".join(lines)


def search_results(lines: list[str]) -> str:
    """The Results paragraph on the experiment search (none when the stage ran no search)."""
    if not lines:
        return ""
    return (
        "\nBeyond the grid, a best-first search over the study's space (learning rate, "
        "warmup, schedule after the warmup, epochs) ran each variant as a job "
        "(experiment/search.json, experiment/search.csv):\n\n" + "\n".join(lines) + "\n"
    )


def main(argv: list[str]) -> int:
    goal = " ".join(argv[1:])
    if not SUMMARY.exists():
        print(f"no {SUMMARY}: run python experiment/analyze.py first", file=sys.stderr)
        return 1
    rows = read_summary(SUMMARY.read_text(encoding="utf-8"))
    if not rows:
        print(f"{SUMMARY} has no rows", file=sys.stderr)
        return 1
    results = read_rows(RESULTS)
    n_runs = len({r["run_id"] for r in results})
    n_failed = len({r["run_id"] for r in results if r.get("status") != "ok"})
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    best = best_condition(rows)
    conditions = list(dict.fromkeys(r["condition"] for r in rows))
    table = summary_table_rows(rows)
    best_text = (
        f"The lowest mean final loss, {interval(best)} (mean [95% CI] over "
        f"{best['n']} seeds), was reached by {best['condition']}."
        if best
        else "No condition reached a finite mean final loss."
    )
    per_lr = []
    for c in comps:
        bd, wd = c["base_div"], c["warm_div"]
        if c["verdict"] == "both diverge":
            per_lr.append(f"At lr={c['lr']:g}, {verdict_phrase(c)}.")
        else:
            div = (
                f" Diverged runs: {bd} without and {wd} with warmup."
                if bd is not None and wd is not None and (bd or wd)
                else ""
            )
            per_lr.append(f"At lr={c['lr']:g}, {verdict_phrase(c)} ({c['reason']}).{div}")
    before = before_divergence(rows, comps)
    abstract = (
        f"We ask whether a linear learning-rate warmup helps plain full-batch gradient descent "
        f"train a small multilayer perceptron. We train {DESIGN_SHORT}, and compare each warmup "
        f"condition with constant-rate training at the same learning rate, using the final "
        f"training loss and the number of diverged runs. {best_text} "
        + " ".join(per_lr)
        + f" The success criterion, fixed before the runs, was {verdict}. The study is tiny (three "
        "seeds, one synthetic task), so these results describe this setting only."
    )
    comp_lines = "\n".join(comparison_line(c) for c in comps)
    refs = read_references()
    paper = f"""# Learning-rate warmup for plain gradient descent on a small MLP

> **Offline demo.** {DISCLAIMER}{goal_sentence(goal)}

## Abstract

{abstract}

## Introduction

Learning-rate warmup, which starts training with a small step size and increases it to its
target over the first steps, is commonly used to stabilise the early phase of training. This
report asks whether it does anything for the simplest case: full-batch gradient descent on a
tiny network, where the only source of instability is the step size itself. Question:
{STUDY_QUESTION} Claims, limited to what experiment/brief.md approved: (1) whether the success
criterion fixed before the experiment was met; (2) which condition reached the lowest mean
final loss; (3) how warmup compared with constant-rate training at each learning rate.
{related_work(refs)}

## Method

A 2-16-1 multilayer perceptron (tanh hidden units, linear output; W1 ~ N(0, 1),
W2 ~ N(0, 1/16), zero biases, drawn with the run's seed) is trained by full-batch gradient
descent to minimise ½·mean squared error. With warmup length w > 0, the step size at step t
(counting from 0) is lr·min(1, (t+1)/w); with w = 0 it is lr throughout. A run diverges when
the loss becomes nan/inf or exceeds 1e6; it then stops and its final loss is recorded as inf.

## Experimental setup

Design: {DESIGN}. Metrics per run: final_loss (loss after the last step), best_loss (lowest
loss seen) and diverged (0/1). Per condition we report n, mean, sample standard deviation and a
95% t-interval over seeds (mean ± t·std/√n, t the 0.975 (not measured) quantile of Student's t
with n−1 degrees of freedom, from a table: 4.303 (not measured) for n = 3).
Warmup helps at a learning rate only by the criterion fixed before the runs: {SUCCESS_CRITERION}

## Results

Table 1: every row of experiment/summary.csv. Numbers are `f"{{x:.4g}}"` of the file's values;
inf means that at least one run diverged, nan that no interval exists.

{TABLE_HEADER}
|---|---|---:|---:|---:|---:|---:|
{table}

![Figure 1](figures/figure1.png)

*Figure 1.* {figure1_caption()}

{best_text} Warmup against constant rate at each learning rate (final_loss mean [95% CI]):

{comp_lines}

{" ".join(before) or "No run diverged, so best_loss adds nothing beyond final_loss here."}

**Success criterion: {verdict}** — {why}. Data: {n_runs} runs in experiment/results.csv,
{n_failed} failed, {len(conditions)} conditions.
{search_results(search_lines(ROOT / "experiment" / "search.json"))}
## Limitations

- Three seeds per condition; the intervals are wide and a small effect would be missed.
- One generated task, one 2-16-1 network, one warmup length, training loss only (no held-out
  data), full-batch gradient descent only.
- At stable learning rates warmup takes smaller early steps, so with a fixed budget a slightly
  higher loss can reflect the smaller total step rather than stability.
- Divergence is defined by a threshold (1e6 or nan/inf); a run oscillating below it counts as
  not diverged.
- The study was chosen and run by LightScientist's offline demo model, independently of the
  project's goal text.

## Reproducibility

From the workspace root, with numpy, pandas and matplotlib installed:

```
python experiment/run_experiment.py     # experiment/results.csv, curves.csv, log.md
python experiment/analyze.py            # experiment/summary.csv, analysis.md
python paper/figures/make_figures.py    # paper/figures/figure1.png, captions.md
python paper/build_paper.py "<goal>"    # paper/paper.md (this file)
python paper/check_paper.py             # paper/review.md
```

Every run is deterministic (fixed data seed and weight seeds; no clock or network).

## References

{reference_list(refs)}
"""
    write_atomic(PAPER, paper)
    print(f"wrote {PAPER}: {len(rows)} table rows; criterion {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
