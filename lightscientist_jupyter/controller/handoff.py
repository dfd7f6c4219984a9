"""The hand-over transitions: the researcher takes a stage, delivers it, or gives it back.

They are part of the pure `machine.step` (the machine calls `apply` for the three actions and
`hand_over_if_marked` after every step), so they read nothing but the state, the table and
the action. A hand-over is a pending decision of kind `handoff`: the project waits as
`waiting_user`, the supervisor starts no worker for the stage, the researcher gets a notebook
to do it in (`handoff_notebook`), and `deliver` is checked exactly as a worker's finish is
(`machine`'s own finish runs it, with `by = researcher`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter.controller import actions
from lightscientist_jupyter.controller.handoff_notebook import notebook_path
from lightscientist_jupyter.controller.moves import Moves
from lightscientist_jupyter.controller.state import PendingDecision
from lightscientist_jupyter.controller.table import DONE
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    DecisionKind,
    EventType,
    ProjectStatus,
)

HandoffAction = actions.Take | actions.Deliver | actions.GiveBack
FinishMove = Callable[[actions.Finish], None]
"""The machine's finish handler, which `deliver` runs."""


def apply(run: Moves, action: HandoffAction, finish: FinishMove) -> None:
    """Carry out one hand-over action; `finish` is the machine's finish (for `deliver`)."""
    match action:
        case actions.Take():
            take(run, action)
        case actions.Deliver():
            deliver(run, action, finish)
        case actions.GiveBack():
            give_back(run, action)


def hand_over(run: Moves, at: float) -> None:
    """Make the current stage the researcher's: a pending `handoff` decision."""
    s = run.state
    stage = run.table[s.stage]
    run.wait_for(
        PendingDecision(
            id=run.next_decision_id(),
            kind=DecisionKind.HANDOFF,
            stage=stage.id,
            question=f"'{stage.id}' is yours: write its outputs, then deliver (or give it back)",
            outputs=stage.outputs,
            proposed_next=stage.next,
            requested_at=at,
        )
    )
    run.effects.append(actions.HandOverNotebook(stage.id))


def hand_over_if_marked(run: Moves, at: float) -> None:
    """After any step: a running project that is at a stage marked for the researcher
    waits for them (the stage was just entered, or a failed run was reopened there)."""
    s = run.state
    if s.status == ProjectStatus.RUNNING and s.pending is None and s.stage in s.handoffs:
        hand_over(run, at)


def not_a_reply(stage: str) -> str:
    """Why a reply does not apply while the researcher has the stage."""
    return (
        f"'{stage}' is handed to the researcher, so there is nothing to approve: deliver it "
        "(`deliver --summary ...`) or give it back (`give-back`)"
    )


def take(run: Moves, a: actions.Take) -> None:
    s = run.state
    pending = s.pending
    if s.status in FINAL_PROJECT_STATUSES or s.stage == DONE:
        raise ControllerError(f"the project is {s.status}; there is no stage to take")
    stage_id = a.stage or s.stage
    if pending is not None and pending.kind == DecisionKind.GATE and not a.stage:
        stage_id = pending.proposed_next or run.table[pending.stage].next  # "do the next myself"
    if stage_id == DONE or stage_id not in run.table:
        raise ControllerError(
            f"'{stage_id}' is not a stage of {run.table.path.name}; choose one of "
            f"{', '.join(run.table.ids())}"
        )
    if stage_id == s.stage and pending is None:
        hand_over(run, a.at)
        run.respond(
            True,
            f"'{stage_id}' is yours now: its workers stop, the project waits; its task is a "
            f"notebook, open it in JupyterLab: {notebook_path(run.table[stage_id])}",
        )
        return
    if pending is not None and pending.kind == DecisionKind.HANDOFF and stage_id == s.stage:
        run.respond(False, f"'{stage_id}' is already yours; deliver it or give it back")
        return
    if stage_id == s.stage:  # a question or a gate of this stage waits
        raise ControllerError(
            f"'{stage_id}' waits for an answer to {pending.id if pending else '?'} first; "
            "reply, then take it"
        )
    if stage_id not in s.handoffs:
        s.handoffs.append(stage_id)
        run.save()
    run.emit(
        EventType.USER_DECISION,
        f"{stage_id} will be handed to the researcher when the project reaches it",
        stage_id,
        s.task_id,
        {"handoff": stage_id, "source": str(a.source)},
    )
    run.respond(True, f"'{stage_id}' will be yours when the project reaches it")


def _handed(run: Moves, verb: str) -> PendingDecision:
    s = run.state
    pending = s.pending
    if pending is None or pending.kind != DecisionKind.HANDOFF:
        raise ControllerError(
            f"nothing is handed to you to {verb}: the project is {s.status} at stage "
            f"'{s.stage}' (take it first with `take`)"
        )
    return pending


def deliver(run: Moves, a: actions.Deliver, finish: FinishMove) -> None:
    s = run.state
    pending = _handed(run, "deliver")
    s.pending, s.status = None, ProjectStatus.RUNNING
    finish(dataclasses.replace(a.finish, by="researcher", via=a.source))
    told = next((e for e in reversed(run.effects) if isinstance(e, actions.Respond)), None)
    if told is None or not told.ok:  # refused: the stage stays the researcher's
        s.pending, s.status = pending, ProjectStatus.WAITING_USER
        return
    s.decisions.append(_answer(pending, True, a.finish.summary, s.stage, a))
    run.save()
    run.emit(
        EventType.USER_DECISION,
        f"{pending.stage} delivered by the researcher",
        pending.stage,
        data={"id": pending.id, "handoff": "deliver", "source": str(a.source)},
    )


def give_back(run: Moves, a: actions.GiveBack) -> None:
    s = run.state
    pending = _handed(run, "give back")
    s.pending, s.status = None, ProjectStatus.RUNNING
    if s.stage in s.handoffs:
        s.handoffs.remove(s.stage)
    wrote = ", ".join(a.written) if a.written else "no files yet"
    stopping = ", ".join(a.workers_wrote)
    s.feedback = (
        f"The researcher worked on '{s.stage}' by hand and gave it back to the workers; they "
        f"wrote {wrote}."
        + (f" The workers stopped by the hand-over wrote {stopping} first." if stopping else "")
        + " Keep what is useful and build on it."
    )
    s.decisions.append(_answer(pending, False, s.feedback, s.stage, a))
    run.save()
    run.emit(
        EventType.USER_DECISION,
        f"{s.stage} given back to the workers (the researcher wrote {wrote})",
        s.stage,
        s.task_id,
        {
            "id": pending.id,
            "handoff": "give-back",
            "written": list(a.written),
            "workers_wrote": list(a.workers_wrote),
            "source": str(a.source),
        },
    )
    run.respond(
        True,
        f"'{s.stage}' is the workers' again; they see what you wrote: {wrote}"
        + (
            f" (and what the workers stopped by the hand-over wrote: {stopping})"
            if stopping
            else ""
        ),
    )


def _answer(
    pending: PendingDecision,
    delivered: bool,
    comment: str,
    to: str,
    a: actions.Deliver | actions.GiveBack,
) -> dict[str, Any]:
    return {
        "id": pending.id,
        "kind": str(DecisionKind.HANDOFF),
        "stage": pending.stage,
        "approve": delivered,
        "comment": comment,
        "to": to,
        "at": a.finish.at if isinstance(a, actions.Deliver) else a.at,
        "source": str(a.source),
    }
