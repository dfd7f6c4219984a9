"""The study kit of the offline scientist: one small, real study, whatever the goal says.

With no API key, LightScientist's offline model drives the real worker agents through the real
stage flow. What it studies is fixed: "Does learning-rate warmup help plain gradient descent
train a small MLP?", on a generated regression dataset with a fixed seed. This module holds
everything the offline model writes into a workspace:

- Markdown builders, one per stage output (`survey_md`, `candidates_md`, `evaluation_md`,
  `probe_plan_md`, `probe_summary_md`, `idea_brief_md`, `experiment_plan_md`,
  `experiment_brief_md`, `paper_outline_md`), each carrying `DISCLAIMER`;
- the scripts that produce every number (`probe_script`, `RUN_EXPERIMENT_PY`, `ANALYZE_PY`,
  `MAKE_FIGURES_PY`, `BUILD_PAPER_PY`, `CHECK_PAPER_PY`), as text to be written to a file and
  run with the workspace's Python (numpy, pandas, matplotlib).

The builders never invent a measured number: they either name the file that holds it or
parse the text of that file given to them. The helpers shared by the scripts (number format,
t-intervals, the warmup comparison and the success criterion) are one block of source,
`_COMMON_SRC`, pasted into the scripts and executed here too, so this module and the scripts
cannot disagree. Only the standard library is imported at module level.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "STUDY_QUESTION", "DISCLAIMER", "CANDIDATES", "PROBE_CANDIDATES", "N_RUNS", "SCRIPTS",
    "RUN_EXPERIMENT_PY", "ANALYZE_PY", "MAKE_FIGURES_PY", "BUILD_PAPER_PY", "CHECK_PAPER_PY",
    "disclaimer", "survey_md", "candidates_md", "evaluation_md", "probe_plan_md",
    "probe_script", "probe_summary_md", "idea_brief_md", "experiment_plan_md",
    "experiment_brief_md", "paper_outline_md", "unknown_stage_note",
]

STUDY_QUESTION = "Does learning-rate warmup help plain gradient descent train a small MLP?"

DISCLAIMER = (
    "This study was run by LightScientist's offline demo model, which drives the real worker "
    "agents when no language model is configured. The offline model always carries out the "
    f"same small study (\"{STUDY_QUESTION}\", on a generated dataset with a fixed seed): its "
    "question, design and scripts do not depend on the research goal given to the project. "
    "Measured numbers are real results of the scripts in this workspace, and rerunning the "
    "scripts reproduces them; the scores, judgements and prose around them are the offline "
    "model's fixed text."
)

CANDIDATES = ("c1-linear-warmup", "c2-lr-sweep", "c3-warmup-length")
"""The candidate ids of idea/candidates.md (also the probe file names)."""

PROBE_CANDIDATES = ("c1-linear-warmup", "c2-lr-sweep")
"""The candidates idea/evaluation.md asks to probe."""

# The design, in one place; the scripts and the plan are generated from these values.
_LEARNING_RATES = (0.05, 0.2, 0.8)
_WARMUP_STEPS = (0, 50)
_SEEDS = (0, 1, 2)
_STEPS = 300
_HIDDEN = 16
_N_POINTS = 256
_DATA_SEED = 20240
_INPUT_RANGE = 1.5
_METRICS = ("final_loss", "best_loss", "diverged")
_PROBE_STEPS = 100

N_RUNS = len(_LEARNING_RATES) * len(_WARMUP_STEPS) * len(_SEEDS)
"""Planned runs of the experiment (18): learning rates x warmup lengths x seeds."""


def _clean_goal(goal: str | None) -> str:
    text = " ".join(str(goal or "").split())
    if not text:
        return "(no goal text given)"
    return text if len(text) <= 400 else text[:399] + "…"


def disclaimer(goal: str | None = None) -> str:
    """`DISCLAIMER`, followed (when `goal` is given) by a sentence quoting the goal text."""
    if goal is None:
        return DISCLAIMER
    return (f"{DISCLAIMER} The goal text given to this project was \"{_clean_goal(goal)}\"; "
            "the study above does not depend on it and does not answer it.")


def _note(goal: str | None = None) -> str:
    return f"> **Offline demo.** {disclaimer(goal)}\n"


# =============================================================================================
# Source shared by every script and by this module (standard library only).
# =============================================================================================

_COMMON_TEMPLATE = r'''
# ---- helpers shared by every script of this study (identical copies; stdlib only) ----------
import csv as _csv
import io as _io
import math as _math
import os as _os
import re as _re
import tempfile as _tempfile
from pathlib import Path as _Path

DISCLAIMER = __DISCLAIMER__
STUDY_QUESTION = __QUESTION__
SUCCESS_CRITERION = (
    "Warmup counts as helping if, at one or more of the learning rates, the warmup condition "
    "either (a) has at least two fewer diverged seeds than constant-rate training at the same "
    "learning rate, or (b) has no diverged seed, like its baseline, and a lower mean final "
    "training loss whose 95% t-interval does not overlap the baseline's; and if at no learning "
    "rate it is worse by the same standards. Where divergence in some but not all seeds leaves "
    "a comparison open, that learning rate is inconclusive."
)
SUMMARY_COLUMNS = ["condition", "metric", "n", "mean", "std", "ci95_low", "ci95_high"]


def write_atomic(path, text):
    """Write `text` to `path` so that a reader sees the old file or the new one, never half."""
    path = _Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with _os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            _os.fsync(fh.fileno())
        _os.replace(tmp, path)
    except BaseException:
        if _os.path.exists(tmp):
            _os.unlink(tmp)
        raise


def planned_runs(learning_rates, warmup_steps, seeds):
    """Every run of the grid, in a fixed order: r01, r02, … with its condition."""
    runs = []
    for lr in learning_rates:
        for warmup in warmup_steps:
            for seed in seeds:
                runs.append({"run_id": f"r{len(runs) + 1:02d}", "lr": lr, "warmup": warmup,
                             "seed": seed, "condition": condition_name(lr, warmup)})
    return runs


def summary_table_rows(rows):
    """The Markdown rows of summary.csv, every number through `fmt`."""
    return "\n".join(
        f"| {r['condition']} | {r['metric']} | {fmt(r['n'])} | {fmt(r['mean'])} | "
        f"{fmt(r['std'])} | {fmt(r['ci95_low'])} | {fmt(r['ci95_high'])} |" for r in rows)


def fmt(x):
    """The one number format of this study: `f"{x:.4g}"` (4 significant digits).

    Integers (n, counts) are printed as they are; inf and nan print as `inf` and `nan`.
    Every number in the analysis, the briefs and the paper is formatted by this function from
    the value in experiment/summary.csv, so it can be checked by formatting that value again.
    """
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    return f"{float(x):.4g}"


_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042,
         40: 2.021, 60: 2.000, 120: 1.980}


def t975(df):
    """Two-sided 95% Student-t quantile for `df` degrees of freedom, from a small table.

    Between table entries the next smaller df is used (a slightly wider, conservative
    interval); beyond 120 degrees of freedom, 1.96.
    """
    if df < 1:
        return float("nan")
    if df > 120:
        return 1.96
    return _T975[max(k for k in _T975 if k <= df)]


def describe(values):
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
    if any(_math.isnan(v) for v in vals):
        mean = nan
    elif all(_math.isfinite(v) for v in vals):
        mean = _math.fsum(vals) / n
    else:
        pos, neg = inf in vals, -inf in vals
        mean = nan if (pos and neg) else (inf if pos else -inf)
    if n < 2 or not _math.isfinite(mean):
        return n, mean, nan, nan, nan
    std = _math.sqrt(_math.fsum((v - mean) ** 2 for v in vals) / (n - 1))
    half = t975(n - 1) * std / _math.sqrt(n)
    return n, mean, std, mean - half, mean + half


def condition_name(lr, warmup):
    """`lr=0.2,warmup=50`: the condition label used in every file (quoted in CSV)."""
    return f"lr={float(lr):g},warmup={int(warmup)}"


def parse_condition(name):
    """(lr, warmup) from a condition label, or None."""
    m = _re.fullmatch(r"\s*lr=([0-9.eE+-]+),\s*warmup=(\d+)\s*", str(name))
    if not m:
        return None
    try:
        return float(m.group(1)), int(m.group(2))
    except ValueError:
        return None


def read_summary(text):
    """The rows of summary.csv text as dicts (floats; n an int), in file order.

    Lines before the header `condition,metric,...` and rows that do not parse are skipped, so
    the text may come wrapped in other output (e.g. a shell's).
    """
    lines = str(text).splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.strip().lower().startswith("condition,metric,")), None)
    if start is None:
        return []
    rows = []
    reader = _csv.DictReader(_io.StringIO("\n".join(lines[start:]) + "\n"))
    for raw in reader:
        try:
            row = {"condition": raw["condition"].strip(), "metric": raw["metric"].strip(),
                   "n": int(float(raw["n"]))}
            for key in ("mean", "std", "ci95_low", "ci95_high"):
                value = (raw.get(key) or "").strip()
                row[key] = float(value) if value else float("nan")
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        rows.append(row)
    return rows


def summary_index(rows):
    return {(r["condition"], r["metric"]): r for r in rows}


def diverged_count(index, condition):
    """How many of a condition's runs diverged (mean of the 0/1 metric times n), or None."""
    row = index.get((condition, "diverged"))
    if row is None or not _math.isfinite(row["mean"]):
        return None
    return int(round(row["mean"] * row["n"]))


def compare_warmup(rows):
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
    out = []
    for lr in sorted({lr for lr, _ in parsed}):
        base, warm = condition_name(lr, 0), condition_name(lr, longest)
        c = {"lr": lr, "warmup": longest, "base": base, "warm": warm,
             "base_row": index.get((base, "final_loss")),
             "warm_row": index.get((warm, "final_loss")),
             "base_div": diverged_count(index, base), "warm_div": diverged_count(index, warm)}
        c["verdict"], c["reason"] = _verdict(c)
        out.append(c)
    return out


def _verdict(c):
    b, w, bd, wd = c["base_row"], c["warm_row"], c["base_div"], c["warm_div"]
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
    if all(_math.isfinite(v) for v in bounds):
        if w["ci95_high"] < b["ci95_low"]:
            return "helps", "lower mean final loss; the 95% intervals do not overlap"
        if w["ci95_low"] > b["ci95_high"]:
            return "hurts", "higher mean final loss; the 95% intervals do not overlap"
        return "no clear difference", "the 95% intervals overlap"
    return "inconclusive", "some runs diverged or too few runs for an interval"


def criterion(comparisons):
    """('met' | 'not met' | 'inconclusive', one-sentence reason) for SUCCESS_CRITERION."""
    helps = [c for c in comparisons if c["verdict"] == "helps"]
    hurts = [c for c in comparisons if c["verdict"] == "hurts"]
    open_ = [c for c in comparisons if c["verdict"] == "inconclusive"]
    lrs = lambda cs: ", ".join(f"lr={c['lr']:g}" for c in cs)
    if not comparisons:
        return "inconclusive", "summary.csv has no warmup comparison to judge"
    if hurts:
        return "not met", f"warmup is worse at {lrs(hurts)}"
    if helps:
        return "met", f"warmup helps at {lrs(helps)} and is worse nowhere"
    if open_:
        return "inconclusive", f"no learning rate shows a clear effect; {lrs(open_)} stays open"
    return "not met", "at no learning rate does warmup help by the criterion's standard"


def best_condition(rows):
    """The final_loss row with the lowest finite mean (ties: first in file), or None."""
    finite = [r for r in rows if r["metric"] == "final_loss" and _math.isfinite(r["mean"])]
    return min(finite, key=lambda r: r["mean"]) if finite else None


def interval(row):
    """`mean [ci95_low, ci95_high]` (or just the mean when there is no interval)."""
    if row is None:
        return "missing"
    if _math.isfinite(row["ci95_low"]) and _math.isfinite(row["ci95_high"]):
        return f"{fmt(row['mean'])} [{fmt(row['ci95_low'])}, {fmt(row['ci95_high'])}]"
    return fmt(row["mean"])


def verdict_phrase(c):
    """The verdict of a comparison as a clause: 'warmup made no clear difference', ..."""
    return {"helps": "warmup helped", "hurts": "warmup hurt",
            "no clear difference": "warmup made no clear difference",
            "both diverge": "every run diverged with and without warmup",
            "inconclusive": "the comparison is inconclusive"}.get(c["verdict"], c["verdict"])


def before_divergence(rows, comparisons):
    """Sentences on best_loss where runs diverged (how far training got first)."""
    index = summary_index(rows)
    out = []
    for c in comparisons:
        bd, wd = c["base_div"], c["warm_div"]
        b, w = index.get((c["base"], "best_loss")), index.get((c["warm"], "best_loss"))
        if b and w and bd is not None and wd is not None and (bd or wd):
            lower = "with" if w["mean"] < b["mean"] else "without"
            out.append(f"At lr={c['lr']:g}, where runs diverged, the best loss reached during "
                       f"training (best_loss, mean [95% CI]) was {interval(b)} without and "
                       f"{interval(w)} with warmup, lower {lower} warmup; this describes how far "
                       "training got before diverging, not a usable result.")
    return out


def comparison_line(c):
    """One Markdown bullet stating a comparison with its numbers from summary.csv."""
    def side(row, div):
        text = interval(row)
        if row is not None and div is not None:
            text += f", {div}/{row['n']} runs diverged"
        return text
    return (f"- lr={c['lr']:g}: constant rate {side(c['base_row'], c['base_div'])}; "
            f"{c['warmup']}-step warmup {side(c['warm_row'], c['warm_div'])}: "
            f"**{c['verdict']}** ({c['reason']}).")
# ---- end of shared helpers ------------------------------------------------------------------
'''

# The model, the data and one training run (numpy). Shared by the probes and the experiment.
_MLP_TEMPLATE = r'''
# ---- the model, the data and one training run (identical in every script that trains) -----
import numpy as np

N_POINTS = __N_POINTS__
HIDDEN = __HIDDEN__
STEPS = __STEPS__
DATA_SEED = __DATA_SEED__
INPUT_RANGE = __INPUT_RANGE__
RECORD_EVERY = 10
DIVERGENCE_LOSS = 1e6


def make_data():
    """The fixed synthetic regression task, the same for every run (seed DATA_SEED).

    N_POINTS inputs uniform in [-INPUT_RANGE, INPUT_RANGE]^2; target
    y = sin(2 x1) * cos(1.5 x2) + 0.1 * standard normal noise.
    """
    rng = np.random.default_rng(DATA_SEED)
    x = rng.uniform(-INPUT_RANGE, INPUT_RANGE, size=(N_POINTS, 2))
    y = np.sin(2.0 * x[:, :1]) * np.cos(1.5 * x[:, 1:]) + 0.1 * rng.normal(size=(N_POINTS, 1))
    return x, y


def lr_at(step, lr, warmup):
    """Linear warmup: lr * min(1, (step + 1) / warmup) for warmup > 0; else the constant lr."""
    if warmup <= 0:
        return lr
    return lr * min(1.0, (step + 1) / warmup)


def train(lr, warmup, seed, steps=STEPS, record_every=RECORD_EVERY):
    """Full-batch gradient descent on a 2-HIDDEN-1 tanh MLP; loss = 0.5 * mean squared error.

    The seed sets the initial weights (W1 ~ N(0, 1), W2 ~ N(0, 1/HIDDEN), zero biases). A run
    diverges when the loss becomes nan/inf or exceeds DIVERGENCE_LOSS; it then stops, and its
    final loss is inf. Returns final_loss, best_loss, diverged (0/1), diverged_at (step or
    None) and curve (a list of (step, loss) every record_every steps, plus the last step).
    """
    x, y = make_data()
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0.0, 1.0, size=(2, HIDDEN))
    b1 = np.zeros(HIDDEN)
    w2 = rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), size=(HIDDEN, 1))
    b2 = np.zeros(1)
    n = x.shape[0]
    best = float("inf")
    curve = []
    with np.errstate(all="ignore"):
        for step in range(steps + 1):
            h = np.tanh(x @ w1 + b1)
            err = h @ w2 + b2 - y
            loss = 0.5 * float(np.mean(err * err))
            if not np.isfinite(loss) or loss > DIVERGENCE_LOSS:
                curve.append((step, float("inf")))
                return {"final_loss": float("inf"), "best_loss": best, "diverged": 1,
                        "diverged_at": step, "curve": curve}
            best = min(best, loss)
            if step % record_every == 0 or step == steps:
                curve.append((step, loss))
            if step == steps:
                break
            g = err / n
            grad_w2 = h.T @ g
            grad_b2 = g.sum(axis=0)
            gh = (g @ w2.T) * (1.0 - h * h)
            grad_w1 = x.T @ gh
            grad_b1 = gh.sum(axis=0)
            eta = lr_at(step, lr, warmup)
            w1 -= eta * grad_w1
            b1 -= eta * grad_b1
            w2 -= eta * grad_w2
            b2 -= eta * grad_b2
    return {"final_loss": loss, "best_loss": best, "diverged": 0, "diverged_at": None,
            "curve": curve}
