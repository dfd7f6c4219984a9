"""The paper's reviews as the front doors show them (`show reviews`, the gate card, the panel).

Read from the files a review stage leaves (`values.review`): each reviewer's
`paper/reviews/review-<n>.json` and layer 1's aggregate `paper/reviews/meta.json`, through
`beneath.Beneath`. Reading is tolerant: a missing file is simply not shown, and a damaged or
refused one is one line in `problems` naming the file and what is wrong (never a traceback),
while what could be read is still shown. A review is checked with the rubric's own
`parse_review`, so a view never shows a score layer 1 would refuse.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, TypedDict

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import Stage
from lightscientist_jupyter.values.review import (
    META_FILE,
    REVIEWS_DIR,
    RUBRICS,
    SCORE_KEYS,
    MetaRecord,
    ReviewRecord,
    ReviewSpec,
    RoundRecord,
    parse_review,
)

_REVIEW_NAME = re.compile(r"^review-([1-9][0-9]*)\.json$")
_META_KEYS: dict[str, tuple[type, ...]] = {
    "round": (int,),
    "mean": (int, float, type(None)),
    "decision": (str,),
    "required_changes": (list,),
}
"""The keys `meta.json` must have (the design's), and the JSON types each may take."""


class ReviewRow(TypedDict):
    """One reviewer's review, as a table row."""

    reviewer: int
    round: int
    scores: dict[str, int]
    decision: str
    strengths: list[str]
    weaknesses: list[str]
    questions: list[str]


class ReviewsCard(TypedDict):
    """What the front ends draw of the reviews: the rows, the aggregate, what is wrong."""

    file: str
    """`paper/reviews/meta.json` (workspace-relative)."""
    columns: list[str]
    """The score columns, in the rubric's order."""
    reviews: list[ReviewRow]
    round: int | None
    """The aggregated round; None while no `meta.json` was written."""
    mean: float | None
    accept: float | None
    """The mean overall score at or above which the paper is accepted."""
    decision: str | None
    """The aggregate's decision: accept, revise or reject."""
    required_changes: list[str]
    earlier_round: int | None
    earlier_changes: list[str]
    """What the round before asked for (the revision this round reviewed)."""
    problems: list[str]
    summary: str
    """One line: `round 2: mean 6.33 against accept 6 — accept` (`aggregate_line`)."""


@dataclasses.dataclass(frozen=True)
class Reviews:
    """The reviews found in one workspace."""

    meta: MetaRecord | None
    reviews: tuple[ReviewRecord, ...]
    problems: tuple[str, ...]

    @property
    def found(self) -> bool:
        """Anything to show: an aggregate, a review or a problem with one."""
        return self.meta is not None or bool(self.reviews) or bool(self.problems)

    @property
    def earlier(self) -> RoundRecord | None:
        """The round before the aggregated one, None in the first round."""
        rounds = self.meta.get("rounds", []) if self.meta else []
        return rounds[-1] if rounds else None

    def card(self) -> ReviewsCard:
        meta, earlier = self.meta, self.earlier
        mean = meta.get("mean") if meta else None
        card: ReviewsCard = {
            "file": META_FILE,
            "columns": list(SCORE_KEYS),
            "reviews": [_row(r) for r in self.reviews],
            "round": meta["round"] if meta else None,
            "mean": None if mean is None else round(float(mean), 2),
            "accept": meta.get("accept") if meta else None,
            "decision": meta["decision"] if meta else None,
            "required_changes": list(meta["required_changes"]) if meta else [],
            "earlier_round": earlier.get("round") if earlier else None,
            "earlier_changes": list(earlier.get("required_changes", [])) if earlier else [],
            "problems": list(self.problems),
            "summary": "",
        }
        card["summary"] = aggregate_line(card)
        return card


def _row(review: ReviewRecord) -> ReviewRow:
    return {
        "reviewer": review["reviewer"],
        "round": review["round"],
        "scores": dict(review["scores"]),
        "decision": review["decision"],
        "strengths": list(review["strengths"]),
        "weaknesses": list(review["weaknesses"]),
        "questions": list(review["questions"]),
    }


def is_review_stage(stage: Stage) -> bool:
    """A stage whose table entry reviews the paper: it has a `review` setting, or it writes
    into `paper/reviews/` (a table's own review stage without the setting)."""
    if stage.review is not None:
        return True
    return any(out.startswith(REVIEWS_DIR + "/") for out in stage.outputs)


def _json(files: Beneath, rel: str) -> tuple[Any, str | None]:
    """The file's JSON, or the one line saying why it cannot be read (None, None: missing)."""
    try:
        text = files.read_text(rel)
    except FileNotFoundError:
        return None, None
    except OSError as exc:  # a link planted there (PathRefused), unreadable
        return None, str(exc)
    except UnicodeDecodeError:
        return None, f"{rel} is damaged: not UTF-8 text"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{rel} is damaged: not JSON ({exc.msg} at line {exc.lineno})"


def _meta(files: Beneath) -> tuple[MetaRecord | None, str | None]:
    raw, problem = _json(files, META_FILE)
    if raw is None:
        return None, problem
    if not isinstance(raw, dict):
        return None, f"{META_FILE} is damaged: not a JSON object"
    wrong = [
        key
        for key, kinds in _META_KEYS.items()
        if key not in raw or isinstance(raw[key], bool) or not isinstance(raw[key], kinds)
    ]
    if wrong:
        return None, f"{META_FILE} is damaged: {', '.join(wrong)} missing or of the wrong type"
    raw.setdefault("rounds", [])
    if not isinstance(raw["rounds"], list) or not all(isinstance(r, dict) for r in raw["rounds"]):
        return None, f"{META_FILE} is damaged: rounds must be a list of objects"
    return MetaRecord(**raw), None  # type: ignore[typeddict-item]


def _number(name: str) -> int | None:
    """The reviewer of `review-<n>.json`, None for another file."""
    found = _REVIEW_NAME.match(name)
    return int(found.group(1)) if found else None


def read_reviews(files: Beneath) -> Reviews:
    """The aggregate and each reviewer's review, with a line for each that cannot be read."""
    problems: list[str] = []
    meta, problem = _meta(files)
    if problem:
        problems.append(problem)
    rubric = meta.get("rubric", "neurips") if meta else "neurips"
    spec = ReviewSpec(rubric=rubric if rubric in RUBRICS else "neurips")
    try:
        found = [(_number(e.name), e.name) for e in files.scandir(REVIEWS_DIR)]
    except FileNotFoundError:
        found = []
    except OSError as exc:  # the folder is a link, or unreadable
        return Reviews(meta, (), (*problems, str(exc)))
    reviews = []
    for number, name in sorted((n, name) for n, name in found if n is not None):
        rel = f"{REVIEWS_DIR}/{name}"
        raw, problem = _json(files, rel)
        if problem:
            problems.append(problem)
            continue
        stated = raw.get("round") if isinstance(raw, dict) else None
        try:
            reviews.append(
                parse_review(
                    raw, spec, reviewer=number, round=stated if isinstance(stated, int) else 0
                )
            )
        except ValueError as exc:
            problems.append(f"{rel} is damaged: {exc}")
    return Reviews(meta, tuple(reviews), tuple(problems))


def review_lines(reviews: Reviews) -> list[str]:
    """The reviews as text: one row per reviewer, then the aggregate and what it asks."""
    card = reviews.card()
    if not reviews.found:
        return [f"No reviews yet ({REVIEWS_DIR}/ holds no review and no meta.json)."]
    head = ["reviewer", "round", *card["columns"], "decision"]
    rows = [
        [
            str(r["reviewer"]),
            str(r["round"]),
            *(str(r["scores"].get(c, "")) for c in card["columns"]),
            r["decision"],
        ]
        for r in card["reviews"]
    ]
    widths = [max(len(x) for x in column) for column in zip(head, *rows, strict=True)]
    lines = [
        "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
        for row in [head, *rows]
    ]
    lines.append(card["summary"])
    lines += [f"  required: {change}" for change in card["required_changes"]]
    if card["earlier_changes"]:
        lines.append(f"round {card['earlier_round']} asked for:")
        lines += [f"  {change}" for change in card["earlier_changes"]]
    lines += [f"problem: {p}" for p in card["problems"]]
    return lines


def aggregate_line(card: ReviewsCard) -> str:
    """`round 2: mean 6.33 against accept 6 — accept` (or that none was written yet)."""
    if card["round"] is None:
        return f"no aggregate yet ({card['file']} was not written)"
    mean = "no valid review" if card["mean"] is None else f"mean {card['mean']:g}"
    accept = "" if card["accept"] is None else f" against accept {card['accept']:g}"
    return f"round {card['round']}: {mean}{accept} — {card['decision']}"
