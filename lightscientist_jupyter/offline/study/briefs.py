"""The gates' decision briefs: the idea brief and the experiment brief.

The experiment brief is built from the text of experiment/summary.csv with the same helpers
the scripts use (`study_common`), so its numbers are formatted and judged as the paper's are.
"""

from __future__ import annotations

from lightscientist_jupyter.offline.study.idea import SCORES
from lightscientist_jupyter.offline.study.probes import parse_probes
from lightscientist_jupyter.offline.study.scripts.study_common import (
    before_divergence,
    best_condition,
    compare_warmup,
    comparison_line,
    criterion,
    diverged_count,
    fmt,
    read_summary,
    summary_index,
)
from lightscientist_jupyter.offline.study.scripts.study_design import (
    DESIGN,
    HIDDEN,
    LEARNING_RATES,
    N_RUNS,
    SEEDS,
    STEPS,
    SUCCESS_CRITERION,
    WARMUP_STEPS,
)
from lightscientist_jupyter.offline.study.text import note


def idea_brief_md(goal: str, probe_texts: str | None = None) -> str:
    """idea/brief.md: the decision brief of the idea gate, with the success criterion.

    With `probe_texts` (the probe files' text), the probe results are quoted; otherwise the
    brief points to idea/probes/summary.md for them.
    """
    totals = {s[0]: sum(s[1:7]) for s in SCORES}
    lrs = ", ".join(f"{lr:g}" for lr in LEARNING_RATES)
    probes = parse_probes(probe_texts) if probe_texts else {}
    if probes:
        probe_lines = "\n".join(
            f"- `{cid}` (idea/probes/{cid}.md): {p['fields'].get('result', '—')} — verdict "
            f"**{p['verdict']}**."
            for cid, p in probes.items()
        )
    else:
        probe_lines = (
            "- Probe results for c1-linear-warmup and c2-lr-sweep: see "
            "idea/probes/summary.md and idea/probes/<id>.md (measured numbers, one "
            "seed each; not restated here)."
        )
    return f"""# Idea gate: decision brief

{note(goal)}
## Proposal

**c1-linear-warmup — linear warmup vs constant rate across learning rates.** Hypothesis: a
50-step linear learning-rate warmup lowers the final training loss of plain full-batch gradient
descent after {STEPS} steps, or prevents divergence, at one or more of the learning rates
{lrs}, and is not worse at any of them.

## Experiment in brief

- **Design:** {DESIGN}.
- **Baseline:** warmup 0 (constant rate) at the same learning rate, steps and seeds.
- **Primary metric:** final training loss (½·MSE) after {STEPS} steps; mean over seeds with a
  95% t-interval. **Secondary:** best loss during training; diverged (loss nan/inf or above
  1e6), counted per condition.
- **Success criterion (fixed now):** {SUCCESS_CRITERION}

## Evidence

- Scores (idea/evaluation.md): c1-linear-warmup {totals["c1-linear-warmup"]}/30,
  c2-lr-sweep {totals["c2-lr-sweep"]}/30, c3-warmup-length {totals["c3-warmup-length"]}/30; c1
  and c2 were effectively tied, and c2's sweep is folded into this design as the learning-rate
  axis.
{probe_lines}

## Alternatives

- c2-lr-sweep: does not test warmup by itself; kept as the learning-rate factor.
- c3-warmup-length: only informative if lr 0.8 is unstable; a possible follow-up.

## Risks

- Three seeds give wide intervals: a real but small effect may read as "no clear difference".
  Guard: the criterion says in advance that overlapping intervals do not count.
- Warmup takes smaller early steps, so at stable rates it may simply lag; a higher loss there
  is a budget effect, and the analysis will say so.
- Diverged runs make means infinite. Guard: divergence is counted as its own metric.
- One synthetic task and a 2-{HIDDEN}-1 network: results do not transfer to large models.

## What approval commits to

About two seconds of CPU for all {N_RUNS} runs (run in batches by experiment.loop), plus
analysis, a figure and a short paper. The hypothesis, the design and the success criterion
above are fixed from here on.

## If rejected

Reply with the stage to return to: **idea.evaluate** to take a runner-up (c3-warmup-length),
or **idea.generate** for new candidates. The offline demo cannot redesign the study, so a
comment asking for a different question will be recorded but not acted on; with a configured
language model, say which question or which constraint should change.
"""