# ---- end of the model ------------------------------------------------------------------------
'''


def _fill(template: str, **extra: str) -> str:
    values = {
        "__DISCLAIMER__": repr(DISCLAIMER),
        "__QUESTION__": repr(STUDY_QUESTION),
        "__N_POINTS__": repr(_N_POINTS),
        "__HIDDEN__": repr(_HIDDEN),
        "__STEPS__": repr(_STEPS),
        "__DATA_SEED__": repr(_DATA_SEED),
        "__INPUT_RANGE__": repr(_INPUT_RANGE),
        "__LRS__": repr(list(_LEARNING_RATES)),
        "__WARMUPS__": repr(list(_WARMUP_STEPS)),
        "__SEEDS__": repr(list(_SEEDS)),
        "__METRICS__": repr(list(_METRICS)),
        "__PROBE_STEPS__": repr(_PROBE_STEPS),
    }
    values.update(extra)
    text = template
    for key in ("__COMMON__", "__MLP__"):
        if key in text:
            text = text.replace(key, _COMMON_SRC if key == "__COMMON__" else _MLP_SRC)
    for key, value in values.items():
        text = text.replace(key, value)
    return text


_COMMON_SRC = ""
_MLP_SRC = ""
_COMMON_SRC = _fill(_COMMON_TEMPLATE).strip("\n") + "\n"
_MLP_SRC = _fill(_MLP_TEMPLATE).strip("\n") + "\n"

# The shared helpers, executed here so that this module formats and judges exactly like the
# scripts do.
_common: dict = {}
exec(compile(_COMMON_SRC, "<lightscientist study: shared helpers>", "exec"), _common)
_fmt = _common["fmt"]
_read_summary = _common["read_summary"]
_compare_warmup = _common["compare_warmup"]
_criterion = _common["criterion"]
_best_condition = _common["best_condition"]
_interval = _common["interval"]
_comparison_line = _common["comparison_line"]
_before_divergence = _common["before_divergence"]
_summary_index = _common["summary_index"]
_diverged_count = _common["diverged_count"]
_condition_name = _common["condition_name"]
SUCCESS_CRITERION: str = _common["SUCCESS_CRITERION"]


def _runs() -> list[dict]:
    return _common["planned_runs"](_LEARNING_RATES, _WARMUP_STEPS, _SEEDS)


_DESIGN = (
    f"a 2-{_HIDDEN}-1 tanh MLP trained by full-batch gradient descent for {_STEPS} steps on a "
    f"generated regression task ({_N_POINTS} points, inputs uniform in "
    f"[-{_INPUT_RANGE:g}, {_INPUT_RANGE:g}]², target sin(2x₁)·cos(1.5x₂) plus noise with "
    f"standard deviation 0.1, data seed {_DATA_SEED}); loss ½·mean squared error; learning rates "
    f"{', '.join(f'{lr:g}' for lr in _LEARNING_RATES)} × warmup "
    f"{' or '.join(str(w) for w in _WARMUP_STEPS)} steps (linear) × seeds "
    f"{', '.join(str(s) for s in _SEEDS)}: {N_RUNS} runs"
)

_DESIGN_SHORT = (
    f"a 2-{_HIDDEN}-1 tanh MLP by full-batch gradient descent for {_STEPS} steps on a generated "
    f"{_N_POINTS}-point regression task, at learning rates "
    f"{', '.join(f'{lr:g}' for lr in _LEARNING_RATES)}, with and without a "
    f"{max(_WARMUP_STEPS)}-step linear warmup, over {len(_SEEDS)} seeds ({N_RUNS} runs)"
)



# =============================================================================================
# Markdown builders: idea phase
# =============================================================================================

def survey_md(goal: str) -> str:
    """idea/survey.md: the fixed study's map of the problem, with the goal quoted."""
    return f"""# Survey: {STUDY_QUESTION}

{_note(goal)}
## Goal restated

The offline demo does not study the goal text above. It studies one fixed question: does a
linear learning-rate warmup (ramping the step size from near zero to its target over the first
steps) let plain full-batch gradient descent train a small multilayer perceptron better than a
constant step size? "Better" is measured as a lower training loss after a fixed number of steps,
or fewer runs that diverge, compared with constant-rate training at the same target learning
rate, over several random initialisations.

## Sources

No literature access; this survey is from background knowledge and has not been checked against
sources. Works named below are from memory, not verified.

## Known approaches

- **Constant step size with a tuned learning rate.** The baseline: plain gradient descent is
  stable on a quadratic only while the learning rate is below 2/λ_max (λ_max the largest
  Hessian eigenvalue); too large a rate diverges. This is established for quadratics and is the
  reason the learning rate range matters here.
- **Linear warmup.** Start with a small step and increase it linearly to the target over a few
  dozen to a few thousand steps. Commonly reported to stabilise early training of large models
  and large-batch SGD (Goyal et al., 2017, "Accurate, Large Minibatch SGD: Training ImageNet in
  1 Hour", from memory, not verified). Whether it matters for plain full-batch GD on a tiny
  network is the question of this study.
- **Sharpness adaptation (edge of stability).** Full-batch GD often drives the loss curvature up
  to about 2/lr and then oscillates without diverging (Cohen et al., 2021, "Gradient Descent on
  Neural Networks Typically Occurs at the Edge of Stability", from memory, not verified). I
  expect warmup to matter only if early curvature is much higher than later curvature.
- **Learning-rate sweeps.** Comparing several constant rates shows where training is slow,
  fast or unstable; warmup can only help where constant-rate training struggles.
- **Decay schedules** (step, cosine): they change the end of training, not the start; out of
  scope here.
- **Gradient clipping and adaptive optimisers** (e.g. Adam): other ways to survive large early
  gradients; mentioned as confounds to avoid, since the study uses plain gradient descent.

## Baselines and metrics

- Baseline: constant learning rate (warmup 0) at the same target rate, same steps, same seeds.
- Primary metric: final training loss (½·MSE) after {_STEPS} steps, mean over seeds with a 95%
  t-interval.
- Secondary: the best loss reached during training and whether the run diverged (loss nan/inf
  or above 1e6).

## Resources

- Data: generated in the script ({_N_POINTS} points, fixed seed {_DATA_SEED}); nothing is
  downloaded.
- Libraries: numpy, pandas and matplotlib in the workspace's Python environment. The offline
  model did not inspect the environment; the experiment's `--check` run confirms numpy works
  before any real run.
- Hardware: a CPU is enough. One run is {_STEPS} steps of a {_N_POINTS}×2 → {_HIDDEN} → 1
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
    lrs = ", ".join(f"{lr:g}" for lr in _LEARNING_RATES)
    return f"""# Candidates

{_note(goal)}
**Goal (as studied by the offline demo):** {STUDY_QUESTION}

**Compute budget.** The supervisor was asked how much compute the study may use and answered:
"{answer}". The offline demo records this answer; its design is fixed and does not adapt to it.
Every candidate below needs well under a minute of CPU time in total, which fits any budget that
allows running code at all.

## c1-linear-warmup — Linear warmup vs constant rate across learning rates

- **Hypothesis:** a 50-step linear warmup lowers the final training loss after {_STEPS} steps,
  or prevents divergence, at one or more of the learning rates {lrs}, and is not worse at any.
- **Experiment sketch:** conditions warmup 0 (baseline) and warmup 50 at each learning rate
  {lrs}; the study's 2-{_HIDDEN}-1 tanh MLP on the generated {_N_POINTS}-point task; full-batch
  GD; seeds 0, 1, 2; {N_RUNS} runs.
- **Primary metric:** final training loss (½·MSE); a result is a difference whose 95% intervals
  do not overlap, or at least two fewer diverged seeds out of three.
- **Cost:** about a second of CPU for all runs; needs numpy only.
- **Main risk:** with three seeds the intervals are wide, so a small effect will read as "no
  clear difference".
- **Cheap probe:** one seed, {_PROBE_STEPS} steps, at the largest learning rate, with and
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
- **Cheap probe:** one seed, {_PROBE_STEPS} steps, each learning rate without warmup.

## c3-warmup-length — Does longer warmup postpone divergence?

- **Hypothesis:** at learning rate 0.8, the step at which training diverges increases with the
  warmup length (0, 10, 50, 150 steps), but no length in that range prevents divergence.
- **Experiment sketch:** warmup 0, 10, 50 and 150 steps at lr 0.8; same network, data and seeds;
  record the divergence step.
- **Primary metric:** divergence step (or no divergence) per warmup length.
- **Cost:** about a second of CPU.
- **Main risk:** only informative if 0.8 is unstable at all; it says nothing about stable rates.
- **Cheap probe:** one seed, {_PROBE_STEPS} steps, warmup 0, 10 and 50 at lr 0.8.
"""


_SCORES = (
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
        for cid, rel, sig, fea, cost, risk, inte, note in _SCORES)
    totals = {s[0]: sum(s[1:7]) for s in _SCORES}
    c1, c2, c3 = (totals[c] for c in CANDIDATES)
    return f"""# Evaluation of the candidates

{_note()}
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
| c1-linear-warmup | At lr 0.8, does a short linear warmup change the outcome of {_PROBE_STEPS} GD steps (final loss or divergence) for seed 0? | 60 s |
| c2-lr-sweep | Does constant-rate GD at lr {', '.join(f'{lr:g}' for lr in _LEARNING_RATES)} span slow, fast and unstable training within {_PROBE_STEPS} steps for seed 0? | 60 s |
"""


# Probe definitions: question, method, metric and the criteria fixed before running.
_PROBES = {
    "c1-linear-warmup": {
        "title": "linear warmup at the largest learning rate",
        "question": f"At lr 0.8, does a 25-step linear warmup change the outcome of "
                    f"{_PROBE_STEPS} full-batch GD steps (final loss or divergence) for seed 0?",
        "method": f"two runs, lr 0.8, warmup 0 and 25 (25 because the probe has only "
                  f"{_PROBE_STEPS} steps), seed 0",
        "metric": "final training loss (½·MSE); divergence step",
        "criteria": "supports: warmup avoids a divergence that happens without it, or lowers "
                    "the final loss by at least 10%; against: warmup diverges where constant "
                    "rate does not, or raises the final loss by at least 10%; inconclusive: "
                    "otherwise (e.g. both diverge).",
    },
    "c2-lr-sweep": {
        "title": "constant-rate learning-rate sweep",
        "question": f"Does constant-rate GD at lr 0.05, 0.2 and 0.8 span slow, fast and "
                    f"unstable training within {_PROBE_STEPS} steps for seed 0?",
        "method": "three runs, warmup 0, lr 0.05, 0.2 and 0.8, seed 0",
        "metric": "final training loss (½·MSE) per learning rate; divergence",
        "criteria": "supports: the final loss at 0.2 is at least 10% lower than at 0.05, and "
                    "0.8 diverges or ends above 0.2; against: all three final losses lie within "
                    "10% of each other; inconclusive: otherwise.",
    },
    "c3-warmup-length": {
        "title": "warmup length at the largest learning rate",
        "question": f"At lr 0.8, does the divergence step grow with the warmup length (0, 10, "
                    f"50 steps) within {_PROBE_STEPS} steps for seed 0?",
        "method": "three runs, lr 0.8, warmup 0, 10 and 50, seed 0",
        "metric": "divergence step (no divergence counts as later than any step)",
        "criteria": "supports: the divergence step strictly increases with the warmup length; "
                    "against: it does not; inconclusive: no run diverges.",
    },
}

_GENERIC_PROBE = {
    "title": "generic smoke probe",
    "question": f"Does the study's model train at all ({_PROBE_STEPS} steps, lr 0.2, seed 0)?",
    "method": "one run, lr 0.2, warmup 0, seed 0",
    "metric": "final training loss (½·MSE)",
    "criteria": "inconclusive in every case: the offline demo has no specific probe for this "
                "candidate; the run only shows that the pipeline works.",
}

_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


def _probe_info(candidate: str) -> dict:
    return _PROBES.get(candidate, _GENERIC_PROBE)


def probe_plan_md(candidates: Sequence[str]) -> str:
    """idea/probes/plan.md: one row per probed candidate, criteria fixed before running."""
    ids = [str(c) for c in candidates]
    rows = "\n".join(
        f"| {cid} | {_probe_info(cid)['question']} | {_probe_info(cid)['method']} | "
        f"{_probe_info(cid)['metric']} | 60 s | `python idea/probes/{cid}.py` | "
        f"— (foreground) | planned |" for cid in ids)
    criteria = "\n".join(f"- **{cid}**: {_probe_info(cid)['criteria']}" for cid in ids)
    return f"""# Probe plan

{_note()}
| id | question | method | metric | time cap | command | pid | status |
|---|---|---|---|---|---|---|---|
{rows}

## Shared settings

Every probe uses the study's fixed dataset ({_N_POINTS} points, data seed {_DATA_SEED}), the same
2-{_HIDDEN}-1 tanh MLP and weight seed 0, {_PROBE_STEPS} full-batch gradient-descent steps, and
the CPU only. Each probe script writes its numbers to stdout and to `idea/probes/<id>.md`; each
takes well under a second, so the probes run in the foreground, one worker per candidate. The
status column is this plan's starting state; the result files record what happened.

## Criteria, fixed before running

{criteria}

One seed and {_PROBE_STEPS} steps make these probes weak evidence: they check that a signal
exists, not how large it is.
"""


_PROBE_TEMPLATE = r'''#!/usr/bin/env python3
"""Cheap probe for candidate __CANDIDATE_ID__ of the warmup study.

Written by LightScientist's offline demo model. Run from the workspace root:
    python idea/probes/__CANDIDATE_ID__.py
It trains the study's small MLP for a few steps (well under a second), prints its numbers and
writes them with a verdict to idea/probes/__CANDIDATE_ID__.md (next to this script). The verdict
follows the criteria fixed in idea/probes/plan.md before the probe ran.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

__MLP__
__COMMON__
CANDIDATE = __CANDIDATE__
TITLE = __TITLE__
QUESTION = __QUESTION_TEXT__
METRIC = __METRIC__
CRITERIA = __CRITERIA__
PROBE_STEPS = __PROBE_STEPS__
OUT = Path(__file__).resolve().parent / f"{CANDIDATE}.md"


def outcome(r):
    if r["diverged"]:
        return f"diverged at step {r['diverged_at']} (best loss {fmt(r['best_loss'])})"
    return f"final loss {fmt(r['final_loss'])}"


def probe_c1():
    runs = [("lr=0.8, warmup 0", train(0.8, 0, 0, steps=PROBE_STEPS)),
            ("lr=0.8, warmup 25", train(0.8, 25, 0, steps=PROBE_STEPS))]
    (_, base), (_, warm) = runs
    if base["diverged"] and not warm["diverged"]:
        verdict = "supports", "warmup avoided the divergence that constant rate ran into"
    elif warm["diverged"] and not base["diverged"]:
        verdict = "against", "warmup diverged where constant rate did not"
    elif base["diverged"] and warm["diverged"]:
        verdict = ("inconclusive", f"both diverged; warmup moved the divergence from step "
                   f"{base['diverged_at']} to step {warm['diverged_at']}, so there is a signal "
                   "but no benefit at this rate")
    elif warm["final_loss"] <= 0.9 * base["final_loss"]:
        verdict = "supports", "warmup lowered the final loss by at least 10%"
    elif warm["final_loss"] >= 1.1 * base["final_loss"]:
        verdict = "against", "warmup raised the final loss by at least 10%"
    else:
        verdict = "inconclusive", "the final losses differ by less than 10%"
    return runs, verdict


def probe_c2():
    runs = [(f"lr={lr:g}, warmup 0", train(lr, 0, 0, steps=PROBE_STEPS)) for lr in (0.05, 0.2, 0.8)]
    slow, fast, big = (r for _, r in runs)
    finals = [r["final_loss"] for _, r in runs]
    spans = (not slow["diverged"] and not fast["diverged"]
             and fast["final_loss"] <= 0.9 * slow["final_loss"]
             and (big["diverged"] or big["final_loss"] > fast["final_loss"]))
    if spans:
        verdict = ("supports", "0.2 trains faster than 0.05 and 0.8 is unstable or worse, so the "
                   "range covers slow, fast and unstable training")
    elif all(v == v and v != float("inf") for v in finals) and max(finals) <= 1.1 * min(finals):
        verdict = "against", "the learning rate hardly changes the final loss in this range"
    else:
        verdict = "inconclusive", "the pattern is neither a clean span nor flat"
    return runs, verdict


def probe_c3():
    runs = [(f"lr=0.8, warmup {w}", train(0.8, w, 0, steps=PROBE_STEPS)) for w in (0, 10, 50)]
    steps = [r["diverged_at"] if r["diverged"] else float("inf") for _, r in runs]
    if not any(r["diverged"] for _, r in runs):
        verdict = "inconclusive", "no run diverged, so there is nothing to postpone"
    elif all(a < b for a, b in zip(steps, steps[1:])):
        verdict = "supports", "the divergence step increases with the warmup length"
    else:
        verdict = "against", "the divergence step does not increase with the warmup length"
    return runs, verdict


def probe_generic():
    runs = [("lr=0.2, warmup 0", train(0.2, 0, 0, steps=PROBE_STEPS))]
    return runs, ("inconclusive", "no specific probe exists for this candidate; the pipeline "
                  "runs")


PROBES = {"c1-linear-warmup": probe_c1, "c2-lr-sweep": probe_c2, "c3-warmup-length": probe_c3}




def main():
    t0 = time.perf_counter()
    problems = "none"
    try:
        runs, (verdict, reason) = PROBES.get(CANDIDATE, probe_generic)()
    except Exception as exc:  # a crash is evidence too: record it
        runs, verdict, reason = [], "inconclusive", "the probe crashed"
        problems = f"{type(exc).__name__}: {exc}"
    elapsed = time.perf_counter() - t0
    for label, r in runs:
        print(f"{CANDIDATE}: {label}: final_loss={fmt(r['final_loss'])} "
              f"best_loss={fmt(r['best_loss'])} diverged={r['diverged']} "
              f"diverged_at={r['diverged_at']}")
    print(f"{CANDIDATE}: verdict {verdict} ({reason}); {elapsed:.2f} s")
    table = "\n".join(
        f"| {label} | {fmt(r['final_loss'])} | {fmt(r['best_loss'])} | {r['diverged']} | "
        f"{'' if r['diverged_at'] is None else r['diverged_at']} |" for label, r in runs)
    result = "; ".join(f"{label}: {outcome(r)}" for label, r in runs) or "no numbers"
    text = f"""# Probe result: {CANDIDATE} — {TITLE}

