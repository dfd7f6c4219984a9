"""The design of the warmup study: its question, its grid, its data and one training run.

Written by LightScientist's offline demo model, next to every script of the study, which all
import their settings from here; the offline model imports the same module to write the plans
and briefs, so the files it writes and the numbers the scripts compute cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

# numpy is imported by the two functions that compute (make_data, train): the offline model
# reads only the settings, and its process need not load numpy for them (the type checker
# alone imports it here, for the annotations).
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

STUDY_QUESTION = "Does learning-rate warmup help plain gradient descent train a small MLP?"

DISCLAIMER = (
    "This study was run by LightScientist's offline demo model, which drives the real worker "
    "agents when no language model is configured. The offline model always carries out the "
    f'same small study ("{STUDY_QUESTION}", on a generated dataset with a fixed seed): its '
    "question, design and scripts do not depend on the research goal given to the project. "
    "Measured numbers are real results of the scripts in this workspace, and rerunning the "
    "scripts reproduces them; the scores, judgements and prose around them are the offline "
    "model's fixed text."
)

SUCCESS_CRITERION = (
    "Warmup counts as helping if, at one or more of the learning rates, the warmup condition "
    "either (a) has at least two fewer diverged seeds than constant-rate training at the same "
    "learning rate, or (b) has no diverged seed, like its baseline, and a lower mean final "
    "training loss whose 95% t-interval does not overlap the baseline's; and if at no learning "
    "rate it is worse by the same standards. Where divergence in some but not all seeds leaves "
    "a comparison open, that learning rate is inconclusive."
)

CANDIDATES = ("c1-linear-warmup", "c2-lr-sweep", "c3-warmup-length")
"""The candidate ids of idea/candidates.md (also the probe file names)."""

PROBE_CANDIDATES = ("c1-linear-warmup", "c2-lr-sweep")
"""The candidates idea/evaluation.md asks to probe."""

LEARNING_RATES = (0.05, 0.2, 0.8)
WARMUP_STEPS = (0, 50)
SEEDS = (0, 1, 2)
METRICS = ("final_loss", "best_loss", "diverged")
STEPS = 300
HIDDEN = 16
N_POINTS = 256
DATA_SEED = 20240
INPUT_RANGE = 1.5
PROBE_STEPS = 100
RECORD_EVERY = 10
DIVERGENCE_LOSS = 1e6

NOISE_STD = 0.1
TARGET = "sin(2 x1) * cos(1.5 x2) + NOISE_STD * standard normal noise"

DESIGN_SETTINGS = {
    "learning_rates": list(LEARNING_RATES),
    "warmup_steps": list(WARMUP_STEPS),
    "seeds": list(SEEDS),
    "steps": STEPS,
    "hidden_units": HIDDEN,
    "n_points": N_POINTS,
    "data_seed": DATA_SEED,
    "input_range": [-INPUT_RANGE, INPUT_RANGE],
    "target": TARGET,
    "target_frequencies": [2.0, 1.5],
    "noise_std": NOISE_STD,
    "divergence_loss": DIVERGENCE_LOSS,
}
"""The settings run_experiment.py records in experiment/design.json beside its results."""

N_RUNS = len(LEARNING_RATES) * len(WARMUP_STEPS) * len(SEEDS)
"""Planned runs of the experiment (18): learning rates x warmup lengths x seeds."""

_LRS_TEXT = ", ".join(f"{lr:g}" for lr in LEARNING_RATES)

DESIGN = (
    f"a 2-{HIDDEN}-1 tanh MLP trained by full-batch gradient descent for {STEPS} steps on a "
    f"generated regression task ({N_POINTS} points, inputs uniform in "
    f"[-{INPUT_RANGE:g}, {INPUT_RANGE:g}]², target sin(2x₁)·cos(1.5x₂) plus noise with "
    f"standard deviation 0.1, data seed {DATA_SEED}); loss ½·mean squared error; learning rates "
    f"{_LRS_TEXT} × warmup {' or '.join(str(w) for w in WARMUP_STEPS)} steps (linear) × seeds "
    f"{', '.join(str(s) for s in SEEDS)}: {N_RUNS} runs"
)
"""The whole design in one sentence (the idea brief and the paper's setup)."""

DESIGN_SHORT = (
    f"a 2-{HIDDEN}-1 tanh MLP by full-batch gradient descent for {STEPS} steps on a generated "
    f"{N_POINTS}-point regression task, at learning rates {_LRS_TEXT}, with and without a "
    f"{max(WARMUP_STEPS)}-step linear warmup, over {len(SEEDS)} seeds ({N_RUNS} runs)"
)
"""The design as the paper's abstract states it."""


class ProbeInfo(TypedDict):
    """A probe's definition, fixed before it runs."""

    title: str
    question: str
    method: str
    metric: str
    criteria: str


PROBES: dict[str, ProbeInfo] = {
    "c1-linear-warmup": {
        "title": "linear warmup at the largest learning rate",
        "question": f"At lr 0.8, does a 25-step linear warmup change the outcome of "
        f"{PROBE_STEPS} full-batch GD steps (final loss or divergence) for seed 0?",
        "method": f"two runs, lr 0.8, warmup 0 and 25 (25 because the probe has only "
        f"{PROBE_STEPS} steps), seed 0",
        "metric": "final training loss (½·MSE); divergence step",
        "criteria": "supports: warmup avoids a divergence that happens without it, or lowers "
        "the final loss by at least 10%; against: warmup diverges where constant "
        "rate does not, or raises the final loss by at least 10%; inconclusive: "
        "otherwise (e.g. both diverge).",
    },
    "c2-lr-sweep": {
        "title": "constant-rate learning-rate sweep",
        "question": f"Does constant-rate GD at lr 0.05, 0.2 and 0.8 span slow, fast and "
        f"unstable training within {PROBE_STEPS} steps for seed 0?",
        "method": "three runs, warmup 0, lr 0.05, 0.2 and 0.8, seed 0",
        "metric": "final training loss (½·MSE) per learning rate; divergence",
        "criteria": "supports: the final loss at 0.2 is at least 10% lower than at 0.05, and "
        "0.8 diverges or ends above 0.2; against: all three final losses lie within "
        "10% of each other; inconclusive: otherwise.",
    },
    "c3-warmup-length": {
        "title": "warmup length at the largest learning rate",
        "question": f"At lr 0.8, does the divergence step grow with the warmup length (0, 10, "
        f"50 steps) within {PROBE_STEPS} steps for seed 0?",
        "method": "three runs, lr 0.8, warmup 0, 10 and 50, seed 0",
        "metric": "divergence step (no divergence counts as later than any step)",
        "criteria": "supports: the divergence step strictly increases with the warmup length; "
        "against: it does not; inconclusive: no run diverges.",
    },
}
"""Each probe's question, method, metric and the criteria fixed before it runs."""

GENERIC_PROBE: ProbeInfo = {
    "title": "generic smoke probe",
    "question": f"Does the study's model train at all ({PROBE_STEPS} steps, lr 0.2, seed 0)?",
    "method": "one run, lr 0.2, warmup 0, seed 0",
    "metric": "final training loss (½·MSE)",
    "criteria": "inconclusive in every case: the offline demo has no specific probe for this "
    "candidate; the run only shows that the pipeline works.",
}
"""The probe of a candidate the study has no specific probe for."""


def probe_info(candidate: str) -> ProbeInfo:
    """The probe definition of `candidate` (`GENERIC_PROBE` for one without its own)."""
    return PROBES.get(candidate, GENERIC_PROBE)


class TrainResult(TypedDict):
    """What one training run gives (`train`)."""

    final_loss: float
    best_loss: float
    diverged: int
    diverged_at: int | None
    curve: list[tuple[int, float]]


def make_data() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The fixed synthetic regression task, the same for every run (seed DATA_SEED).

    N_POINTS inputs uniform in [-INPUT_RANGE, INPUT_RANGE]^2; target
    y = sin(2 x1) * cos(1.5 x2) + 0.1 * standard normal noise.
    """
    import numpy as np

    rng = np.random.default_rng(DATA_SEED)
    x = rng.uniform(-INPUT_RANGE, INPUT_RANGE, size=(N_POINTS, 2))
    y = np.sin(2.0 * x[:, :1]) * np.cos(1.5 * x[:, 1:]) + 0.1 * rng.normal(size=(N_POINTS, 1))
    return x, y


def lr_at(step: int, lr: float, warmup: int) -> float:
    """Linear warmup: lr * min(1, (step + 1) / warmup) for warmup > 0; else the constant lr."""
    if warmup <= 0:
        return lr
    return lr * min(1.0, (step + 1) / warmup)


def train(
    lr: float,
    warmup: int,
    seed: int,
    steps: int = STEPS,
    record_every: int = RECORD_EVERY,
    rate: Callable[[int], float] | None = None,
) -> TrainResult:
    """Full-batch gradient descent on a 2-HIDDEN-1 tanh MLP; loss = 0.5 * mean squared error.

    The step size at each step is `rate(step)` when given (a search node's own schedule),
    else the linear warmup `lr_at(step, lr, warmup)`.

    The seed sets the initial weights (W1 ~ N(0, 1), W2 ~ N(0, 1/HIDDEN), zero biases). A run
    diverges when the loss becomes nan/inf or exceeds DIVERGENCE_LOSS; it then stops, and its
    final loss is inf. Returns final_loss, best_loss, diverged (0/1), diverged_at (step or
    None) and curve (a list of (step, loss) every record_every steps, plus the last step).
    """
    import numpy as np

    x, y = make_data()
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0.0, 1.0, size=(2, HIDDEN))
    b1 = np.zeros(HIDDEN)
    w2 = rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), size=(HIDDEN, 1))
    b2 = np.zeros(1)
    n = x.shape[0]
    best = float("inf")
    curve: list[tuple[int, float]] = []
    with np.errstate(all="ignore"):
        for step in range(steps + 1):
            h = np.tanh(x @ w1 + b1)
            err = h @ w2 + b2 - y
            loss = 0.5 * float(np.mean(err * err))
            if not np.isfinite(loss) or loss > DIVERGENCE_LOSS:
                curve.append((step, float("inf")))
                return {
                    "final_loss": float("inf"),
                    "best_loss": best,
                    "diverged": 1,
                    "diverged_at": step,
                    "curve": curve,
                }
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
            eta = rate(step) if rate is not None else lr_at(step, lr, warmup)
            w1 -= eta * grad_w1
            b1 -= eta * grad_b1
            w2 -= eta * grad_w2
            b2 -= eta * grad_b2
    return {
        "final_loss": loss,
        "best_loss": best,
        "diverged": 0,
        "diverged_at": None,
        "curve": curve,
    }
