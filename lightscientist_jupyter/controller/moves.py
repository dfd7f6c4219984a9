"""The moves every transition of `controller.machine` is made of.

`Moves` holds the state being changed and the effects collected so far, and offers the small
steps the handlers compose: emit an event, save, answer the caller, append a `PROCESS.md`
entry, wait for a decision, enter a stage. It reads nothing but the state and the table it
was given, so it stays as pure as `step` itself.
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.controller import actions, rules
from lightscientist_jupyter.controller.actions import Effect
from lightscientist_jupyter.controller.process_log import ProcessEntry, clip_summary
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.values.usage import usage_line
from lightscientist_jupyter.vocab import EventType, MemoryKind, ProjectStatus

GOAL_CHARS = 300
"""How much of the goal a memory entry repeats (what a later project's goal is matched to)."""


def memory_text(
    stage: str, goal: str, summary: str, decision: str | None, outputs: tuple[str, ...]
) -> str:
    """A stage visit's entry as the user's memory keeps it: the stage and the project's goal
    (so a later project with a like goal finds it), the summary, the decision, the outputs."""
    short_goal = goal if len(goal) <= GOAL_CHARS else goal[: GOAL_CHARS - 1] + "…"
    lines = [f"{stage} — goal: {short_goal}", *clip_summary(summary)]
    if decision:
        lines.append(f"Decision: {decision}")
    if outputs:
        lines.append("Outputs: " + ", ".join(outputs))
    return "\n".join(lines)


class Moves:
    """One step in progress: the state being changed and the effects collected so far."""

    def __init__(self, state: ProjectState, table: StageTable):
        self.state = state
        self.table = table
        self.effects: list[Effect] = []

    def emit(
        self,
        type: EventType,
        message: str,
        stage: str | None,
        task_id: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        self.effects.append(actions.Emit(type, message, stage, task_id, data or {}))

    def save(self, *, soon: bool = False) -> None:
        self.effects.append(actions.SaveState(soon))

    def respond(
        self,
        ok: bool,
        message: str,
        decision_id: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> None:
        self.effects.append(actions.Respond(ok, message, decision_id, answer))

    def record(
        self,
        stage: str,
        summary: str,
        outputs: tuple[str, ...],
        decision: str | None,
        at: float,
        key: str | None = None,
        memory: MemoryKind | None = MemoryKind.FINDING,
    ) -> None:
        """Append the `PROCESS.md` entry of `stage`'s visit, and file it in the user's
        memory as `memory` (None: not filed; a question's answer is the project's alone)."""
        if memory is not None:
            entry_key = key or self.state.task_id
            self.effects.append(
                actions.FileMemory(
                    memory,
                    f"{memory}:{entry_key}",
                    stage,
                    self.state.visits.get(stage, 0),
                    memory_text(stage, self.state.goal, summary, decision, outputs),
                )
            )
        self.effects.append(
            actions.AppendProcess(
                ProcessEntry(
                    key=key or self.state.task_id,
                    stage=stage,
                    at=at,
                    summary=summary,
                    outputs=outputs,
                    decision=decision,
                    usage=usage_line(
                        (self.state.usage.get("visits") or {}).get(key or self.state.task_id)
                    ),
                )
            )
        )

    # ------------------------------------------------------------ shared moves

    def next_decision_id(self) -> str:
        self.state.decision_counter += 1
        return f"d{self.state.decision_counter}"

    def wait_for(self, decision: PendingDecision) -> None:
        """Make `decision` the pending one: the project waits for the user."""
        s = self.state
        s.pending, s.status = decision, ProjectStatus.WAITING_USER
        self.save()
        self.emit(
            EventType.USER_DECISION_REQUESTED,
            decision.question,
            decision.stage,
            s.task_id,
            decision.to_dict(),
        )

    def enter(self, stage_id: str, *, by: str, previous: str | None, at: float) -> None:
        """Move to `stage_id` (or `done`); fails the project past the stage's `max_visits`."""
        s = self.state
        s.history.append({"from": previous, "to": stage_id, "by": by, "at": at})
        s.stage = stage_id
        if stage_id == DONE:
            s.status = ProjectStatus.DONE
            self.save()
            self.emit(
                EventType.STAGE_TRANSITION,
                f"{previous} → done: the project is complete",
                previous,
                data={"from": previous, "to": DONE, "by": by},
            )
            return
        s.visits[stage_id] = s.visits.get(stage_id, 0) + 1
        stage = self.table[stage_id]
        limit = rules.visit_limit_reason(stage, s.visits[stage_id], self.table.path)
        if limit:
            s.status, s.reason = ProjectStatus.FAILED, limit
        self.save()
        if previous is not None:
            self.emit(
                EventType.STAGE_TRANSITION,
                f"{previous} → {stage_id}",
                stage_id,
                s.task_id,
                {"from": previous, "to": stage_id, "by": by},
            )
        if limit:
            self.emit(EventType.STAGE_REJECTED, limit, stage_id, s.task_id, {"reason": limit})
            return
        self.emit(
            EventType.STAGE_START,
            f"{stage_id} (visit {s.visits[stage_id]})",
            stage_id,
            s.task_id,
            {
                "visit": s.visits[stage_id],
                "skill": str(stage.skill),
                "outputs": list(stage.outputs),
                "gate": stage.approval,
            },
        )
        self.snapshot(stage_id, s.visits[stage_id], "start")

    def snapshot(self, stage: str, visit: int, event: str) -> None:
        self.effects.append(actions.TakeSnapshot(stage, visit, event))
