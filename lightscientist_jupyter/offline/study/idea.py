"""The idea phase's notes: the survey, the candidates and their evaluation (fixed text).

Each builder returns the Markdown the offline model writes for one required output; the
numbers in them are design settings from `study_design`, never measurements.
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.offline.study.scripts.study_design import (
    CANDIDATES,
    DATA_SEED,
    HIDDEN,
    LEARNING_RATES,
    N_POINTS,
    N_RUNS,
    PROBE_STEPS,
    STEPS,
    STUDY_QUESTION,
)
from lightscientist_jupyter.offline.study.text import note


def cite_as(cited: dict[str, str], arxiv: str, fallback: str) -> str:
    """`[@key]` of the work with this arXiv id when it was cited, else `fallback`."""
    return f"[@{cited[arxiv]}]" if arxiv in cited else fallback


def sources_md(found: list[dict[str, Any]], cited: dict[str, str]) -> str:
    """The survey's Sources section: what the searches of the local library returned (the
    search tool's JSON records, as `survey.found` gives them)."""
    if not found:
        return (
            "The searches of the local library returned nothing; this survey is from background "
            "knowledge and cites no work."
        )
    lines = [
        f"Searched the local library shipped with LightScientist (`search_literature`, sources "
        f"library); {len(found)} works found, each cited through `cite` "
        "(entries in paper/references.bib):",
        "",
    ]
    for rec in found:
        key = cited.get(str(rec.get("id") or ""), "")
        authors = list(rec.get("authors") or [])
        names = [a.split()[-1] for a in authors if a.split()]
        who = " and ".join(names) if len(names) <= 2 else f"{names[0]} et al."
        venue = f", {rec['venue']}" if rec.get("venue") else ""
        ref = f" [@{key}]" if key else ""
        lines.append(f'- {who} ({rec.get("year")}), "{rec.get("title")}"{venue}{ref}')
    return "\n".join(lines)


def survey_md(
    goal: str, found: list[dict[str, Any]] | None = None, cited: dict[str, str] | None = None
) -> str:
    """idea/survey.md: the fixed study's map of the problem, with the goal quoted; `found` are
    the records the searches returned, `cited` their ids and arXiv ids -> citation key."""
    found, cited = found or [], cited or {}
    goyal = cite_as(cited, "1706.02677", "(Goyal et al., 2017, from memory, not verified)")
    cohen = cite_as(cited, "2103.00065", "(Cohen et al., 2021, from memory, not verified)")
    adaptive = " ".join(
        cite_as(cited, a, "") for a in ("1908.03265", "2002.04745", "1910.04209")
    ).strip()
    if adaptive:
        adaptive = f" Its role with adaptive optimisers and Transformers: {adaptive}."
    return f"""# Survey: {STUDY_QUESTION}

{note(goal)}
## Goal restated

The offline demo does not study the goal text above. It studies one fixed question: does a
linear learning-rate warmup (ramping the step size from near zero to its target over the first
steps) let plain full-batch gradient descent train a small multilayer perceptron better than a
constant step size? "Better" is measured as a lower training loss after a fixed number of steps,
or fewer runs that diverge, compared with constant-rate training at the same target learning
rate, over several random initialisations.

## Sources

{sources_md(found, cited)}

## Known approaches

- **Constant step size with a tuned learning rate.** The baseline: plain gradient descent is
  stable on a quadratic only while the learning rate is below 2/λ_max (λ_max the largest
  Hessian eigenvalue); too large a rate diverges. This is established for quadratics and is the
  reason the learning rate range matters here.
- **Linear warmup.** Start with a small step and increase it linearly to the target over a few
  dozen to a few thousand steps. Used to stabilise early training of large-batch SGD
  {goyal}.{adaptive} Whether it matters for plain full-batch GD on a tiny network is the
  question of this study.
- **Sharpness adaptation (edge of stability).** Full-batch GD often drives the loss curvature up
  to about 2/lr and then oscillates without diverging {cohen}. I expect warmup to matter
  only if early curvature is much higher than later curvature.
- **Learning-rate sweeps.** Comparing several constant rates shows where training is slow,
  fast or unstable; warmup can only help where constant-rate training struggles.
- **Decay schedules** (step, cosine): they change the end of training, not the start; out of
  scope here.
- **Gradient clipping and adaptive optimisers** (e.g. Adam): other ways to survive large early
  gradients; mentioned as confounds to avoid, since the study uses plain gradient descent.

## Baselines and metrics

- Baseline: constant learning rate (warmup 0) at the same target rate, same steps, same seeds.
- Primary metric: final training loss (½·MSE) after {STEPS} steps, mean over seeds with a 95%
  t-interval.
- Secondary: the best loss reached during training and whether the run diverged (loss nan/inf
  or above 1e6).

## Resources

- Data: generated in the script ({N_POINTS} points, fixed seed {DATA_SEED}); nothing is
  downloaded.
- Libraries: numpy, pandas and matplotlib in the workspace's Python environment. The offline
  model did not inspect the environment; the experiment's `--check` run confirms numpy works
  before any real run.
- Hardware: a CPU is enough. One run is {STEPS} steps of a {N_POINTS}×2 → {HIDDEN} → 1
  network, milliseconds each; the whole grid of {N_RUNS} runs is expected to take about a
  second.

## Open questions

1. At a learning rate where constant-rate GD diverges, does warmup prevent the divergence or
   only postpone it?
2. At stable learning rates, does warmup cost anything (a higher loss after the same number of
   steps, since early steps are smaller)?
3. How wide is the range of learning rates over which this network trains at all?
4. Does the answer depend on the random initialisation (seed)?

## Pitfalls

- Warmup reduces the total step size taken; a small loss difference at stable rates can be a
  budget effect rather than a stability effect.
- Three seeds give wide intervals; a difference inside them is not evidence.
- A diverged run has an infinite final loss, so means over seeds are infinite; divergence must
  be counted separately rather than averaged.
- One synthetic task and one tiny network say little about large models.
"""


