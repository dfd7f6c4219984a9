"""A review stage's settings, its reviewers' reviews and their aggregate, as plain values.

A stage table entry may carry `review = { reviewers = 3, rubric = "neurips", accept = 6,
rounds = 2 }`: before the stage's worker runs, that many reviewers, each its own worker
session with no view of the others, review the paper against the rubric and write
`paper/reviews/review-<n>.json`; layer 1 aggregates the round's reviews into
`paper/reviews/meta.json` (`controller.review`), and a mean below `accept` sends the paper
back to be revised, up to `rounds` rounds (the design's "Review stage"):

    review-<n>.json  {"reviewer", "round", "scores": {"soundness", "presentation",
                      "contribution", "overall"}, "strengths", "weaknesses", "questions",
                      "decision"}
    meta.json        {"round", "mean", "decision", "required_changes", "accept", "rubric",
                      "reviews": [{"reviewer", "overall", "decision", "scores"}],
                      "problems", "rounds": [the earlier rounds' aggregates]}

A leaf below the layers: it reads and writes nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, TypedDict

from lightscientist_jupyter.values.bounded import bounded_ints

REVIEW_KEYS = ("reviewers", "rubric", "accept", "rounds")
REVIEWS_DIR = "paper/reviews"
META_FILE = f"{REVIEWS_DIR}/meta.json"
REVIEWER_LABEL = "reviewer "
"""The label of a reviewer's worker starts so: `reviewer 2`."""
SCORE_KEYS = ("soundness", "presentation", "contribution", "overall")
LIST_KEYS = ("strengths", "weaknesses", "questions")
REVIEWER_DECISIONS = ("accept", "revise", "reject")
"""What one reviewer recommends."""
META_DECISIONS = ("accept", "revise", "reject")
"""What a round's aggregate decides: the paper goes on, goes back to be revised (rounds
remain), or is below the bar with no round left (the researcher decides at the gate)."""
MAX_REVIEWERS = 9
MAX_ROUNDS = 5


def review_file(reviewer: int) -> str:
    """Where reviewer `reviewer` (1-based) writes its review, relative to the workspace."""
    return f"{REVIEWS_DIR}/review-{reviewer}.json"


@dataclasses.dataclass(frozen=True)
class Rubric:
    """A rubric's scales (inclusive) and what its reviewers are asked to weigh."""

    name: str
    scales: Mapping[str, tuple[int, int]]
    guidance: str

    def scale_text(self) -> str:
        """`soundness 1–4, presentation 1–4, contribution 1–4, overall 1–10`."""
        return ", ".join(f"{k} {lo}–{hi}" for k, (lo, hi) in self.scales.items())


RUBRICS: dict[str, Rubric] = {
    "neurips": Rubric(
        "neurips",
        {"soundness": (1, 4), "presentation": (1, 4), "contribution": (1, 4), "overall": (1, 10)},
        "Soundness: are the claims supported by the experiments (seeds, intervals, controls, "
        "ablations)? Presentation: can a reader follow the method, the figure and its caption? "
        "Contribution: does the paper place itself among the cited work and state its limits? "
        "Overall, NeurIPS-style: 10 award quality, 8 strong accept, 7 accept, 6 weak accept, "
        "5 borderline accept, 4 borderline reject, 3 reject, 2 strong reject, 1 trivial or wrong.",
    ),
}
"""The rubrics a table may name."""


@dataclasses.dataclass(frozen=True)
class ReviewSpec:
    """A stage's `review` table, validated."""

    reviewers: int = 3
    rubric: str = "neurips"
    accept: float = 6.0
    """The mean overall score at or above which the paper is accepted."""
    rounds: int = 2
    """How many rounds of review at most: below `accept`, a round before the last sends the
    paper back to be revised."""

    @property
    def scales(self) -> Mapping[str, tuple[int, int]]:
        return RUBRICS[self.rubric].scales


