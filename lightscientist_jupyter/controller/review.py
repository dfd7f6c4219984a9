"""Layer 1's rules for a review stage: a round's reviews aggregated into one decision.

Pure functions of the reviews (`values.review`): no clock, no disk, so a resumed or replayed
run that reads the same review files decides the same. The rules:
- the round's score is the mean `overall` of its valid reviews (a missing or invalid review
  is named among the round's problems and counts for nothing);
- at or above the stage's `accept` the paper is accepted; below it, a round before the last
  sends the paper back to be revised (`revise`), the last leaves it below the bar
  (`reject`: the researcher decides at the gate, or the supervisor in auto mode);
- the required changes are the weaknesses named by the reviewers who did not accept, in
  reviewer order, each once — what the revision must address, in the reviewers' words.
A round with no valid review decides nothing on the paper: it is a `reject` whose problems
say which files to fix, never a revision asked for by nobody.
"""

from __future__ import annotations

from collections.abc import Sequence

from lightscientist_jupyter.values.review import (
    MetaRecord,
    ReviewLine,
    ReviewRecord,
    ReviewSpec,
    RoundRecord,
)


def decision_of(spec: ReviewSpec, round: int, mean: float | None) -> str:
    """`accept`, `revise` or `reject` for a round whose mean overall score is `mean`."""
    if mean is None:
        return "reject"
    if mean >= spec.accept:
        return "accept"
    return "revise" if round < spec.rounds else "reject"


def required_changes(reviews: Sequence[ReviewRecord], spec: ReviewSpec) -> list[str]:
    """The weaknesses of the reviewers who did not accept (or scored below the bar), each
    once (compared without case or surrounding space), in reviewer order."""
    seen: set[str] = set()
    changes: list[str] = []
    for review in sorted(reviews, key=lambda r: r["reviewer"]):
        if review["decision"] == "accept" and review["scores"]["overall"] >= spec.accept:
            continue
        for weakness in review["weaknesses"]:
            key = " ".join(weakness.lower().split())
            if key not in seen:
                seen.add(key)
                changes.append(weakness)
    return changes


def aggregate(
    spec: ReviewSpec,
    round: int,
    reviews: Sequence[ReviewRecord],
    problems: Sequence[str] = (),
    earlier: Sequence[RoundRecord] = (),
) -> MetaRecord:
    """`meta.json` for round `round` from its valid `reviews` and the `problems` of the
    others; `earlier` are the rounds before it (kept, in order, under `rounds`)."""
    ordered = sorted(reviews, key=lambda r: r["reviewer"])
    overall = [r["scores"]["overall"] for r in ordered]
    mean = round_mean(overall)
    decision = decision_of(spec, round, mean)
    lines: list[ReviewLine] = [
        {
            "reviewer": r["reviewer"],
            "overall": r["scores"]["overall"],
            "decision": r["decision"],
            "scores": dict(r["scores"]),
        }
        for r in ordered
    ]
    return {
        "round": round,
        "mean": mean,
        "decision": decision,
        "required_changes": [] if decision == "accept" else required_changes(ordered, spec),
        "accept": spec.accept,
        "rubric": spec.rubric,
        "reviews": lines,
        "problems": list(problems),
        "rounds": [r for r in earlier if r["round"] < round],
    }


def round_mean(scores: Sequence[int]) -> float | None:
    """The mean of `scores` to two decimals (None for none): what meta.json and the gate
    show, and what is compared with `accept`."""
    return round(sum(scores) / len(scores), 2) if scores else None


def as_round(meta: MetaRecord) -> RoundRecord:
    """`meta` without its earlier rounds: one entry of a later meta's `rounds`."""
    return {
        "round": meta["round"],
        "mean": meta["mean"],
        "decision": meta["decision"],
        "required_changes": list(meta["required_changes"]),
        "accept": meta["accept"],
        "rubric": meta["rubric"],
        "reviews": list(meta["reviews"]),
        "problems": list(meta["problems"]),
    }


def feedback(meta: MetaRecord) -> str:
    """The revision's task feedback: the round, its score and the changes to make."""
    head = (
        f"The reviewers (round {meta['round']}, mean overall {meta['mean']} below the "
        f"{meta['accept']:g} to accept) ask for these changes:"
    )
    changes = meta["required_changes"] or ["raise the paper's overall quality (no weakness named)"]
    return "\n".join([head, *(f"- {c}" for c in changes)])