def candidates_md(goal: str, budget_answer: str) -> str:
    """idea/candidates.md: three candidates; quotes the supervisor's budget answer."""
    answer = " ".join(str(budget_answer or "").split()) or "(no answer given)"
    lrs = ", ".join(f"{lr:g}" for lr in LEARNING_RATES)
    return f"""# Candidates

{note(goal)}
**Goal (as studied by the offline demo):** {STUDY_QUESTION}

**Compute budget.** The supervisor was asked how much compute the study may use and answered:
"{answer}". The offline demo records this answer; its design is fixed and does not adapt to it.
Every candidate below needs well under a minute of CPU time in total, which fits any budget that
allows running code at all.

## c1-linear-warmup — Linear warmup vs constant rate across learning rates

- **Hypothesis:** a 50-step linear warmup lowers the final training loss after {STEPS} steps,
  or prevents divergence, at one or more of the learning rates {lrs}, and is not worse at any.
- **Experiment sketch:** conditions warmup 0 (baseline) and warmup 50 at each learning rate
  {lrs}; the study's 2-{HIDDEN}-1 tanh MLP on the generated {N_POINTS}-point task; full-batch
  GD; seeds 0, 1, 2; {N_RUNS} runs.
- **Primary metric:** final training loss (½·MSE); a result is a difference whose 95% intervals
  do not overlap, or at least two fewer diverged seeds out of three.
- **Cost:** about a second of CPU for all runs; needs numpy only.
- **Main risk:** with three seeds the intervals are wide, so a small effect will read as "no
  clear difference".
- **Cheap probe:** one seed, {PROBE_STEPS} steps, at the largest learning rate, with and
  without a short warmup: is there any difference at all?

## c2-lr-sweep — Where does constant-rate gradient descent stop working?

- **Hypothesis:** over learning rates {lrs}, constant-rate GD goes from slow (0.05) to fast
  (0.2) to unstable (0.8), so the final loss at 0.2 is lower than at 0.05 by at least 10% and
  0.8 diverges or ends higher than 0.2.
- **Experiment sketch:** constant learning rates {lrs}, no warmup, same network, data and
  seeds as c1.
- **Primary metric:** final training loss per learning rate; divergence counts.
- **Cost:** half of c1's runs.
- **Main risk:** it does not test warmup by itself; its value is as the baseline axis of c1.
- **Cheap probe:** one seed, {PROBE_STEPS} steps, each learning rate without warmup.

## c3-warmup-length — Does longer warmup postpone divergence?

- **Hypothesis:** at learning rate 0.8, the step at which training diverges increases with the
  warmup length (0, 10, 50, 150 steps), but no length in that range prevents divergence.
- **Experiment sketch:** warmup 0, 10, 50 and 150 steps at lr 0.8; same network, data and seeds;
  record the divergence step.
- **Primary metric:** divergence step (or no divergence) per warmup length.
- **Cost:** about a second of CPU.
- **Main risk:** only informative if 0.8 is unstable at all; it says nothing about stable rates.
- **Cheap probe:** one seed, {PROBE_STEPS} steps, warmup 0, 10 and 50 at lr 0.8.
"""


