"""Layer 2's side of a review stage: it runs the round's reviewers, one session each.

A review stage (`review = {...}` in the table) starts `reviewers` workers before the agent
hears of the stage, labelled `reviewer <n>`: each is its own session and thread, given the
paper, the results and the rubric and no view of the others, and writes
`paper/reviews/review-<n>.json`. When every reviewer has ended, layer 1 aggregates the round
(`StageHost.review_round_over`, never the reviewers' own text): below the bar with rounds
left it sends the paper back, and the stage ends there; otherwise the agent is told once, by a
`review_over` event carrying the round's scores and decision, and starts the stage's worker as
at any stage's start. Its input stays the size of one event however many reviewers ran.

After a kill, the loop's recovery revives the reviewers it knew; a round whose reviewers had
all ended is aggregated again from the same files, which gives the same meta.
"""

from __future__ import annotations

import time
from typing import Any

from lightscientist_jupyter.errors import ControllerError, RuntimeLayerError, SupervisorError
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.review import (
    META_FILE,
    REVIEWER_LABEL,
    RUBRICS,
    MetaRecord,
    ReviewSpec,
    review_file,
)
from lightscientist_jupyter.values.task import StageHost
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, SchedulingKind

PAPER_FILES = ("paper/paper.tex", "paper/paper.pdf", "paper/paper.md")
"""What a reviewer is pointed at: the paper's source and its PDF (those that exist)."""


def reviewer_of(record: WorkerRecord) -> int | None:
    """The reviewer a worker is (its label `reviewer <n>`), or None for another worker."""
    label = record.label
    if not label.startswith(REVIEWER_LABEL):
        return None
    number = label[len(REVIEWER_LABEL) :]
    return int(number) if number.isdigit() else None


class ReviewRunner:
    """Runs a review stage's reviewers (see the module's text); one per stage supervisor."""

    def __init__(self, host: StageHost, control: WorkerControl):
        self.host = host
        self.control = control
        self._unstarted: set[tuple[str, int]] = set()
        """(task id, reviewer) whose worker could not be started: counted as ended."""

    def tick(self, stage: SupervisedStage) -> None:
        """Start the round's reviewers; once all have ended, have layer 1 aggregate."""
        spec = stage.task.review
        if spec is None or stage.state.review_told:
            return
        task_id = stage.task.task_id
        ended = {n for t, n in self._unstarted if t == task_id}
        workers = self._reviewers(stage)
        started = {n for n, _ in workers} | ended
        for number in range(1, spec.reviewers + 1):
            if number not in started:
                self._start(stage, spec, number)
                return  # one a tick: its record is read back on the next
        ended |= {n for n, r in workers if r.status in FINAL_WORKER_STATUSES}
        if len(ended) < spec.reviewers:
            return
        try:
            meta = self.host.review_round_over()
        except ControllerError:
            return  # the project moved meanwhile (a cancel, a hand-over): nothing to review
        with stage.lock:
            stage.state.review_told = True
            if meta["decision"] != "revise":  # a revision moved the project: nobody to tell
                stage.enqueue(
                    SchedulingEvent(
                        SchedulingKind.REVIEW_OVER, task_id, None, told(meta), time.time()
                    )
                )
            stage.save()

    def screen(
        self, stage: SupervisedStage, event: SchedulingEvent | None
    ) -> SchedulingEvent | None:
        """The event for the agent, or None for a reviewer's end (the round's, not the
        agent's: it hears of the round once it is aggregated)."""
        if event is None or not event.worker_id:
            return event
        record = stage.state.records.get(event.worker_id)
        if record is None or reviewer_of(record) is None:
            return event
        ends = {
            SchedulingKind.WORKER_FINISHED,
            SchedulingKind.WORKER_FAILED,
            SchedulingKind.WORKER_CANCELLED,
        }
        return None if event.kind in ends else event

    def _start(self, stage: SupervisedStage, spec: ReviewSpec, number: int) -> None:
        try:
            self.control.start_worker(
                label=f"{REVIEWER_LABEL}{number}",
                header=reviewer_fields(spec, number, stage.task.visit),
            )
        except (SupervisorError, RuntimeLayerError):
            self._unstarted.add((stage.task.task_id, number))

    def _reviewers(self, stage: SupervisedStage) -> list[tuple[int, WorkerRecord]]:
        with stage.lock:
            records = list(stage.state.records.values())
        task_id = stage.task.task_id
        return [
            (n, r) for r in records if (n := reviewer_of(r)) is not None and r.task_id == task_id
        ]


def reviewer_fields(spec: ReviewSpec, number: int, round: int) -> dict[str, Any]:
    """The header fields of reviewer `number`'s task (see `prompts.worker_message`)."""
    rubric = RUBRICS[spec.rubric]
    return {
        "reviewer": number,
        "round": round,
        "review_file": review_file(number),
        "paper_files": list(PAPER_FILES),
        "results": "experiment/summary.csv",
        "rubric": spec.rubric,
        "scales": rubric.scale_text(),
        "rubric_guidance": rubric.guidance,
        "accept": spec.accept,
        "instructions": (
            f"Review the paper as reviewer {number} of {spec.reviewers} (round {round}), on "
            f"your own: read the paper and the results it reports, judge it against the "
            f"rubric, and write {review_file(number)}."
        ),
    }


def told(meta: MetaRecord) -> dict[str, Any]:
    """What the agent is told of a round: its scores, decision and changes (not the reviews'
    text: the stage's worker reads the files)."""
    return {
        "round": meta["round"],
        "mean": meta["mean"],
        "accept": meta["accept"],
        "decision": meta["decision"],
        "overall": {str(r["reviewer"]): r["overall"] for r in meta["reviews"]},
        "required_changes": meta["required_changes"][:8],
        "problems": meta["problems"][:4],
        "meta_file": META_FILE,
    }