> **Offline demo.** {DISCLAIMER}

- **Candidate:** `{CANDIDATE}`
- **Question:** {QUESTION}
- **Command:** `python idea/probes/{CANDIDATE}.py`
- **Settings:** weight seed 0, the study's fixed dataset ({N_POINTS} points, data seed {DATA_SEED}), 2-{HIDDEN}-1 tanh MLP, {PROBE_STEPS} full-batch GD steps.
- **Metric:** {METRIC}
- **Result:** {result}
- **Verdict:** {verdict} — {reason}
- **Criteria (fixed in plan.md):** {CRITERIA}
- **Time:** {elapsed:.2f} s
- **Problems:** {problems}

## Raw numbers

| setting | final_loss | best_loss | diverged | diverged_at_step |
|---|---:|---:|---:|---:|
{table}

Numbers are formatted with `f"{{x:.4g}}"` from the values this script computed; they are the
same values it printed to stdout.
"""
    write_atomic(OUT, text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def probe_script(candidate: str) -> str:
    """The text of `idea/probes/<candidate>.py`: a sub-second numpy probe writing `<candidate>.md`."""
    cid = str(candidate)
    if not _ID_RE.fullmatch(cid):
        raise ValueError(f"candidate id {candidate!r} must use lowercase letters, digits and "
                         "hyphens (it becomes a file name)")
    info = _probe_info(cid)
    return _fill(_PROBE_TEMPLATE, __CANDIDATE_ID__=cid, __CANDIDATE__=repr(cid),
                 __TITLE__=repr(info["title"]), __QUESTION_TEXT__=repr(info["question"]),
                 __METRIC__=repr(info["metric"]), __CRITERIA__=repr(info["criteria"]))


_PROBE_HEAD_RE = re.compile(r"^# Probe result: ([a-z0-9][a-z0-9-]*)\b.*$", re.MULTILINE)
_FIELD_RE = re.compile(r"^- \*\*([A-Za-z][A-Za-z ().]*):\*\* ?(.*)$", re.MULTILINE)


def _parse_probes(text: str) -> dict[str, dict]:
    """Probe result files found in `text` (first occurrence of each id wins)."""
    found: dict[str, dict] = {}
    heads = list(_PROBE_HEAD_RE.finditer(text))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        block = text[m.start():end]
        nxt = re.search(r"^# (?!Probe result: )", block[1:], re.MULTILINE)
        if nxt:  # another top-level file (plan.md, summary.md) starts here
            block = block[:nxt.start() + 1]
        cid = m.group(1)
        if cid in found:
            continue
        fields = {k.strip().lower(): v.strip() for k, v in _FIELD_RE.findall(block)}
        verdict_text = fields.get("verdict", "")
        verdict = verdict_text.split("—")[0].split(" ")[0].strip().lower() or "missing"
        found[cid] = {"block": block.rstrip() + "\n", "fields": fields, "verdict": verdict,
                      "reason": verdict_text.split("—", 1)[1].strip() if "—" in verdict_text else ""}
    return found


def _demote(block: str) -> str:
    return re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", block, flags=re.MULTILINE)


def probe_summary_md(probe_texts: str, planned: Sequence[str] = PROBE_CANDIDATES) -> str:
    """idea/probes/summary.md from the probe files' text (e.g. `cat idea/probes/*.md`)."""
    text = str(probe_texts or "")
    probes = _parse_probes(text)
    ids = list(dict.fromkeys([*planned, *probes]))
    coverage = "\n".join(
        f"- `{cid}`: {'done' if cid in probes else 'missing'}"
        + ("" if cid in probes else " (no `# Probe result:` file in the text given)")
        for cid in ids)
    rows = []
    for cid in ids:
        p = probes.get(cid)
        info = _probe_info(cid)
        if p is None:
            rows.append(f"| {cid} | {info['question']} | {info['metric']} | — | missing | — | "
                        "no result file |")
            continue
        f = p["fields"]
        conf = "low (one seed, short run)"
        rows.append(f"| {cid} | {f.get('question', info['question'])} | "
                    f"{f.get('metric', info['metric'])} | {f.get('result', '—')} | "
                    f"{p['verdict']} | {conf} | {p['reason'] or '—'} |")
    c1 = probes.get("c1-linear-warmup", {}).get("verdict", "missing")
    c2 = probes.get("c2-lr-sweep", {}).get("verdict", "missing")
    if c2 == "supports" and c1 in ("supports", "inconclusive"):
        comparison = (
            f"c2's probe {c2} its hypothesis: the learning-rate range spans stable and unstable "
            f"training, so there is something for warmup to act on. c1's probe is {c1}: "
            + ("warmup changed the outcome." if c1 == "supports" else
               "a signal may exist, but one seed and a short run cannot show a benefit.")
            + " The two are complementary rather than rivals: c2's sweep becomes the "
            "learning-rate axis of c1's comparison, which breaks the tie in favour of c1.")
        recommendation = (
            "Take **c1-linear-warmup** forward, with c2's learning rates (0.05, 0.2, 0.8) as its "
            "second factor, to the idea gate (**idea.gate**). The experiment, not the probe, "
            "will decide whether warmup helps.")
    else:
        comparison = (
            f"The probes did not separate the candidates cleanly (c1: {c1}, c2: {c2}). The "
            "criteria in plan.md stand; the offline demo does not move them after the fact.")
        recommendation = (
            "The question stays open. The offline demo still takes **c1-linear-warmup** forward "
            "to **idea.gate**, because it is the only candidate that tests warmup directly; the "
            "brief must say that the probes did not settle the choice.")
    embedded = "\n".join(_demote(probes[cid]["block"]) for cid in ids if cid in probes)
    return f"""# Probe summary

{_note()}
## Coverage

{coverage}

## Results table

Results and verdicts are copied from the probe files (numbers as the files give them, 4
significant digits).

| id | question | metric | result | verdict | confidence | note |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

## Comparison

{comparison}

## Caveats

Each probe used one seed, {_PROBE_STEPS} steps and the same fixed dataset; the c1 probe used a
25-step warmup rather than the planned 50 because it is shorter. These numbers show whether a
signal exists, not its size or reliability across seeds.

## Recommendation

{recommendation}

## Probe files (as given)

{embedded or "No probe result files were found in the text given."}
"""


