"""Layer 1's transitions as one pure function: `step(state, table, action) -> (state, effects)`.

The controller turns each call it gets (a finish from layer 2, a reply from a human, a cancel)
into an action, hands it to `step` with the current state and the stage table, and carries out
the effects that come back, in order: save `state.json`, emit an event, append a `PROCESS.md`
entry, tell the supervisor an answer arrived, answer the caller. `step` reads nothing else and
never changes the state it is given: the clock comes in the action (`at`), and so do the
outputs the caller found missing on disk, so every transition can be tested with plain values.
The actions and effects are the frozen dataclasses of `controller.actions`.

An action that cannot apply at all (a reply when nothing is pending, a rejection to a stage
the table lacks, a question while the project waits) raises `ControllerError` and changes
nothing; a finish that the rules refuse is not an error but an answer the model can act on.
"""

from __future__ import annotations

import copy

from lightscientist_jupyter.controller import actions, budget, handoff, rules
from lightscientist_jupyter.controller.actions import Action, Effect
from lightscientist_jupyter.controller.moves import Moves
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    DecisionKind,
    EventType,
    MemoryKind,
    Mode,
    ProjectStatus,
)

# ---------------------------------------------------------------------------- the step


def step(
    state: ProjectState, table: StageTable, action: Action
) -> tuple[ProjectState, tuple[Effect, ...]]:
    """Apply `action` to (a copy of) `state`; returns the new state and the effects, in order.

    Raises:
        ControllerError: the action cannot apply; nothing changed.
    """
    run = _Run(copy.deepcopy(state), table)
    match action:
        case actions.Start():
            run.enter(run.state.stage, by="start", previous=None, at=action.at)
        case actions.Finish():
            run.finish(action)
        case actions.Ask():
            run.ask_question(action)
        case actions.Revise():
            run.revise(action)
        case actions.Reply():
            run.reply(action)
        case actions.End():
            run.end(action)
        case actions.Reopen():
            run.reopen()
        case actions.Charge():
            budget.charge(run, action)
        case actions.SetBudget():
            budget.set_budget(run, action)
        case actions.KeepSettings():  # a value of None: back to the default
            kept = {**run.state.settings, **action.values}
            run.state.settings = {k: v for k, v in kept.items() if v is not None}
            run.save()
        case actions.Take() | actions.Deliver() | actions.GiveBack():
            handoff.apply(run, action, run.finish)
    handoff.hand_over_if_marked(run, getattr(action, "at", state.updated_at))
    return run.state, tuple(run.effects)


_GOES_ON = (ProjectStatus.STOPPED, ProjectStatus.PAUSED)
"""Statuses a run leaves off in and `resume` continues from where they were."""


