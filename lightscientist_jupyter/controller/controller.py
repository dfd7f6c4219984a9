"""ResearchController: layer 1, the deterministic stage state machine.

It never calls a model. Layer 2 reaches it through exactly two tools, `finish_stage` and
`request_user_decision`; humans reach it through `reply` (directly, or via inbox files). Every
change is written to `state.json` by atomic replace before anyone is told, and every finished
stage leaves one entry in `PROCESS.md`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from lightscientist_jupyter.controller import inbox, process_log, rules
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.state import (
    FINAL_STATUSES,
    MODES,
    PendingDecision,
    ProjectState,
    load_state,
    save_state,
)
from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.supervisor.task import StageTask
from lightscientist_jupyter.workspace import Workspace


@dataclasses.dataclass(frozen=True)
class FinishOutcome:
    """The answer to `finish_stage`: accepted or refused, with a message a model can act on."""

    accepted: bool
    message: str
    status: str
    stage: str


@dataclasses.dataclass(frozen=True)
class ReplyOutcome:
    """The answer to a reply: whether it changed anything, and what."""

    applied: bool
    message: str
    decision_id: str | None = None
    answer: dict[str, Any] | None = None


class ResearchController:
    """Runs one project's stage machine over a workspace. Thread-safe."""

    def __init__(self, workspace: Workspace, table: StageTable, state: ProjectState,
                 bus: EventBus | None = None):
        self.workspace = workspace
        self.table = table
        self._state = state
        self.bus = bus or EventBus()
        self._lock = threading.RLock()
        self.changed = threading.Condition(self._lock)
        """Notified after every change of state."""
        self._answer_listeners: list[Callable[[dict[str, Any]], None]] = []

    # ---------------------------------------------------------------- construction

    @classmethod
    def create(cls, workspace: Workspace, goal: str, *, mode: str = "manual",
               table: StageTable | None = None, start_stage: str | None = None,
               bus: EventBus | None = None,
               settings: dict[str, Any] | None = None) -> ResearchController:
        """Start a new project in `workspace` (which must not hold one yet)."""
        goal = " ".join(goal.split())
        if not goal:
            raise ControllerError("the research goal is empty; say what the project should find out")
        if mode not in MODES:
            raise ControllerError(f"mode '{mode}' is not one of {', '.join(MODES)}")
        if workspace.exists():
            raise ControllerError(f"{workspace.root} already holds a project "
                                  f"({workspace.state_file}); continue it with "
                                  "`lightscientist resume`, or pick another --workspace")
        table = table or load_table()
        start = start_stage or table.start
        if start not in table:
            raise ControllerError(f"--stage '{start}' is not a stage of {table.path}; choose one "
                                  f"of {', '.join(table.ids())}")
        state = ProjectState(goal=goal, mode=mode, stage=start, stages_file=str(table.path),
                             settings={k: v for k, v in (settings or {}).items() if v})
        controller = cls(workspace, table, state, bus)
        workspace.state_dir.mkdir(parents=True, exist_ok=True)
        process_log.ensure_header(workspace.process_md, goal, str(table.path), mode,
                                  state.created_at)
        with controller._lock:
            controller._enter(start, by="start", previous=None)
        return controller

    @classmethod
    def open(cls, workspace: Workspace, *, table: StageTable | None = None,
             bus: EventBus | None = None) -> ResearchController:
        """Reload a project from its `state.json` (and the stage table it names)."""
        state = load_state(workspace.state_file)
        table = table or load_table(state.stages_file)
        if state.stage != DONE and state.stage not in table:
            raise ControllerError(f"{workspace.state_file} is at stage '{state.stage}', which "
                                  f"{table.path} no longer defines")
        return cls(workspace, table, state, bus)

    # ---------------------------------------------------------------- reading

    @property
    def state(self) -> ProjectState:
        """A copy of the current state."""
        with self._lock:
            return ProjectState.from_dict(self._state.to_dict())

    @property
    def status(self) -> str:
        return self._state.status

    @property
    def stage(self) -> str:
        return self._state.stage

    @property
    def task_id(self) -> str:
        """`<stage>#<visit>` of the stage being run now."""
        return self._state.task_id

    @property
    def pending_kind(self) -> str | None:
        pending = self._state.pending
        return pending.kind if pending else None

    def task(self) -> StageTask:
        """The `StageTask` for the current stage, to hand down to layer 2."""
        with self._lock:
            s = self._state
            if s.stage == DONE:
                raise ControllerError("the project is done; there is no stage to run")
            stage = self.table[s.stage]
            return StageTask(goal=s.goal, stage=stage.id, skill_path=str(stage.skill),
                             outputs=stage.outputs, default_next=stage.next,
                             allowed_next=stage.allowed, workspace=str(self.workspace.root),
                             process_md=str(self.workspace.process_md), visit=s.visit,
                             feedback=s.feedback, task_id=s.task_id)

    def on_answer(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call `listener(decision)` when a project-level question is answered."""
        self._answer_listeners.append(listener)

    # ---------------------------------------------------------------- layer-2 tools

    def finish_stage(self, summary: str, outputs: Sequence[str] = (),
                     next_stage: str | None = None) -> FinishOutcome:
        """Finish the current stage and move on, or refuse with a reason to act on."""
        with self._lock:
            s = self._state
            if s.status != "running":
                return self._refuse(f"the project is {s.status}, not running; nothing was finished",
                                    emit=False)
            stage = self.table[s.stage]
            target = next_stage or stage.next
            reason = rules.finish_refusal(stage, target,
                                          rules.missing_outputs(stage, self.workspace.root))
            if reason:
                return self._refuse(reason)
            outputs = tuple(dict.fromkeys([*stage.outputs, *(o for o in outputs if o)]))
            s.last_summary[stage.id] = summary
            self.bus.emit("stage.finish", f"{stage.id} finished; suggests {target}",
                          stage=stage.id, task_id=s.task_id,
                          data={"summary": summary, "outputs": list(outputs), "next": target,
                                "visit": s.visit, "gate": stage.approval})
            if stage.approval and s.mode == "manual":
                default_reject, _ = rules.reject_target(self.table, stage, s.history, None)
                self._ask(PendingDecision(
                    id=self._next_decision_id(), kind="gate", stage=stage.id,
                    question=f"Approve '{stage.id}' and move on to '{target}'?",
                    summary=summary, outputs=outputs, proposed_next=target,
                    default_reject=default_reject, requested_at=time.time()))
                return FinishOutcome(True, f"'{stage.id}' is ready; waiting for the user to "
                                     f"approve the move to '{target}'", s.status, s.stage)
            decision = "approved automatically (auto mode)" if stage.approval else None
            self._record_entry(stage.id, summary, outputs, decision)
            s.feedback = None
            self._enter(target, by="auto" if stage.approval else "finish", previous=stage.id)
            return FinishOutcome(True, f"'{stage.id}' finished; the project moved to '{s.stage}'",
                                 s.status, s.stage)

    def request_user_decision(self, question: str, options: Sequence[str] = ()) -> str:
        """Ask the human a project-level question; returns the decision id."""
        with self._lock:
            s = self._state
            if s.status != "running":
                raise ControllerError(f"cannot ask while the project is {s.status}")
            decision = PendingDecision(id=self._next_decision_id(), kind="question",
                                       stage=s.stage, question=question.strip(),
                                       options=tuple(options), requested_at=time.time())
            self._ask(decision)
            return decision.id

    # ---------------------------------------------------------------- human replies

    def reply(self, approve: bool, comment: str = "", to_stage: str | None = None, *,
              decision_id: str | None = None, source: str = "api") -> ReplyOutcome:
        """Answer the pending decision: exactly one transition per decision.

        Raises `ControllerError` when nothing is pending or `to_stage` is not a stage; a reply
        to a decision already answered changes nothing and says so.
        """
        with self._lock:
            s = self._state
            if decision_id and (done := s.answered(decision_id)):
                verdict = "approved" if done["approve"] else "rejected"
                return ReplyOutcome(False, f"decision {decision_id} was already answered "
                                    f"({verdict} via {done['source']}); nothing changed",
                                    decision_id)
            pending = s.pending
            if pending is None:
                raise ControllerError(f"nothing is waiting for a reply: the project is {s.status} "
                                      f"at stage '{s.stage}'")
            if decision_id and decision_id != pending.id:
                return ReplyOutcome(False, f"this reply is for decision {decision_id}, but the "
                                    f"pending one is {pending.id}; nothing changed", decision_id)
            if pending.kind == "question":
                return self._answer_question(pending, approve, comment, source)
            return self._decide_gate(pending, approve, comment, to_stage, source)

    def poll_inbox(self) -> list[ReplyOutcome]:
        """Apply the replies queued in `.lightscientist/inbox/`, oldest first."""
        outcomes = []
        for path, raw in inbox.queued_replies(self.workspace):
            if raw is None:
                path.rename(path.with_suffix(".invalid"))
                continue
            try:
                outcome = self.reply(bool(raw["approve"]), str(raw.get("comment") or ""),
                                     raw.get("to_stage"), decision_id=raw.get("decision_id"),
                                     source=str(raw.get("source") or "inbox"))
            except ControllerError as exc:
                outcome = ReplyOutcome(False, str(exc), raw.get("decision_id"))
            path.unlink(missing_ok=True)
            outcomes.append(outcome)
        return outcomes

    # ---------------------------------------------------------------- run control

    def fail(self, reason: str) -> None:
        self._end("failed", reason)

    def cancel(self, reason: str = "cancelled by the user") -> None:
        self._end("cancelled", reason)

    def reopen(self) -> None:
        """Set a failed or cancelled project running again at its current stage."""
        with self._lock:
            s = self._state
            if s.status in ("failed", "cancelled") and s.stage != DONE:
                s.status, s.reason = "running", None
                self._save()

    def wait_change(self, timeout: float | None = None) -> None:
        with self.changed:
            self.changed.wait(timeout)

    # ---------------------------------------------------------------- internals

    def _end(self, status: str, reason: str) -> None:
        with self._lock:
            s = self._state
            if s.status in FINAL_STATUSES:
                return
            s.status, s.reason, s.pending = status, reason, None
            self._save()

    def _refuse(self, reason: str, *, emit: bool = True) -> FinishOutcome:
        s = self._state
        if emit:
            self.bus.emit("stage.rejected", f"finish of {s.stage} refused: {reason}",
                          stage=s.stage, task_id=s.task_id, data={"reason": reason})
        return FinishOutcome(False, reason, s.status, s.stage)

    def _next_decision_id(self) -> str:
        self._state.decision_counter += 1
        return f"d{self._state.decision_counter}"

    def _ask(self, decision: PendingDecision) -> None:
        s = self._state
        s.pending, s.status = decision, "waiting_user"
        self._save()
        self.bus.emit("user.decision_requested", decision.question, stage=decision.stage,
                      task_id=s.task_id, data=decision.to_dict())

    def _record_entry(self, stage: str, summary: str, outputs: Sequence[str],
                      decision: str | None, key: str | None = None) -> None:
        entry = process_log.ProcessEntry(key=key or self._state.task_id, stage=stage,
                                         at=time.time(), summary=summary,
                                         outputs=tuple(outputs), decision=decision)
        process_log.append_entry(self.workspace.process_md, entry)

    def _enter(self, stage_id: str, *, by: str, previous: str | None) -> None:
        s = self._state
        s.history.append({"from": previous, "to": stage_id, "by": by, "at": time.time()})
        s.stage = stage_id
        if stage_id == DONE:
            s.status = "done"
            self._save()
            self.bus.emit("stage.transition", f"{previous} → done: the project is complete",
                          stage=previous, data={"from": previous, "to": DONE, "by": by})
            return
        s.visits[stage_id] = s.visits.get(stage_id, 0) + 1
        stage = self.table[stage_id]
        limit = rules.visit_limit_reason(stage, s.visits[stage_id], self.table.path)
        if limit:
            s.status, s.reason = "failed", limit
        self._save()
        if previous is not None:
            self.bus.emit("stage.transition", f"{previous} → {stage_id}", stage=stage_id,
                          task_id=s.task_id, data={"from": previous, "to": stage_id, "by": by})
        if limit:
            self.bus.emit("stage.rejected", limit, stage=stage_id, task_id=s.task_id,
                          data={"reason": limit})
            return
        self.bus.emit("stage.start", f"{stage_id} (visit {s.visits[stage_id]})", stage=stage_id,
                      task_id=s.task_id, data={"visit": s.visits[stage_id],
                                               "skill": str(stage.skill),
                                               "outputs": list(stage.outputs),
                                               "gate": stage.approval})

    def _decide_gate(self, pending: PendingDecision, approve: bool, comment: str,
                     to_stage: str | None, source: str) -> ReplyOutcome:
        s = self._state
        gate = self.table[pending.stage]
        if approve:
            target = pending.proposed_next or gate.next
        else:
            target, problem = rules.reject_target(self.table, gate, s.history, to_stage)
            if problem:
                raise ControllerError(problem)
        verdict = "approved" if approve else f"rejected, back to '{target}'"
        note = f"{verdict} by the user via {source}" + (f" — “{comment}”" if comment else "")
        self._record_entry(gate.id, pending.summary, pending.outputs, note)
        s.decisions.append({"id": pending.id, "kind": "gate", "stage": gate.id,
                            "approve": approve, "comment": comment, "to": target,
                            "at": time.time(), "source": source})
        s.pending, s.status = None, "running"
        s.feedback = None if approve else (
            f"The reviewer rejected '{gate.id}'" + (f": {comment}" if comment else
                                                     " without a comment") + ".")
        self.bus.emit("user.decision", f"{gate.id} {verdict}" + (f": {comment}" if comment else ""),
                      stage=gate.id, task_id=s.task_id,
                      data={"id": pending.id, "approve": approve, "comment": comment,
                            "to": target, "source": source})
        self._enter(target, by="approve" if approve else "reject", previous=gate.id)
        return ReplyOutcome(True, f"{gate.id} {verdict}; the project is now at '{s.stage}' "
                            f"({s.status})", pending.id)

    def _answer_question(self, pending: PendingDecision, approve: bool, comment: str,
                         source: str) -> ReplyOutcome:
        s = self._state
        answer = {"id": pending.id, "kind": "question", "stage": pending.stage,
                  "question": pending.question, "approve": approve, "comment": comment,
                  "to": None, "at": time.time(), "source": source}
        verdict = "yes" if approve else "no"
        self._record_entry(pending.stage, f"Question: {pending.question}",
                           (), f"answered {verdict} via {source}"
                           + (f" — “{comment}”" if comment else ""), key=f"question:{pending.id}")
        s.decisions.append(answer)
        s.pending, s.status = None, "running"
        self._save()
        self.bus.emit("user.decision", f"{pending.question} → {verdict}"
                      + (f": {comment}" if comment else ""), stage=pending.stage,
                      task_id=s.task_id, data=answer)
        for listener in self._answer_listeners:
            listener(answer)
        return ReplyOutcome(True, f"answered {pending.id}: {verdict}", pending.id, answer)

    def _save(self) -> None:
        save_state(self.workspace.state_file, self._state)
        self.changed.notify_all()