def idea_brief_md(goal: str, probe_texts: str | None = None) -> str:
    """idea/brief.md: the decision brief of the idea gate, with the success criterion.

    With `probe_texts` (the probe files' text), the probe results are quoted; otherwise the
    brief points to idea/probes/summary.md for them.
    """
    totals = {s[0]: sum(s[1:7]) for s in _SCORES}
    lrs = ", ".join(f"{lr:g}" for lr in _LEARNING_RATES)
    probes = _parse_probes(probe_texts) if probe_texts else {}
    if probes:
        probe_lines = "\n".join(
            f"- `{cid}` (idea/probes/{cid}.md): {p['fields'].get('result', '—')} — verdict "
            f"**{p['verdict']}**." for cid, p in probes.items())
    else:
        probe_lines = ("- Probe results for c1-linear-warmup and c2-lr-sweep: see "
                       "idea/probes/summary.md and idea/probes/<id>.md (measured numbers, one "
                       "seed each; not restated here).")
    return f"""# Idea gate: decision brief

{_note(goal)}
## Proposal

**c1-linear-warmup — linear warmup vs constant rate across learning rates.** Hypothesis: a
50-step linear learning-rate warmup lowers the final training loss of plain full-batch gradient
descent after {_STEPS} steps, or prevents divergence, at one or more of the learning rates
{lrs}, and is not worse at any of them.

## Experiment in brief

- **Design:** {_DESIGN}.
- **Baseline:** warmup 0 (constant rate) at the same learning rate, steps and seeds.
- **Primary metric:** final training loss (½·MSE) after {_STEPS} steps; mean over seeds with a
  95% t-interval. **Secondary:** best loss during training; diverged (loss nan/inf or above
  1e6), counted per condition.
- **Success criterion (fixed now):** {SUCCESS_CRITERION}

## Evidence

- Scores (idea/evaluation.md): c1-linear-warmup {totals['c1-linear-warmup']}/30,
  c2-lr-sweep {totals['c2-lr-sweep']}/30, c3-warmup-length {totals['c3-warmup-length']}/30; c1
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
- One synthetic task and a 2-{_HIDDEN}-1 network: results do not transfer to large models.

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


# =============================================================================================
# Experiment phase
# =============================================================================================

def experiment_plan_md(batches: int) -> str:
    """experiment/plan.md: design, run table (r01..r18) and `batches` batches."""
    n = max(1, int(batches))
    runs = _runs()
    table = "\n".join(
        f"| {r['run_id']} | {r['condition']} | {r['seed']} | lr {r['lr']:g}, warmup "
        f"{r['warmup']} steps, {_STEPS} steps | planned |" for r in runs)
    lines = []
    for k in range(1, n + 1):
        ids = [r["run_id"] for i, r in enumerate(runs) if i % n == k - 1]
        what = ", ".join(ids) if ids else "empty (more batches than runs)"
        lines.append(f"- **Batch {k}** (`python experiment/run_experiment.py --batch {k} "
                     f"--batches {n}`): {what}; well under a second.")
    return f"""# Experiment plan

{_note()}
## Question

{STUDY_QUESTION} Hypothesis (idea/brief.md, candidate c1-linear-warmup): a 50-step linear
warmup lowers the final training loss after {_STEPS} steps, or prevents divergence, at one or
more learning rates, and is worse at none.

**Success criterion:** {SUCCESS_CRITERION}

## Design

- **Conditions:** every pair of learning rate ({', '.join(f'{lr:g}' for lr in _LEARNING_RATES)})
  and warmup length ({', '.join(str(w) for w in _WARMUP_STEPS)} steps, linear from lr/50 to lr);
  label `lr=<lr>,warmup=<steps>`. Baseline: warmup 0 at the same learning rate.
- **Data:** generated by the script: {_N_POINTS} points, inputs uniform in
  [-{_INPUT_RANGE:g}, {_INPUT_RANGE:g}]², target sin(2x₁)·cos(1.5x₂) + 0.1·noise, data seed
  {_DATA_SEED}; the same for every run. There is no split: the question is about training.
- **Model and training:** 2-{_HIDDEN}-1 MLP with tanh hidden units and a linear output; weights
  W1 ~ N(0, 1), W2 ~ N(0, 1/{_HIDDEN}), zero biases, drawn with the run's seed; full-batch
  gradient descent for {_STEPS} steps; same budget for every condition.