class _Run(Moves):
    """One step in progress: the handlers of each action."""

    # ------------------------------------------------------------ layer 2's tools

    def finish(self, a: actions.Finish) -> None:
        s = self.state
        if s.status != ProjectStatus.RUNNING:
            self.respond(False, f"the project is {s.status}, not running; nothing was finished")
            return
        stage = self.table[s.stage]
        target = a.next_stage or stage.next
        reason = rules.finish_refusal(
            stage,
            target,
            list(a.missing),
            a.missing_listed,
            a.failed_checks,
            by=a.by,
            via=a.via,
        )
        if reason:
            self.emit(
                EventType.STAGE_REJECTED,
                f"finish of {s.stage} refused: {reason}",
                s.stage,
                s.task_id,
                {"reason": reason},
            )
            self.respond(False, reason)
            return
        outputs = tuple(dict.fromkeys([*stage.outputs, *(o for o in a.outputs if o)]))
        s.last_summary[stage.id] = a.summary
        self.emit(
            EventType.STAGE_FINISH,
            f"{stage.id} finished; suggests {target}",
            stage.id,
            s.task_id,
            {
                "summary": a.summary,
                "outputs": list(outputs),
                "next": target,
                "visit": s.visit,
                "gate": stage.approval,
                "by": a.by,
            },
        )
        self.snapshot(stage.id, s.visit, "finish")
        if stage.approval and s.mode == Mode.MANUAL:
            default_reject, _ = rules.reject_target(self.table, stage, s.history, None)
            self.wait_for(
                PendingDecision(
                    id=self.next_decision_id(),
                    kind=DecisionKind.GATE,
                    stage=stage.id,
                    question=f"Approve '{stage.id}' and move on to '{target}'?",
                    summary=a.summary,
                    outputs=outputs,
                    proposed_next=target,
                    default_reject=default_reject,
                    requested_at=a.at,
                )
            )
            self.respond(
                True,
                f"'{stage.id}' is ready; waiting for the user to approve the move to '{target}'",
            )
            return
        decision = "approved automatically (auto mode)" if stage.approval else None
        if decision:
            self.snapshot(stage.id, s.visit, "approved")
        if a.by == "researcher":
            decision = "; ".join(filter(None, ["done by the researcher", decision]))
        self.record(stage.id, a.summary, outputs, decision, a.at)
        s.feedback = None
        self.enter(target, by="auto" if stage.approval else "finish", previous=stage.id, at=a.at)
        self.respond(True, f"'{stage.id}' finished; the project moved to '{s.stage}'")

    def revise(self, a: actions.Revise) -> None:
        """The reviewers send the paper back: no gate (layer 1 decided from their scores),
        the required changes as the next visit's feedback."""
        s = self.state
        if s.status != ProjectStatus.RUNNING or s.stage != a.stage:
            self.respond(False, f"the project is {s.status} at '{s.stage}', not at '{a.stage}'")
            return
        self.emit(
            EventType.STAGE_FINISH,
            f"{a.stage} finished; the reviewers send the paper back to {a.target}",
            a.stage,
            s.task_id,
            {
                "summary": a.summary,
                "outputs": [],
                "next": a.target,
                "visit": s.visit,
                "gate": False,
                "by": "reviewers",
            },
        )
        self.snapshot(a.stage, s.visit, "finish")  # the visit is over, as a finish ends one
        self.record(a.stage, a.summary, (), f"sent back to '{a.target}' by the reviewers", a.at)
        s.last_summary[a.stage] = a.summary
        s.feedback = a.feedback
        self.enter(a.target, by="revise", previous=a.stage, at=a.at)
        self.respond(True, f"'{a.stage}' sent the paper back; the project moved to '{s.stage}'")

    def ask_question(self, a: actions.Ask) -> None:
        s = self.state
        if s.status != ProjectStatus.RUNNING:
            raise ControllerError(f"cannot ask while the project is {s.status}")
        decision = PendingDecision(
            id=self.next_decision_id(),
            kind=DecisionKind.QUESTION,
            stage=s.stage,
            question=a.question.strip(),
            options=a.options,
            requested_at=a.at,
            permission=a.permission,
        )
        self.wait_for(decision)
        self.respond(True, f"asked {decision.id}: {decision.question}", decision.id)

    # ------------------------------------------------------------ human replies

    def reply(self, a: actions.Reply) -> None:
        s = self.state
        if a.decision_id and (done := s.answered(a.decision_id)):
            verdict = "approved" if done["approve"] else "rejected"
            self.respond(
                False,
                f"decision {a.decision_id} was already answered ({verdict} via "
                f"{done['source']}); nothing changed",
                a.decision_id,
            )
            return
        pending = s.pending
        if pending is None:
            raise ControllerError(
                f"nothing is waiting for a reply: the project is {s.status} at stage '{s.stage}'"
            )
        if pending.kind == DecisionKind.HANDOFF:
            raise ControllerError(handoff.not_a_reply(pending.stage))
        if a.decision_id and a.decision_id != pending.id:
            self.respond(
                False,
                f"this reply is for decision {a.decision_id}, but the pending "
                f"one is {pending.id}; nothing changed",
                a.decision_id,
            )
            return
        if pending.kind == DecisionKind.QUESTION:
            self.answer_question(pending, a)
        elif pending.kind == DecisionKind.BUDGET:
            budget.decide(self, pending, a)
        else:
            self.decide_gate(pending, a)

    def decide_gate(self, pending: PendingDecision, a: actions.Reply) -> None:
        s = self.state
        gate = self.table[pending.stage]
        if a.approve:
            target = pending.proposed_next or gate.next
        else:
            rejected_to, problem = rules.reject_target(self.table, gate, s.history, a.to_stage)
            if problem or rejected_to is None:
                raise ControllerError(problem or f"no stage to send a rejected '{gate.id}' to")
            target = rejected_to
        comment = a.comment
        verdict = "approved" if a.approve else f"rejected, back to '{target}'"
        note = f"{verdict} by the user via {a.source}" + (f" — “{comment}”" if comment else "")
        self.record(
            gate.id,
            pending.summary,
            pending.outputs,
            note,
            a.at,
            memory=MemoryKind.FINDING if a.approve else MemoryKind.LESSON,
        )
        s.decisions.append(
            {
                "id": pending.id,
                "kind": str(DecisionKind.GATE),
                "stage": gate.id,
                "approve": a.approve,
                "comment": comment,
                "to": target,
                "at": a.at,
                "source": str(a.source),
            }
        )
        s.pending, s.status = None, ProjectStatus.RUNNING
        s.feedback = (
            None
            if a.approve
            else (
                f"The reviewer rejected '{gate.id}'"
                + (f": {comment}" if comment else " without a comment")
                + "."
            )
        )
        self.emit(
            EventType.USER_DECISION,
            f"{gate.id} {verdict}" + (f": {comment}" if comment else ""),
            gate.id,
            s.task_id,
            {
                "id": pending.id,
                "approve": a.approve,
                "comment": comment,
                "to": target,
                "source": str(a.source),
            },
        )
        self.snapshot(gate.id, s.visit, "approved" if a.approve else "rejected")
        self.enter(target, by="approve" if a.approve else "reject", previous=gate.id, at=a.at)
        self.respond(
            True, f"{gate.id} {verdict}; the project is now at '{s.stage}' ({s.status})", pending.id
        )

    def answer_question(self, pending: PendingDecision, a: actions.Reply) -> None:
        s = self.state
        comment = a.comment
        answer = {
            "id": pending.id,
            "kind": str(DecisionKind.QUESTION),
            "stage": pending.stage,
            "question": pending.question,
            "approve": a.approve,
            "comment": comment,
            "to": None,
            "at": a.at,
            "source": str(a.source),
        }
        verdict = "yes" if a.approve else "no"
        self.record(
            pending.stage,
            f"Question: {pending.question}",
            (),
            f"answered {verdict} via {a.source}" + (f" — “{comment}”" if comment else ""),
            a.at,
            key=f"question:{pending.id}",
            memory=None,
        )
        s.decisions.append(answer)
        s.pending, s.status = None, ProjectStatus.RUNNING
        self.save()
        self.emit(
            EventType.USER_DECISION,
            f"{pending.question} → {verdict}" + (f": {comment}" if comment else ""),
            pending.stage,
            s.task_id,
            dict(answer),
        )
        heard = dict(answer)
        if pending.permission is not None:
            # which agent's request it answered, for layer 2 to hand its option over (not
            # kept in the answered decisions: an edit's texts would stay there for good)
            heard["permission"] = pending.permission.to_dict()
        self.effects.append(actions.NotifyAnswer(heard))
        self.respond(True, f"answered {pending.id}: {verdict}", pending.id, dict(answer))

    # ------------------------------------------------------------ run control

    def end(self, a: actions.End) -> None:
        s = self.state
        if s.status in FINAL_PROJECT_STATUSES:
            return
        s.status, s.reason = a.status, a.reason
        if a.status not in _GOES_ON:  # a stopped project keeps its question
            s.pending = None
        self.save()

    def reopen(self) -> None:
        s = self.state
        if refusal := budget.reopen_refusal(s, self.table):
            raise ControllerError(refusal)
        if s.status in _GOES_ON:  # the fault is gone, or the pause over: go on where it was
            s.status = ProjectStatus.WAITING_USER if s.pending else ProjectStatus.RUNNING
            s.reason = None
            self.save()
            return
        if s.status in (ProjectStatus.FAILED, ProjectStatus.CANCELLED) and s.stage != DONE:
            retried = (
                rules.retry_notice(s.stage, s.reason) if s.status == ProjectStatus.FAILED else None
            )
            s.status, s.reason = ProjectStatus.RUNNING, None
            self.save()
            if retried:  # the run loop starts the stage again with fresh workers
                self.emit(EventType.STAGE_RETRIED, retried, s.stage, s.task_id, {"visit": s.visit})
                self.respond(True, retried)
