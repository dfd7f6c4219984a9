"""The controller's review calls (a mixin of `ResearchController`): when a review stage's
reviewers have all ended, layer 1 reads their reviews, validates each against the rubric,
aggregates the round by the pure rules of `controller.review` into `paper/reviews/meta.json`
(replaced atomically through the workspace's guarded path), announces it with a
`review.meta` event, and — below the bar with rounds left — sends the paper back to the stage
the project came from, with the required changes as that stage's task feedback.

The round is the review stage's visit: the first visit is round 1, a revision's review
round 2, and so on.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, TypeGuard

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.controller import actions, review, rules
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.values.review import (
    META_FILE,
    MetaRecord,
    ReviewRecord,
    ReviewSpec,
    RoundRecord,
    parse_review,
    review_file,
)
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace


class ReviewCalls:
    """The review calls of `ResearchController` (which provides these attributes)."""

    workspace: Workspace
    table: StageTable
    bus: EventBus
    _state: ProjectState
    _lock: threading.RLock

    def _run(self, action: actions.Action) -> actions.Respond:  # the controller's
        raise NotImplementedError

    def review_spec(self) -> ReviewSpec | None:
        """The current stage's `review` table, or None for a stage that is no review."""
        stage = self._state.stage
        return self.table[stage].review if stage in self.table else None

    def review_round_over(self) -> MetaRecord:
        """Aggregate the current round's reviews into `meta.json` and act on its decision
        (see the module's text); returns the round's meta."""
        with self._lock:
            spec = self.review_spec()
            stage = self._state.stage
            if spec is None:
                raise ControllerError(f"stage '{stage}' is no review stage")
            number = self._state.visit
            reviews, problems = self._reviews(spec, number)
            meta = review.aggregate(spec, number, reviews, problems, self._earlier(number))
            target = rules.previous_stage(self._state.history, stage)
            if meta["decision"] == "revise" and target not in self.table[stage].allowed:
                meta["decision"] = "reject"
                meta["problems"].append(
                    f"no stage to revise the paper in: '{stage}' was entered from "
                    f"'{target}', which is not among its allowed next stages"
                )
            text = json.dumps(meta, indent=2, ensure_ascii=False) + "\n"
            Beneath(self.workspace.root).write_text_atomic(META_FILE, text)
            self.bus.emit(
                EventType.REVIEW_META,
                meta_line(meta),
                stage=stage,
                task_id=self._state.task_id,
                data={k: v for k, v in meta.items() if k != "rounds"},
            )
            if meta["decision"] == "revise" and target is not None:
                self._run(
                    actions.Revise(
                        stage, target, meta_line(meta), review.feedback(meta), time.time()
                    )
                )
            return meta

    def _reviews(self, spec: ReviewSpec, number: int) -> tuple[list[ReviewRecord], list[str]]:
        """The round's valid reviews, and what is wrong with each other reviewer's file."""
        where = Beneath(self.workspace.root)
        reviews: list[ReviewRecord] = []
        problems: list[str] = []
        for reviewer in range(1, spec.reviewers + 1):
            path = review_file(reviewer)
            try:
                raw: Any = json.loads(where.read_text(path))
                reviews.append(parse_review(raw, spec, reviewer=reviewer, round=number))
            except FileNotFoundError:
                problems.append(f"reviewer {reviewer}: {path} was not written")
            except PathRefused as exc:
                problems.append(f"reviewer {reviewer}: {exc}")
            except (ValueError, UnicodeDecodeError) as exc:
                problems.append(f"reviewer {reviewer}: {path}: {exc}")
        return reviews, problems

    def _earlier(self, number: int) -> list[RoundRecord]:
        """The rounds before `number`, from the meta.json a round before it wrote."""
        try:
            raw = json.loads(Beneath(self.workspace.root).read_text(META_FILE))
        except (FileNotFoundError, PathRefused, ValueError, UnicodeDecodeError):
            return []
        if not isinstance(raw, dict) or not isinstance(raw.get("round"), int):
            return []
        rounds: list[RoundRecord] = [r for r in raw.get("rounds") or [] if _is_round(r)]
        if raw["round"] < number and _is_round(raw):
            rounds.append(review.as_round(raw))
        return [r for r in rounds if r["round"] < number]


def _is_round(raw: object) -> TypeGuard[MetaRecord]:
    """Whether `raw` (read back from meta.json) has a round's keys; a hand-edited meta that
    lost them is left out of the history rather than failing the next round."""
    keys = ("mean", "decision", "required_changes", "accept", "rubric", "reviews")
    return (
        isinstance(raw, dict) and isinstance(raw.get("round"), int) and all(k in raw for k in keys)
    )


def meta_line(meta: MetaRecord) -> str:
    """One line for the event stream: `round 1: mean 5.33 below 6 to accept → revise (3
    reviews)`."""
    count = len(meta["reviews"])
    if meta["mean"] is None:
        return f"round {meta['round']}: no valid review → {meta['decision']}"
    relation = "reaches" if meta["mean"] >= meta["accept"] else "below"
    return (
        f"round {meta['round']}: mean overall {meta['mean']:g} {relation} "
        f"{meta['accept']:g} to accept → {meta['decision']} ({count} review"
        f"{'' if count == 1 else 's'})"
    )