- **Metrics (one row each per run):** `final_loss`, the ½·MSE after the last step (inf if the run
  diverged); `best_loss`, the lowest loss seen; `diverged`, 1 if the loss became nan/inf or
  exceeded 1e6 (the run then stops), else 0. Loss curves every 10 steps go to
  experiment/curves.csv.
- **Output:** experiment/results.csv with columns `run_id,condition,seed,metric,value,status`
  (status `ok`, or `failed` with an empty value); rerunning a run replaces its rows.

## Run table

| run_id | condition | seed | settings | status |
|---|---|---|---|---|
{table}

## Batches

{n} batch(es); batch K holds the runs whose position in the table (counting from 0) leaves
remainder K-1 when divided by {n}. `python experiment/run_experiment.py --status --batches {n}`
lists which batches are done.

{chr(10).join(lines)}

The whole grid is expected to take well under two seconds of CPU; each batch records its wall time in\nexperiment/log.md.

## Deviations

None: the design is the one approved in idea/brief.md.
"""


def experiment_brief_md(summary_csv_text: str) -> str:
    """experiment/brief.md: the experiment gate's brief, with real numbers from summary.csv text."""
    rows = _read_summary(summary_csv_text)
    if not rows:
        return f"""# Experiment gate: decision brief

{_note()}
## Finding

experiment/summary.csv could not be read (no header `condition,metric,...` or no rows in the
text given), so there is no finding to report.

## What approval commits to

Nothing should be approved on this brief.

## If rejected

Return to **experiment.analyze** to regenerate the summary with
`python experiment/analyze.py`, or to **experiment.loop** if results.csv is incomplete.
"""
    index = _summary_index(rows)
    comparisons = _compare_warmup(rows)
    verdict, why = _criterion(comparisons)
    best = _best_condition(rows)
    conditions = list(dict.fromkeys(r["condition"] for r in rows))
    table = []
    for cond in conditions:
        fl = index.get((cond, "final_loss"))
        if fl is None:
            continue
        ci = (f"[{_fmt(fl['ci95_low'])}, {_fmt(fl['ci95_high'])}]" if fl["ci95_low"] == fl["ci95_low"]
              else "— (no interval)")
        div = _diverged_count(index, cond)
        div_text = "—" if div is None else f"{div}/{fl['n']}"
        table.append(f"| {cond} | {_fmt(fl['mean'])} | {ci} | {fl['n']} | {div_text} |")
    n_total = sum(index[(c, "final_loss")]["n"] for c in conditions if (c, "final_loss") in index)
    best_line = (f"The lowest mean final loss is {_fmt(best['mean'])} for `{best['condition']}`."
                 if best else "No condition has a finite mean final loss.")
    comp_lines = "\n".join(_comparison_line(c) for c in comparisons) or "- (no comparison)"
    helps = [c for c in comparisons if c["verdict"] == "helps"]
    claims = [f"1. The success criterion was **{verdict}**: {why} "
              "(experiment/summary.csv, metric final_loss and diverged)."]
    claims.append(f"2. {best_line[:-1]} (experiment/summary.csv).")
    both = [c for c in comparisons if c["verdict"] == "both diverge"]
    if both:
        claims.append("3. At " + ", ".join(f"lr={c['lr']:g}" for c in both) + " every run "
                      "diverged with and without warmup: warmup did not make the rate usable.")
    return f"""# Experiment gate: decision brief

{_note()}
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

{" ".join(_before_divergence(rows, comparisons)) or "No run diverged."}

## What was run

{N_RUNS} runs were planned ({len(_LEARNING_RATES)} learning rates × {len(_WARMUP_STEPS)} warmup
lengths × {len(_SEEDS)} seeds); summary.csv counts {n_total} successful runs over
{len(conditions)} conditions (any shortfall is a failed run, listed in experiment/log.md).
Divergence is an outcome, not a failure: diverged runs are counted, with final loss inf. No
deviation from experiment/plan.md.

## Proposed claims

{chr(10).join(claims)}

Claims the paper must not make: that warmup helps (or not) for larger networks, other data,
SGD or adaptive optimisers; any significance beyond the interval comparison above{'' if helps else '; that warmup helps on this task'}.

## Risks

- Three seeds per condition: the intervals are wide, and a small effect would be missed.
- One generated task, one tiny network, one warmup length: the result may not transfer.
- At stable learning rates warmup takes smaller early steps; a small loss gap there is a budget
  effect as much as a stability effect.

## What approval commits to

Writing the paper on these results as they stand, with no further runs. Reproduce with:

```
python experiment/run_experiment.py
python experiment/analyze.py
```

## If rejected

Reply with **experiment.setup** to change the design (more seeds, other warmup lengths or
learning rates; each extra seed costs well under a second for the whole grid), after which
experiment.loop runs the new plan, or with **experiment.loop** to rerun failed runs. Say which
comparison is unconvincing and what would settle it.
"""


# =============================================================================================
# Paper phase
# =============================================================================================

def paper_outline_md(goal: str) -> str:
    """paper/outline.md: claims tied to files, sections, figure and table plan."""
    return f"""# Paper outline

{_note(goal)}
## Working title

**Learning-rate warmup for plain gradient descent on a small MLP: a small, reproducible test.**
Takeaway: whether a 50-step linear warmup changes the final training loss or divergence of a
2-{_HIDDEN}-1 tanh MLP trained by full-batch GD, at three learning rates (the answer is in
experiment/brief.md and is restated from experiment/summary.csv, not from this outline).

## Claims

| claim | evidence (file, condition, metric) | strength |
|---|---|---|
| Success criterion met / not met / inconclusive, as approved | experiment/summary.csv, all conditions, final_loss and diverged; experiment/brief.md | as in experiment/brief.md |
| The best condition by mean final loss | experiment/summary.csv, final_loss | descriptive |
| Warmup vs constant rate at each learning rate | experiment/summary.csv, `lr=<lr>,warmup=0` vs `lr=<lr>,warmup=50`, final_loss, diverged | 3 seeds; interval comparison only |

Only claims approved in experiment/brief.md are made. Numbers are not quoted here; the paper's
build script reads them from experiment/summary.csv.

## Section plan

- **Abstract:** question, design ({N_RUNS} runs), best condition with its mean final loss and
  interval, whether the criterion was met.
- **Introduction:** warmup as a stabiliser; the question for plain full-batch GD; the offline
  demo disclaimer.
- **Method:** model, data, loss, warmup schedule, divergence rule.
- **Experimental setup:** grid, seeds, metrics, t-intervals (table of t quantiles, no scipy).
- **Results:** Table 1 (all of summary.csv), Figure 1, one sentence per learning rate,
  criterion verdict.
- **Limitations:** from experiment/analysis.md's threats to validity.
- **Reproducibility:** the five commands and the files each writes.
- **References:** none (no literature access).

## Figures

- **Figure 1** (`paper/figures/figure1.png`): (a) mean final loss vs learning rate, one line
  with and one without warmup, log axes, 95% interval error bars, diverged conditions marked;
  source experiment/summary.csv (condition, metric=final_loss, mean, ci95_low, ci95_high;
  diverged). (b) training-loss curves of every run every 10 steps; source experiment/curves.csv
  (run_id, step, loss) and experiment/results.csv (run_id → condition). Takeaway: where warmup
  changes anything, and where every run diverges regardless.

## Tables

- **Table 1:** every row of experiment/summary.csv (condition, metric, n, mean, std, ci95_low,
  ci95_high), formatted with `f"{{x:.4g}}"`.

## Limitations to state

Three seeds; one synthetic task; one tiny network; one warmup length; training loss only (no
held-out data); warmup's smaller early steps confound stability with budget at stable rates.

## References policy

No literature access (idea/survey.md, Sources): the paper cites nothing and says so.
"""


def unknown_stage_note(stage: str, goal: str, output: str) -> str:
    """An honest placeholder for a required output of a stage the offline model does not know."""
    msg = (f"LightScientist's offline demo model does not know the stage '{stage}'. It read the "
           "stage's skill file and wrote this note so that the flow can continue; nothing here "
           "is a research result. The offline model carries out one fixed study "
           f"(\"{STUDY_QUESTION}\") that does not depend on the goal text "
           f"\"{_clean_goal(goal)}\".")
    if str(output).lower().endswith(".csv"):
        return "note\n\"" + msg.replace("\"", "\"\"") + "\"\n"
    return f"# {stage}\n\n{msg}\n"


# =============================================================================================
# Scripts
# =============================================================================================