def parse_spec(raw: Mapping[str, Any]) -> ReviewSpec:
    """The `review` table of a stage, or a `ValueError` naming every key to fix."""
    problems = [f"unknown key '{key}'" for key in raw if key not in REVIEW_KEYS]
    rubric = raw.get("rubric", "neurips")
    if rubric not in RUBRICS:
        problems.append(f"'rubric' must be one of {', '.join(RUBRICS)}, not {rubric!r}")
    counts = {"reviewers": (3, 1, MAX_REVIEWERS), "rounds": (2, 1, MAX_ROUNDS)}
    values = bounded_ints(raw, counts, problems)
    accept = raw.get("accept", 6)
    low, high = RUBRICS[rubric].scales["overall"] if rubric in RUBRICS else (1, 10)
    if (
        isinstance(accept, bool)
        or not isinstance(accept, int | float)
        or not math.isfinite(float(accept))
        or not low <= accept <= high
    ):
        problems.append(f"'accept' must be an overall score from {low} to {high}, not {accept!r}")
    if problems:
        raise ValueError("; ".join(problems))
    return ReviewSpec(rubric=str(rubric), accept=float(accept), **values)


class ReviewRecord(TypedDict):
    """`paper/reviews/review-<n>.json`."""

    reviewer: int
    round: int
    scores: dict[str, int]
    strengths: list[str]
    weaknesses: list[str]
    questions: list[str]
    decision: str


def parse_review(raw: object, spec: ReviewSpec, *, reviewer: int, round: int) -> ReviewRecord:
    """Reviewer `reviewer`'s review of round `round`, validated against the rubric; a
    `ValueError` naming every key to fix."""
    if not isinstance(raw, Mapping):
        raise ValueError("a review must be a JSON object")
    problems = []
    if raw.get("reviewer") != reviewer:
        problems.append(f"'reviewer' must be {reviewer}, not {raw.get('reviewer')!r}")
    if raw.get("round") != round:
        problems.append(f"'round' must be {round}, not {raw.get('round')!r}")
    scores = raw.get("scores")
    checked: dict[str, int] = {}
    if not isinstance(scores, Mapping):
        problems.append(f"'scores' must be an object with {', '.join(SCORE_KEYS)}")
    else:
        for key, (low, high) in spec.scales.items():
            value = scores.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                problems.append(f"'scores.{key}' must be an integer from {low} to {high}")
            else:
                checked[key] = value
        problems += [f"unknown score 'scores.{k}'" for k in scores if k not in spec.scales]
    lists: dict[str, list[str]] = {}
    for key in LIST_KEYS:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"'{key}' must be a list of strings")
        else:
            lists[key] = [v.strip() for v in value if v.strip()]
    decision = raw.get("decision")
    if decision not in REVIEWER_DECISIONS:
        problems.append(f"'decision' must be one of {', '.join(REVIEWER_DECISIONS)}")
    if problems:
        raise ValueError("; ".join(problems))
    return {
        "reviewer": reviewer,
        "round": round,
        "scores": checked,
        "strengths": lists["strengths"],
        "weaknesses": lists["weaknesses"],
        "questions": lists["questions"],
        "decision": str(decision),
    }


class ReviewLine(TypedDict):
    """One reviewer's part of the aggregate."""

    reviewer: int
    overall: int
    decision: str
    scores: dict[str, int]


class RoundRecord(TypedDict):
    """One round's aggregate (the top of `meta.json`, and each of its earlier `rounds`)."""

    round: int
    mean: float | None
    """The mean overall score of the round's valid reviews (None when there is none)."""
    decision: str
    required_changes: list[str]
    accept: float
    rubric: str
    reviews: list[ReviewLine]
    problems: list[str]
    """The reviews that were missing or invalid, each with what is wrong."""


class MetaRecord(RoundRecord):
    """`paper/reviews/meta.json`: the last round's aggregate and the rounds before it."""

    rounds: list[RoundRecord]