SCORES = (
    # id, relevance, signal, feasibility, cost, risk, interest, note
    ("c1-linear-warmup", 5, 3, 5, 5, 3, 4, "answers the question directly; effect size unknown"),
    ("c2-lr-sweep", 3, 5, 5, 5, 4, 2, "sure to show a signal; does not test warmup alone"),
    ("c3-warmup-length", 4, 2, 5, 4, 2, 3, "only informative if lr 0.8 is unstable"),
)


def evaluation_md() -> str:
    """idea/evaluation.md: the score table; c1 and c2 effectively tied, so probe both."""
    rows = "\n".join(
        f"| {cid} | {rel} | {sig} | {fea} | {cost} | {risk} | {inte} | "
        f"{rel + sig + fea + cost + risk + inte} | {note} |"
        for cid, rel, sig, fea, cost, risk, inte, note in SCORES
    )
    totals = {s[0]: sum(s[1:7]) for s in SCORES}
    c1, c2, c3 = (totals[c] for c in CANDIDATES)
    lrs = ", ".join(f"{lr:g}" for lr in LEARNING_RATES)
    probe_rows = "\n".join(
        f"| {cid} | {question} | 60 s |"
        for cid, question in (
            (
                "c1-linear-warmup",
                "At lr 0.8, does a short linear warmup change the outcome of "
                f"{PROBE_STEPS} GD steps (final loss or divergence) for seed 0?",
            ),
            (
                "c2-lr-sweep",
                f"Does constant-rate GD at lr {lrs} span slow, fast and unstable "
                f"training within {PROBE_STEPS} steps for seed 0?",
            ),
        )
    )
    return f"""# Evaluation of the candidates

{note()}
## Criteria

Each criterion is scored 1 (poor) to 5 (good); the total is the plain sum (maximum 30). For cost
and risk a higher score means cheaper and safer. These scores are the offline model's fixed
judgements, based on idea/survey.md and idea/candidates.md, not measurements.

- **relevance**: how directly the candidate answers "{STUDY_QUESTION}"
- **signal**: how likely a measurable difference is with three seeds
- **feasibility**: whether it runs with numpy on a CPU in this workspace
- **cost**: compute and effort (5 = about a second)
- **risk**: risk of a misleading result (5 = low)
- **interest**: what a reader learns beyond the obvious

## Score table

| id | relevance | signal | feasibility | cost | risk | interest | total | note |
|---|---:|---:|---:|---:|---:|---:|---:|---|
{rows}

## Per-candidate notes

- **c1-linear-warmup** ({c1}): the only candidate that tests the question as asked. Signal
  scores 3 because the effect at stable learning rates may be small next to seed-to-seed
  spread; this is a guess until probed.
- **c2-lr-sweep** ({c2}): almost certain to show differences between learning rates (signal 5),
  but it measures the learning rate, not warmup (relevance 3, interest 2). It is most useful as
  the learning-rate axis of c1.
- **c3-warmup-length** ({c3}): depends on lr 0.8 being unstable, which is unknown (signal 2,
  risk 2); postponing divergence is interesting but secondary.

## Probe evidence

No probes yet.

## Ranking and recommendation

Ranking: c1-linear-warmup ({c1}), c2-lr-sweep ({c2}), c3-warmup-length ({c3}). c1 leads c2 by
{c1 - c2} point(s), which is effectively a tie by this table's standard (within about two
points); c3 is {c1 - c3} points behind. Suggested next stage: **idea.probe_batch**, to run one
cheap probe each for c1 and c2 before the idea gate: c1's main uncertainty (is there any
warmup effect?) and c2's (does the learning-rate range span stable and unstable training?) can
each be checked in under a second.

## Probe request

| id | question | time cap |
|---|---|---|
{probe_rows}
"""
