"""What the gate card shows, as plain data for its front end (`gate_actions`, `widgets/gate.ts`).

Action first: one heading that says what approving does, a summary of two lines (the full
text behind it), the files under review, at a review stage the reviewers' scores and the
decision they add up to, what the stage was given from the user's memory ("Recalled from
memory"), then the controls. The offline demo's note is not repeated in every summary: it
becomes one small badge.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

from lightscientist_jupyter.app.recalled import Recalled
from lightscientist_jupyter.app.reviews import ReviewsCard, is_review_stage, read_reviews
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import DONE, PendingDecision, StageTable
from lightscientist_jupyter.jupyter.look import door_words, status_words, verdict_words
from lightscientist_jupyter.jupyter.permission_card import permission_card
from lightscientist_jupyter.jupyter.server.answers import FileDiff, GateChecks, PermissionCard

OFFLINE_NOTE = "(Offline demo model"
SUMMARY_LINES = 2


class GateCardView(TypedDict):
    """A pending decision as the gate card shows it (`IGateCardView` in
    `labextension/src/widgets/views.ts`)."""

    id: str
    kind: str
    stage: str
    next: str
    heading: str
    """What approving does, in one line."""
    summary: str
    """Two lines of the summary; the whole of it is `summary_full`."""
    summary_full: str
    badge: str
    """`offline demo` for the offline model's note, else ''."""
    files: list[str]
    targets: list[list[str]]
    """`[label, stage]`: where a rejection may send the project, the default first."""
    reviews: ReviewsCard | None
    recalled: list[dict[str, Any]]
    diff: list[FileDiff]
    """At a gate: what changed in each file under review since the last approval."""
    diff_error: str
    """Why the diff cannot be shown ('' when it can)."""
    checks: GateChecks | None
    """At a gate with `numbers:` checks: the paper's numbers and the cells that printed them."""
    permission: PermissionCard | None
    """For a coding agent's permission request: its card (`jupyter.permission_card`), whose
    buttons are the agent's options."""
    settled: bool


def card_of(
    pending: PendingDecision,
    targets: list[tuple[str, str]],
    reviews: ReviewsCard | None = None,
    recalled: Sequence[Recalled] = (),
    diff: Sequence[FileDiff] = (),
    diff_error: str = "",
    checks: GateChecks | None = None,
) -> GateCardView:
    """The synced `card` of `GateActions` for a pending decision (`reviews`: at a review
    stage, each reviewer's scores and the aggregate, `review_card`; `recalled`: what the
    stage's visit was given from the user's memory, `app.recalled`; `diff` and `checks`: at
    a gate, what changed and where the paper's numbers come from, as the panel is sent
    them)."""
    gate = pending.kind == "gate"
    lines = [line for line in pending.summary.splitlines() if line.strip()]
    offline = any(line.strip().startswith(OFFLINE_NOTE) for line in lines)
    lines = [line for line in lines if not line.strip().startswith(OFFLINE_NOTE)]
    permission = permission_card(pending.permission) if pending.permission else None
    heading = (
        f"◆ Approve {pending.stage} and move on to {pending.proposed_next or '?'}?"
        if gate
        else f"Question from {pending.stage}: {pending.question}"
    )
    if permission is not None:  # the card's own heading says what it asks
        heading = f"{permission['agent']} asks permission"
    shown = " ".join(lines[:SUMMARY_LINES])
    if len(lines) > SUMMARY_LINES:
        shown += " …"
    return {
        "id": pending.id,
        "kind": str(pending.kind),
        "stage": pending.stage,
        "next": pending.proposed_next or "",
        "heading": heading,
        "summary": shown,
        "summary_full": "\n".join(lines),
        "badge": "offline demo" if offline else "",
        "files": list(pending.outputs),
        "targets": [list(t) for t in targets if t[1]],
        "reviews": reviews,
        "recalled": [r.to_dict() for r in recalled],
        "diff": list(diff),
        "diff_error": diff_error,
        "checks": checks,
        "permission": permission,
        "settled": False,
    }


def review_card(table: StageTable, root: Path, stage: str) -> ReviewsCard | None:
    """The reviews the card shows at `stage`: at a review stage whose reviews were written
    (`app.reviews`), else None."""
    if stage not in table or not is_review_stage(table[stage]):
        return None
    found = read_reviews(Beneath(root))
    return found.card() if found.found else None


def settled_text(pending: PendingDecision, answer: dict[str, Any], state: Any) -> str:
    """One line for a decided card: verdict, where the project went, the comment, from where."""
    verdict = verdict_words(answer)
    target = answer.get("to")
    where = f" → {'done' if target == DONE else target}" if target else ""
    comment = f" — “{answer['comment']}”" if answer.get("comment") else ""
    return (
        f"✔ {verdict} {answer.get('stage', pending.stage)}{where} "
        f"{door_words(answer.get('source', '?'))}; now {status_words(state.status)}{comment}"
    )