_RUN_EXPERIMENT_TEMPLATE = r'''#!/usr/bin/env python3
"""Run the warmup study: Does learning-rate warmup help plain gradient descent train a small MLP?

Written by LightScientist's offline demo model (see DISCLAIMER below). Each run trains a
2-16-1 tanh MLP by full-batch gradient descent on a fixed generated regression task and
records three metrics: final_loss, best_loss and diverged.

Run from the workspace root:
    python experiment/run_experiment.py                       every planned run
    python experiment/run_experiment.py --run r01 --run r02   only these runs
    python experiment/run_experiment.py --batch 1 --batches 2 runs whose index % 2 == 0
    python experiment/run_experiment.py --status --batches 2  which batches are done
    python experiment/run_experiment.py --check               one short run; writes nothing
    --out PATH   write results to PATH instead of experiment/results.csv; log.md and
                 curves.csv are then left alone (for reproducibility reruns)

Writes experiment/results.csv (run_id,condition,seed,metric,value,status; one row per run and
metric; a diverged run's final_loss is `inf`; a failed run has status `failed` and an empty
value), experiment/curves.csv (run_id,step,loss every 10 steps) and one line per invocation in
experiment/log.md. Rerunning a run replaces its rows; other runs' rows are kept. Every file is
written to a temporary file first and then moved into place (os.replace), under a lock.
Results depend only on the settings below, never on the clock.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import io
import math
import os
import shlex
import sys
import tempfile
import time
import traceback
from pathlib import Path

__MLP__
__COMMON__
ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT = ROOT / "experiment"
RESULTS = EXPERIMENT / "results.csv"
CURVES = EXPERIMENT / "curves.csv"
LOG = EXPERIMENT / "log.md"
LOCK = EXPERIMENT / ".run_experiment.lock"

# The settings of every run, in one place; the run table of experiment/plan.md mirrors them.
LEARNING_RATES = __LRS__
WARMUP_STEPS = __WARMUPS__
SEEDS = __SEEDS__
METRICS = __METRICS__
RESULT_COLUMNS = ["run_id", "condition", "seed", "metric", "value", "status"]
CURVE_COLUMNS = ["run_id", "step", "loss"]


RUNS = planned_runs(LEARNING_RATES, WARMUP_STEPS, SEEDS)


# ---- files -----------------------------------------------------------------------------------



@contextlib.contextmanager
def locked():
    """One writer at a time (POSIX advisory lock; a no-op where fcntl is missing)."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def read_rows(path):
    path = Path(path)
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def csv_text(columns, rows):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def number(x):
    """Full-precision text of a value: repr of the float (`inf` for a diverged run)."""
    return repr(float(x))


def merge(old_rows, new_rows, replaced_ids, key):
    """Keep old rows of runs not replaced, add the new ones, sort."""
    kept = [r for r in old_rows if r.get("run_id") not in replaced_ids]
    return sorted(kept + new_rows, key=key)


def result_key(row):
    metric = row.get("metric", "")
    return (row.get("run_id", ""), METRICS.index(metric) if metric in METRICS else 99, metric)


def curve_key(row):
    try:
        step = int(row.get("step", 0))
    except ValueError:
        step = 0
    return (row.get("run_id", ""), step)


def completed_ids(rows):
    """Run ids with a row for every metric (ok or failed)."""
    seen = {}
    for r in rows:
        seen.setdefault(r.get("run_id"), set()).add(r.get("metric"))
    return {rid for rid, metrics in seen.items() if set(METRICS) <= metrics}


def batch_runs(k, n):
    return [r for i, r in enumerate(RUNS) if i % n == k - 1]


# ---- running -----------------------------------------------------------------------------

def run_one(run):
    """Train one run; returns (result rows, curve rows, one-line outcome, diverged)."""
    base = {"run_id": run["run_id"], "condition": run["condition"], "seed": str(run["seed"])}
    try:
        r = train(run["lr"], run["warmup"], run["seed"])
    except Exception:
        print(f"{run['run_id']} failed:\n{traceback.format_exc()}", file=sys.stderr)
        rows = [dict(base, metric=m, value="", status="failed") for m in METRICS]
        return rows, [], "failed (see stderr)", False
    rows = [dict(base, metric="final_loss", value=number(r["final_loss"]), status="ok"),
            dict(base, metric="best_loss", value=number(r["best_loss"]), status="ok"),
            dict(base, metric="diverged", value=str(int(r["diverged"])), status="ok")]
    curve = [{"run_id": run["run_id"], "step": str(s), "loss": number(v)} for s, v in r["curve"]]
    if r["diverged"]:
        text = f"ok, diverged at step {r['diverged_at']} (best loss {fmt(r['best_loss'])})"
    else:
        text = f"ok, final loss {fmt(r['final_loss'])}"
    return rows, curve, text, bool(r["diverged"])


def execute(selected, out, label, side_files, batches):
    t0 = time.perf_counter()
    result_rows, curve_rows, outcomes, diverged, failed = [], [], [], [], []
    for run in selected:
        rows, curve, text, div = run_one(run)
        result_rows += rows
        curve_rows += curve
        outcomes.append(f"{run['run_id']} {run['condition']} seed={run['seed']}: {text}")
        if div:
            diverged.append(run["run_id"])
        if rows[0]["status"] != "ok":
            failed.append(run["run_id"])
    ids = {run["run_id"] for run in selected}
    with locked():
        merged = merge(read_rows(out), result_rows, ids, result_key)
        write_atomic(out, csv_text(RESULT_COLUMNS, merged))
        if side_files:
            curves = merge(read_rows(CURVES), curve_rows, ids, curve_key)
            write_atomic(CURVES, csv_text(CURVE_COLUMNS, curves))
        elapsed = time.perf_counter() - t0
        done = completed_ids(merged)
        pending = [r["run_id"] for r in RUNS if r["run_id"] not in done]
        if side_files:
            append_log(label, selected, failed, diverged, elapsed, pending)
    for line in outcomes:
        print(line)
    print(f"wrote {len(result_rows)} rows for {len(selected)} run(s) to {out}"
          + ("; curves to experiment/curves.csv; log line in experiment/log.md" if side_files
             else "; log.md and curves.csv left alone (--out)"))
    pending_text = (", ".join(pending) if pending else "none")
    if batches:
        open_batches = [k for k in range(1, batches + 1)
                        if any(r["run_id"] in pending for r in batch_runs(k, batches))]
        pending_text = ("batch " + ", ".join(map(str, open_batches))) if open_batches else "none"
    print(f"{label}: {len(selected) - len(failed)} run(s) ok, {len(failed)} failed, "
          f"{len(diverged)} diverged, {elapsed:.2f} s; {len(done & {r['run_id'] for r in RUNS})} "
          f"of {len(RUNS)} planned runs recorded; pending: {pending_text}")
    return 1 if failed else 0


def append_log(label, selected, failed, diverged, elapsed, pending):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    command = "python experiment/run_experiment.py" + (
        " " + shlex.join(sys.argv[1:]) if sys.argv[1:] else "")
    line = (f"- {stamp} · {label} · `{command}` · runs {', '.join(r['run_id'] for r in selected)} "
            f"· {len(selected) - len(failed)} ok, {len(failed)} failed"
            f"{' (' + ', '.join(failed) + ')' if failed else ''} · diverged: "
            f"{', '.join(diverged) if diverged else 'none'} · {elapsed:.2f} s · still pending: "
            f"{', '.join(pending) if pending else 'none'}\n")
    text = LOG.read_text(encoding="utf-8") if LOG.exists() else (
        "# Experiment log\n\nOne line per invocation of experiment/run_experiment.py, appended by "
        "the script: time (UTC), what ran, the exact command, outcome, wall time and the runs "
        "still pending. Results never depend on the clock.\n\n")
    if not text.endswith("\n"):
        text += "\n"
    write_atomic(LOG, text + line)


def status(out, n):
    rows = read_rows(out)
    done = completed_ids(rows)
    all_done = True
    for k in range(1, n + 1):
        ids = [r["run_id"] for r in batch_runs(k, n)]
        missing = [i for i in ids if i not in done]
        if not ids:
            print(f"batch {k}: done (empty: the plan has {len(RUNS)} runs)")
        elif missing:
            all_done = False
            print(f"batch {k}: pending ({len(missing)} of {len(ids)} runs missing: "
                  f"{', '.join(missing)})")
        else:
            failed = sorted({r['run_id'] for r in rows if r.get('run_id') in ids
                             and r.get('status') != 'ok'})
            print(f"batch {k}: done ({len(ids)} runs"
                  + (f"; failed: {', '.join(failed)}" if failed else "") + ")")
    print("all batches done" if all_done else "some batches pending")
    return 0


def check():
    a = train(0.2, 0, 0, steps=20)
    b = train(0.2, 0, 0, steps=20)
    if a["diverged"] or not math.isfinite(a["final_loss"]):
        print(f"check failed: the smoke run diverged (final loss {a['final_loss']})")
        return 1
    if a["final_loss"] != b["final_loss"]:
        print("check failed: two identical smoke runs gave different losses")
        return 1
    print(f"ok final_loss={a['final_loss']:.6g} (smoke run: lr=0.2, warmup=0, seed=0, 20 steps; "
          "identical on rerun; nothing written)")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=STUDY_QUESTION)
    p.add_argument("--run", action="append", metavar="RUN_ID", help="run only this run (repeatable)")
    p.add_argument("--batch", type=int, metavar="K", help="run batch K of --batches N")
    p.add_argument("--batches", type=int, metavar="N", help="number of batches (default 1)")
    p.add_argument("--status", action="store_true", help="print which batches are done")
    p.add_argument("--check", action="store_true", help="one short smoke run; writes nothing")
    p.add_argument("--out", metavar="PATH", help="results file (default experiment/results.csv)")
    args = p.parse_args(argv)
    if args.check:
        return check()
    out = Path(args.out) if args.out else RESULTS
    n = 1 if args.batches is None else args.batches
    if n < 1:
        p.error("--batches must be at least 1")
    if args.status:
        return status(out, n)
    if args.batch is not None:
        if args.run:
            p.error("use either --run or --batch, not both")
        if not 1 <= args.batch <= n:
            p.error(f"--batch must be between 1 and --batches ({n})")
        selected = batch_runs(args.batch, n)
        label = f"batch {args.batch} of {n}"
        if not selected:
            print(f"{label} is empty: the plan has {len(RUNS)} runs, so batches beyond "
                  f"{len(RUNS)} hold none. Nothing to run.")
            return 0
        return execute(selected, out, label, args.out is None, n)
    if args.run:
        known = {r["run_id"]: r for r in RUNS}
        unknown = [r for r in args.run if r not in known]
        if unknown:
            p.error(f"unknown run id(s) {', '.join(unknown)}; planned: r01..r{len(RUNS):02d}")
        selected = [r for r in RUNS if r["run_id"] in set(args.run)]
        return execute(selected, out, "runs " + ", ".join(r["run_id"] for r in selected),
                       args.out is None, None)
    return execute(RUNS, out, "all runs", args.out is None, None)


if __name__ == "__main__":
    sys.exit(main())
'''

_ANALYZE_TEMPLATE = r'''#!/usr/bin/env python3
"""Summarise the warmup study: experiment/results.csv -> summary.csv and analysis.md.

Written by LightScientist's offline demo model. Run from the workspace root:
    python experiment/analyze.py
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
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

__COMMON__
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "experiment" / "results.csv"
SUMMARY = ROOT / "experiment" / "summary.csv"
ANALYSIS = ROOT / "experiment" / "analysis.md"
METRICS = __METRICS__
PLANNED_RUNS = __N_RUNS__




def condition_order(name):
    parsed = parse_condition(name)
    return (0, parsed[0], parsed[1], name) if parsed else (1, 0.0, 0, name)


def main():
    if not RESULTS.exists():
        print(f"no {RESULTS}: run python experiment/run_experiment.py first", file=sys.stderr)
        return 1
    df = pd.read_csv(RESULTS, dtype={"run_id": str, "condition": str, "metric": str,
                                     "status": str, "value": str}, keep_default_na=False)
    df["value"] = pd.to_numeric(df["value"], errors="coerce")
    conditions = sorted(df["condition"].unique().tolist(), key=condition_order)
    out_rows, data_lines = [], []
    for cond in conditions:
        part = df[df["condition"] == cond]
        runs = sorted(part["run_id"].unique().tolist())
        bad = sorted(part.loc[part["status"] != "ok", "run_id"].unique().tolist())
        data_lines.append(f"| {cond} | {len(runs)} | {len(runs) - len(bad)} | "
                          f"{', '.join(bad) if bad else 'none'} |")
        for metric in METRICS:
            sel = part[(part["metric"] == metric) & (part["status"] == "ok")]
            n, mean, std, lo, hi = describe(sel["value"].astype(float).tolist())
            out_rows.append([cond, metric, str(n), repr(float(mean)), repr(float(std)),
                             repr(float(lo)), repr(float(hi))])
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    writer.writerows(out_rows)
    write_atomic(SUMMARY, buf.getvalue())

    rows = read_summary(buf.getvalue())
    index = summary_index(rows)
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    best = best_condition(rows)
    n_runs = int(df["run_id"].nunique())
    n_failed = int(df.loc[df["status"] != "ok", "run_id"].nunique())
    table = summary_table_rows(rows)
    best_text = (f"`{best['condition']}` has the lowest mean final loss, {interval(best)} "
                 f"(mean [95% CI], n={best['n']})." if best else
                 "No condition has a finite mean final loss.")
    bl_lines = []
    for c in comps:
        b = index.get((c["base"], "best_loss"))
        w = index.get((c["warm"], "best_loss"))
        if b and w:
            bl_lines.append(f"- lr={c['lr']:g}: best loss during training {interval(b)} without "
                            f"warmup, {interval(w)} with {c['warmup']}-step warmup.")
    spread = []
    for c in comps:
        b, w = c["base_row"], c["warm_row"]
        if b and w and all(math.isfinite(v) for v in (b["mean"], w["mean"], b["std"], w["std"])):
            spread.append(f"- lr={c['lr']:g}: difference of means (warmup - constant) "
                          f"{fmt(w['mean'] - b['mean'])}; seed std {fmt(b['std'])} (constant) "
                          f"and {fmt(w['std'])} (warmup).")
        elif b and w:
            spread.append(f"- lr={c['lr']:g}: no finite spread to compare (diverged runs).")
    text = f"""# Analysis

> **Offline demo.** {DISCLAIMER}

Numbers below are formatted with `f"{{x:.4g}}"` from experiment/summary.csv, which this script
(`python experiment/analyze.py`) computes from experiment/results.csv.

## Data used

{n_runs} of {PLANNED_RUNS} planned runs are in results.csv; {n_failed} failed (excluded from the
summary, listed below). Diverged runs are not failures: they are kept, with final_loss inf and
diverged = 1.

| condition | runs | ok | failed runs |
|---|---:|---:|---|
{chr(10).join(data_lines)}

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

## Secondary results

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
    write_atomic(ANALYSIS, text)
    print(f"wrote {SUMMARY} ({len(rows)} rows) and {ANALYSIS}; criterion {verdict}; "
          + (f"best {best['condition']} (mean final loss {fmt(best['mean'])})" if best
             else "no finite best"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_MAKE_FIGURES_TEMPLATE = r'''#!/usr/bin/env python3