def experiment_brief_md(summary_csv_text: str) -> str:
    """experiment/brief.md: the experiment gate's brief, with real numbers from summary.csv text."""
    rows = read_summary(summary_csv_text)
    if not rows:
        return f"""# Experiment gate: decision brief

{note()}
## Finding

experiment/summary.csv could not be read (no header `condition,metric,...` or no rows in the
text given), so there is no finding to report.

## What approval commits to

Nothing should be approved on this brief.

## If rejected

Return to **experiment.analyze** to regenerate the summary with experiment/analysis.ipynb
(run it again), or to **experiment.loop** if results.csv is incomplete.
"""
    index = summary_index(rows)
    comparisons = compare_warmup(rows)
    verdict, why = criterion(comparisons)
    best = best_condition(rows)
    conditions = list(dict.fromkeys(r["condition"] for r in rows))
    table = []
    for cond in conditions:
        fl = index.get((cond, "final_loss"))
        if fl is None:
            continue
        ci = (
            f"[{fmt(fl['ci95_low'])}, {fmt(fl['ci95_high'])}]"
            if fl["ci95_low"] == fl["ci95_low"]
            else "— (no interval)"
        )
        div = diverged_count(index, cond)
        div_text = "—" if div is None else f"{div}/{fl['n']}"
        table.append(f"| {cond} | {fmt(fl['mean'])} | {ci} | {fl['n']} | {div_text} |")
    n_total = sum(index[(c, "final_loss")]["n"] for c in conditions if (c, "final_loss") in index)
    best_line = (
        f"The lowest mean final loss is {fmt(best['mean'])} for `{best['condition']}`."
        if best
        else "No condition has a finite mean final loss."
    )
    comp_lines = "\n".join(comparison_line(c) for c in comparisons) or "- (no comparison)"
    helps = [c for c in comparisons if c["verdict"] == "helps"]
    claims = [
        f"1. The success criterion was **{verdict}**: {why} "
        "(experiment/summary.csv, metric final_loss and diverged)."
    ]
    claims.append(f"2. {best_line[:-1]} (experiment/summary.csv).")
    both = [c for c in comparisons if c["verdict"] == "both diverge"]
    if both:
        claims.append(
            "3. At " + ", ".join(f"lr={c['lr']:g}" for c in both) + " every run "
            "diverged with and without warmup: warmup did not make the rate usable."
        )
    not_helps = "" if helps else "; that warmup helps on this task"
    return f"""# Experiment gate: decision brief

{note()}
## Finding

Hypothesis: a 50-step linear warmup lowers the final training loss, or prevents divergence, at
some learning rate and is worse at none. Success criterion: **{verdict}** — {why}. {best_line}

## Evidence

From experiment/summary.csv (final_loss: mean, 95% t-interval over seeds, n; diverged runs from
the `diverged` metric; numbers formatted `f"{{x:.4g}}"`):

| condition | mean final_loss | 95% CI | n | diverged |
|---|---:|---:|---:|---:|
{chr(10).join(table)}

Warmup against the constant-rate baseline at each learning rate:

{comp_lines}

{" ".join(before_divergence(rows, comparisons)) or "No run diverged."}

## What was run

{N_RUNS} runs were planned ({len(LEARNING_RATES)} learning rates × {len(WARMUP_STEPS)} warmup
lengths × {len(SEEDS)} seeds); summary.csv counts {n_total} successful runs over
{len(conditions)} conditions (any shortfall is a failed run, listed in experiment/log.md).
Divergence is an outcome, not a failure: diverged runs are counted, with final loss inf. No
deviation from experiment/plan.md.

## Proposed claims

{chr(10).join(claims)}

Claims the paper must not make: that warmup helps (or not) for larger networks, other data,
SGD or adaptive optimisers; any significance beyond the interval comparison above{not_helps}.

## Risks

- Three seeds per condition: the intervals are wide, and a small effect would be missed.
- One generated task, one tiny network, one warmup length: the result may not transfer.
- At stable learning rates warmup takes smaller early steps; a small loss gap there is a budget
  effect as much as a stability effect.

## What approval commits to

Writing the paper on these results as they stand, with no further runs. Reproduce with:

```
python experiment/run_experiment.py
jupyter execute --inplace experiment/analysis.ipynb
```

## If rejected

Reply with **experiment.setup** to change the design (more seeds, other warmup lengths or
learning rates; each extra seed costs well under a second for the whole grid), after which
experiment.loop runs the new plan, or with **experiment.loop** to rerun failed runs. Say which
comparison is unconvincing and what would settle it.
"""