"""Figure 1 of the warmup study, from experiment/summary.csv, curves.csv and results.csv.

Written by LightScientist's offline demo model. Run from the workspace root:
    python paper/figures/make_figures.py
Writes paper/figures/figure1.png (150 dpi) and paper/figures/captions.md. No value is typed by
hand: every point, bar and curve is read from the CSV files.
"""
from __future__ import annotations

import csv
import math
import os
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

__COMMON__
ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "experiment" / "summary.csv"
CURVES = ROOT / "experiment" / "curves.csv"
RESULTS = ROOT / "experiment" / "results.csv"
FIGURES = ROOT / "paper" / "figures"
STYLE = {0: dict(color="black", marker="o", linestyle="-"),
         1: dict(color="0.45", marker="s", linestyle="--")}
LR_COLORS = ["#9ecae1", "#3182bd", "#08306b", "#6a51a3", "#cb181d"]


def read_rows(path):
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))




def panel_final_loss(ax, rows):
    index = summary_index(rows)
    grid = {}
    for r in rows:
        parsed = parse_condition(r["condition"])
        if parsed and r["metric"] == "final_loss":
            grid.setdefault(parsed[1], []).append((parsed[0], r))
    warmups = sorted(grid)
    finite_vals, notes = [], []
    for i, warmup in enumerate(warmups):
        pts = sorted(grid[warmup], key=lambda p: p[0])
        style = STYLE[min(i, 1)]
        shift = 0.93 if i == 0 else 1.07 ** i
        xs, ys, lo, hi = [], [], [], []
        for lr, r in pts:
            if math.isfinite(r["mean"]) and r["mean"] > 0:
                xs.append(lr * shift)
                ys.append(r["mean"])
                ok = math.isfinite(r["ci95_low"]) and math.isfinite(r["ci95_high"])
                low = max(r["ci95_low"], r["mean"] * 1e-3) if ok else r["mean"]
                lo.append(r["mean"] - low)
                hi.append((r["ci95_high"] - r["mean"]) if ok else 0.0)
                finite_vals += [r["mean"], r["mean"] + hi[-1]]
            else:
                div = diverged_count(index, r["condition"])
                notes.append((lr * shift, style, f"{div}/{r['n']}" if div is not None else "?"))
        label = "constant rate" if warmup == 0 else f"{warmup}-step warmup"
        ax.errorbar(xs, ys, yerr=[lo, hi], capsize=4, label=label, markersize=6, **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if finite_vals:
        top = max(finite_vals) * 8
        bottom = min(v for v in finite_vals if v > 0) / 3
        ax.set_ylim(bottom, top)
    for x, style, text in notes:
        ax.plot([x], [0.93], transform=ax.get_xaxis_transform(), marker="x", markersize=9,
                color=style["color"], linestyle="none")
        ax.text(x, 0.88, text, transform=ax.get_xaxis_transform(),
                ha="center", va="top", fontsize=7, color=style["color"])
    lrs = sorted({p[0] for pts in grid.values() for p in pts})
    ax.set_xticks(lrs)
    ax.set_xticklabels([f"{lr:g}" for lr in lrs])
    if lrs:
        ax.set_xlim(min(lrs) / 1.6, max(lrs) * 1.6)
    ax.minorticks_off()
    ax.set_xlabel("learning rate (log scale)")
    ax.set_ylabel("mean final training loss, ½·MSE (log scale)")
    ax.set_title("(a) final loss after training, mean ± 95% CI", fontsize=10)
    handles, _ = ax.get_legend_handles_labels()
    if notes:
        handles.append(Line2D([], [], color="0.3", marker="x", linestyle="none",
                              label="mean infinite: runs diverged (k/n)"))
    ax.legend(handles=handles, fontsize=8, loc="upper left")


def panel_curves(ax, curves, conditions):
    by_run = {}
    for row in curves:
        try:
            by_run.setdefault(row["run_id"], []).append((int(row["step"]), float(row["loss"])))
        except (KeyError, ValueError):
            continue
    parsed = {rid: parse_condition(cond) for rid, cond in conditions.items()}
    lrs = sorted({p[0] for p in parsed.values() if p})
    warmups = sorted({p[1] for p in parsed.values() if p})
    color = {lr: LR_COLORS[i % len(LR_COLORS)] for i, lr in enumerate(lrs)}
    for rid in sorted(by_run):
        p = parsed.get(rid)
        if not p:
            continue
        pts = sorted(by_run[rid])
        fin = [(s, v) for s, v in pts if math.isfinite(v) and v > 0]
        if not fin:
            continue
        ls = "-" if p[1] == 0 else "--"
        ax.plot([s for s, _ in fin], [v for _, v in fin], color=color[p[0]], linestyle=ls,
                linewidth=1.0, alpha=0.9)
        if len(fin) < len(pts):  # diverged: mark the last finite point
            ax.plot([fin[-1][0]], [fin[-1][1]], marker="x", color=color[p[0]], markersize=7)
    ax.set_yscale("log")
    ax.set_xlabel("gradient-descent step")
    ax.set_ylabel("training loss, ½·MSE (log scale)")
    ax.set_title("(b) every run, loss every 10 steps (✕ = diverged next)", fontsize=10)
    handles = [Line2D([], [], color=color[lr], label=f"lr={lr:g}") for lr in lrs]
    handles += [Line2D([], [], color="0.3", linestyle="-" if w == 0 else "--",
                       label="constant" if w == 0 else f"warmup {w}") for w in warmups]
    ax.legend(handles=handles, fontsize=7, loc="upper right")


def main():
    rows = read_summary(SUMMARY.read_text(encoding="utf-8")) if SUMMARY.exists() else []
    if not rows:
        print(f"no usable {SUMMARY}: run python experiment/analyze.py first", file=sys.stderr)
        return 1
    FIGURES.mkdir(parents=True, exist_ok=True)
    curves = read_rows(CURVES)
    conditions = {r["run_id"]: r["condition"] for r in read_rows(RESULTS)}
    two = bool(curves and conditions)
    fig, axes = plt.subplots(1, 2 if two else 1, figsize=(11, 4.4) if two else (5.5, 4.4))
    axes = list(axes) if two else [axes]
    panel_final_loss(axes[0], rows)
    if two:
        panel_curves(axes[1], curves, conditions)
    fig.tight_layout()
    out = FIGURES / "figure1.png"
    tmp = FIGURES / ".figure1.tmp.png"
    fig.savefig(tmp, dpi=150)
    plt.close(fig)
    os.replace(tmp, out)

    index = summary_index(rows)
    finals = [r for r in rows if r["metric"] == "final_loss"]
    ns = sorted({r["n"] for r in finals})
    inf_conds = [r["condition"] for r in finals if not math.isfinite(r["mean"])]
    n_runs = len({r for r in conditions}) if conditions else 0
    caption = (
        "(a) Mean final training loss (½·MSE after the last gradient-descent step) against the "
        "learning rate, for constant-rate training (solid, circles) and linear warmup "
        "(dashed, squares); points are shifted slightly left/right to avoid overlap. Error bars "
        f"are 95% t-intervals over seeds (n = {', '.join(map(str, ns))} per point); lower ends "
        "below 1/1000 of the mean are clipped for the log axis. Both axes are logarithmic and the "
        "loss axis does not start at zero. "
        + (f"Conditions whose mean is infinite because runs diverged ({', '.join(inf_conds)}) "
           "are marked ✕ near the top with the number of diverged runs out of n. " if inf_conds else "")
        + (f"(b) Training loss every 10 steps for each of the {n_runs} runs: colour gives the "
           "learning rate, solid lines constant rate, dashed lines warmup; a ✕ marks the last "
           "finite loss of a run that diverged in the next recorded step." if two else ""))
    text = f"""# Figure captions

> **Offline demo.** {DISCLAIMER}

## Figure 1

{caption}

- **Source:** experiment/summary.csv (condition, metric = final_loss and diverged, n, mean,
  ci95_low, ci95_high){'; experiment/curves.csv (run_id, step, loss) with experiment/results.csv (run_id, condition)' if two else ''}.
- **File:** paper/figures/figure1.png (150 dpi).
- **Regenerate:** `python paper/figures/make_figures.py`
"""
    write_atomic(FIGURES / "captions.md", text)
    print(f"wrote {out} and {FIGURES / 'captions.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_BUILD_PAPER_TEMPLATE = r'''#!/usr/bin/env python3
"""Write paper/paper.md for the warmup study from experiment/summary.csv and results.csv.

Written by LightScientist's offline demo model. Run from the workspace root:
    python paper/build_paper.py "<goal text>"
The goal text is only quoted in the disclaimer; the study does not depend on it.

Number format: every number in the paper is fmt(value) = f"{value:.4g}" (4 significant
digits; integers such as n unchanged; `inf`/`nan` as written) applied to the value in
experiment/summary.csv, so paper/check_paper.py can verify each one by formatting again.
"""
from __future__ import annotations

import csv
import math
import os
import re
import sys
import tempfile
from pathlib import Path

__COMMON__
ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "experiment" / "summary.csv"
RESULTS = ROOT / "experiment" / "results.csv"
CAPTIONS = ROOT / "paper" / "figures" / "captions.md"
PAPER = ROOT / "paper" / "paper.md"
TABLE_HEADER = "| condition | metric | n | mean | std | ci95_low | ci95_high |"
DESIGN = __DESIGN__
DESIGN_SHORT = __DESIGN_SHORT__




def goal_sentence(goal):
    goal = " ".join(goal.split()) or "(no goal text given)"
    if len(goal) > 400:
        goal = goal[:399] + "…"
    return (f" The goal text given to this project was \"{goal}\"; the study above does not "
            "depend on it and does not answer it.")


def figure1_caption():
    if not CAPTIONS.exists():
        return "Figure 1 (captions.md is missing; run python paper/figures/make_figures.py)."
    text = CAPTIONS.read_text(encoding="utf-8")
    m = re.search(r"^## Figure 1\s*\n+(.*?)(?:\n\s*\n|\Z)", text, re.S | re.M)
    return " ".join(m.group(1).split()) if m else "Figure 1."


def main(argv):
    goal = " ".join(argv[1:])
    if not SUMMARY.exists():
        print(f"no {SUMMARY}: run python experiment/analyze.py first", file=sys.stderr)
        return 1
    rows = read_summary(SUMMARY.read_text(encoding="utf-8"))
    if not rows:
        print(f"{SUMMARY} has no rows", file=sys.stderr)
        return 1
    results = []
    if RESULTS.exists():
        with open(RESULTS, newline="", encoding="utf-8") as fh:
            results = list(csv.DictReader(fh))
    n_runs = len({r["run_id"] for r in results})
    n_failed = len({r["run_id"] for r in results if r.get("status") != "ok"})
    index = summary_index(rows)
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    best = best_condition(rows)
    conditions = list(dict.fromkeys(r["condition"] for r in rows))
    table = summary_table_rows(rows)
    best_text = (f"The lowest mean final loss, {interval(best)} (mean [95% CI] over "
                 f"{best['n']} seeds), was reached by {best['condition']}." if best else
                 "No condition reached a finite mean final loss.")
    per_lr = []
    for c in comps:
        bd, wd = c["base_div"], c["warm_div"]
        if c["verdict"] == "both diverge":
            per_lr.append(f"At lr={c['lr']:g}, {verdict_phrase(c)}.")
        else:
            div = (f" Diverged runs: {bd} without and {wd} with warmup."
                   if bd is not None and wd is not None and (bd or wd) else "")
            per_lr.append(f"At lr={c['lr']:g}, {verdict_phrase(c)} ({c['reason']}).{div}")
    before = before_divergence(rows, comps)
    abstract = (
        f"We ask whether a linear learning-rate warmup helps plain full-batch gradient descent "
        f"train a small multilayer perceptron. We train {DESIGN_SHORT}, and compare each warmup "
        f"condition with constant-rate training at the same learning rate, using the final "
        f"training loss and the number of diverged runs. {best_text} "
        + " ".join(per_lr)
        + f" The success criterion, fixed before the runs, was {verdict}. The study is tiny (three "
        "seeds, one synthetic task), so these results describe this setting only.")
    comp_lines = "\n".join(comparison_line(c) for c in comps)
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

## Method

A 2-16-1 multilayer perceptron (tanh hidden units, linear output; W1 ~ N(0, 1),
W2 ~ N(0, 1/16), zero biases, drawn with the run's seed) is trained by full-batch gradient
descent to minimise ½·mean squared error. With warmup length w > 0, the step size at step t
(counting from 0) is lr·min(1, (t+1)/w); with w = 0 it is lr throughout. A run diverges when
the loss becomes nan/inf or exceeds 1e6; it then stops and its final loss is recorded as inf.

## Experimental setup

Design: {DESIGN}. Metrics per run: final_loss (loss after the last step), best_loss (lowest
loss seen) and diverged (0/1). Per condition we report n, mean, sample standard deviation and a
95% t-interval over seeds (mean ± t(0.975, n−1)·std/√n, t from a table; 4.303 for n = 3).
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

No literature access; no external works are cited.
"""
    write_atomic(PAPER, paper)
    print(f"wrote {PAPER}: {len(rows)} table rows; criterion {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''

_CHECK_PAPER_TEMPLATE = r'''#!/usr/bin/env python3
"""Check paper/paper.md against the data and write paper/review.md.

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
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

__COMMON__
ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "experiment" / "summary.csv"
RESULTS = ROOT / "experiment" / "results.csv"
PAPER = ROOT / "paper" / "paper.md"
FIGURE = ROOT / "paper" / "figures" / "figure1.png"
REVIEW = ROOT / "paper" / "review.md"
RERUN = ROOT / "paper" / "rerun_results.csv"
RUNNER = ROOT / "experiment" / "run_experiment.py"
COLUMNS = ["n", "mean", "std", "ci95_low", "ci95_high"]
LEARNING_RATES = __LRS__
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"




def section(text, title):
    m = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1) if m else None


def results_table(results_text):
    """The rows of the first table whose header starts `| condition | metric |`."""
    lines = results_text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and cells[:2] == ["condition", "metric"]:
            header = cells
            rows = []
            for j, row in enumerate(lines[i + 2:], start=i + 3):
                if not row.strip().startswith("|"):
                    break
                rows.append((j, [c.strip().strip("`") for c in row.strip().strip("|").split("|")]))
            return header, rows
    return None, []


def expected(row, column):
    return fmt(row["n"]) if column == "n" else fmt(row[column])


def same_value(a, b):
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def rerun_check():
    if not RUNNER.exists():
        return False, "experiment/run_experiment.py is missing; nothing was rerun"
    if not RESULTS.exists():
        return False, "experiment/results.csv is missing"
    try:
        proc = subprocess.run([sys.executable, str(RUNNER), "--out", str(RERUN)], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return False, "the rerun took more than 600 s and was stopped"
    if proc.returncode != 0 or not RERUN.exists():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        return False, f"the rerun failed (exit {proc.returncode}): {' / '.join(tail)}"

    def load(path):
        with open(path, newline="", encoding="utf-8") as fh:
            return {(r["run_id"], r["metric"]): (r["value"], r["status"]) for r in csv.DictReader(fh)}
    orig, again = load(RESULTS), load(RERUN)
    if set(orig) != set(again):
        missing = sorted(set(again) - set(orig))
        return False, (f"results.csv has {len(orig)} rows, the rerun {len(again)}"
                       + (f"; missing from results.csv e.g. {missing[0]}" if missing else ""))
    diff = [k for k in orig if orig[k][1] != again[k][1] or not same_value(orig[k][0], again[k][0])]
    if diff:
        return False, f"{len(diff)} of {len(orig)} values differ on rerun, e.g. {diff[0]}"
    return True, (f"`python experiment/run_experiment.py --out paper/rerun_results.csv` reproduced "
                  f"all {len(orig)} rows of experiment/results.csv")


def main():
    checks, number_rows, blocking = [], [], []

    def check(ok, text):
        checks.append((ok, text))
        if not ok:
            blocking.append(text)

    paper = PAPER.read_text(encoding="utf-8") if PAPER.exists() else None
    rows = read_summary(SUMMARY.read_text(encoding="utf-8")) if SUMMARY.exists() else []
    check(paper is not None, "paper/paper.md exists")
    check(bool(rows), "experiment/summary.csv exists and has rows")
    index = summary_index(rows)
    if paper is not None and rows:
        results = section(paper, "Results")
        header, table = results_table(results or "")
        check(header is not None, "the Results section has the summary table "
              "(`| condition | metric | n | mean | std | ci95_low | ci95_high |`)")
        mismatches, seen = [], set()
        if header is not None:
            for line_no, cells in table:
                if len(cells) < 2:
                    continue
                key = (cells[0], cells[1])
                row = index.get(key)
                if row is None:
                    mismatches.append(f"line {line_no}: row {key[0]} / {key[1]} is not in summary.csv")
                    continue
                seen.add(key)
                for col in COLUMNS:
                    pos = header.index(col) if col in header else None
                    value = cells[pos] if pos is not None and pos < len(cells) else "(missing)"
                    want = expected(row, col)
                    ok = value == want
                    number_rows.append(f"| Results table, {key[0]} / {key[1]}, {col} (line {line_no}) "
                                       f"| {value} | experiment/summary.csv, {key[0]} / {key[1]}, "
                                       f"{col} = {want} | {'yes' if ok else '**NO**'} |")
                    if not ok:
                        mismatches.append(f"line {line_no}, {key[0]} / {key[1]}, column {col}: "
                                          f"paper has {value}, summary.csv gives {want} (mismatch)")
            absent = [k for k in index if k not in seen]
            check(not mismatches, "every number in the Results table equals the formatted "
                  "summary.csv value" + ("" if not mismatches else
                                         ": " + "; ".join(mismatches)))
            check(not absent, "the Results table covers every row of summary.csv"
                  + ("" if not absent else ": missing " + ", ".join(f"{c} / {m}" for c, m in absent)))
        abstract = section(paper, "Abstract") or ""
        allowed = {expected(r, c) for r in rows for c in COLUMNS} | {f"{lr:g}" for lr in LEARNING_RATES}
        tokens = re.findall(r"(?<![\w.])-?\d+\.\d+(?:e[+-]?\d+)?", abstract)
        stray = sorted({t for t in tokens if t not in allowed})
        for t in tokens:
            number_rows.append(f"| Abstract | {t} | summary.csv (formatted) or a learning rate | "
                               f"{'yes' if t in allowed else '**NO**'} |")
        check(not stray, f"every decimal number in the Abstract ({len(tokens)}) is a formatted "
              "summary.csv value or a learning rate" + ("" if not stray else
                                                        ": not found: " + ", ".join(stray)))
        check(DISCLAIMER in paper, "the paper states the offline-demo disclaimer")
        check("figures/figure1.png" in paper, "the paper references figures/figure1.png")
    fig_ok = FIGURE.exists() and FIGURE.stat().st_size > 1000 and FIGURE.read_bytes()[:8] == PNG_MAGIC
    check(fig_ok, "paper/figures/figure1.png exists and is a non-empty PNG")
    rerun_ok, rerun_text = rerun_check()
    check(rerun_ok, "reproducibility: " + rerun_text)

    failed = [t for ok, t in checks if not ok]
    comps = compare_warmup(rows)
    verdict, why = criterion(comps)
    best = best_condition(rows)
    headline = ("**Verdict: all checks passed.**" if not failed else
                f"**Verdict: {len(failed)} check(s) FAILED** — the paper must not be accepted "
                "as it is; see the failed checks below.")
    check_lines = "\n".join(f"- [{'x' if ok else ' '}] {'passed' if ok else 'FAILED'}: {t}"
                            for ok, t in checks)
    issues_blocking = "\n".join(f"- {t} (fix: regenerate with `python paper/build_paper.py`, "
                                "or rerun the stage that produced the data)" for t in blocking)
    review = f"""# Review of paper/paper.md

> **Offline demo.** {DISCLAIMER}

{headline}

## Summary

The paper asks: {STUDY_QUESTION} It reports a grid of learning rates × warmup lengths × seeds
on a generated regression task, a summary table from experiment/summary.csv, Figure 1, and the
success criterion as **{verdict}** ({why}).
{('Lowest mean final loss: ' + best['condition'] + ', ' + fmt(best['mean']) + '.') if best else ''}

## Checks

{check_lines}

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

- **Proposal:** accept paper/paper.md as the project's result.
- **Evidence:** {len(checks) - len(failed)} of {len(checks)} checks passed{'' if not failed else ' (' + str(len(failed)) + ' failed: see Checks)'}; the number check compares every Results-table number with experiment/summary.csv; reproducibility: {'the rerun matched' if rerun_ok else 'the rerun did not match or did not run'}.
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
'''

RUN_EXPERIMENT_PY: str = _fill(_RUN_EXPERIMENT_TEMPLATE)
"""experiment/run_experiment.py: the {N_RUNS}-run grid, batches, status, smoke check."""

ANALYZE_PY: str = _fill(_ANALYZE_TEMPLATE, __N_RUNS__=repr(N_RUNS))
"""experiment/analyze.py: results.csv -> summary.csv and analysis.md (pandas)."""

MAKE_FIGURES_PY: str = _fill(_MAKE_FIGURES_TEMPLATE)
"""paper/figures/make_figures.py: figure1.png (two panels) and captions.md (matplotlib, Agg)."""

BUILD_PAPER_PY: str = _fill(_BUILD_PAPER_TEMPLATE, __DESIGN__=repr(_DESIGN),
                            __DESIGN_SHORT__=repr(_DESIGN_SHORT))
"""paper/build_paper.py "<goal>": paper.md with numbers formatted from summary.csv."""

CHECK_PAPER_PY: str = _fill(_CHECK_PAPER_TEMPLATE)
"""paper/check_paper.py: number, figure and rerun checks; writes review.md; exits 0."""

SCRIPTS: dict[str, str] = {
    "experiment/run_experiment.py": RUN_EXPERIMENT_PY,
    "experiment/analyze.py": ANALYZE_PY,
    "paper/figures/make_figures.py": MAKE_FIGURES_PY,
    "paper/build_paper.py": BUILD_PAPER_PY,
    "paper/check_paper.py": CHECK_PAPER_PY,
}
"""Workspace path -> script text, for every script of the experiment and paper phases."""
