"""StageSupervisor: layer 2's control loop around the supervisor agent, one stage at a time.

Layer-3 updates land in the inbox (`inbox`: as they come; in a replay, in the order the
recording took them in). The loop folds each into the worker's record (the update function),
passes it through the event filter, and queues the scheduling events that matter. When the
agent is idle it takes one event, runs one turn of its persistent session with that event as
its whole input, and reads back its one-line reply. Scheduled resumes fire by themselves;
silent workers raise `worker.stalled`. Everything the loop needs to pick up after a crash —
records, queued events, schedules — is in `.lightscientist/supervisor.json`.

The pieces live beside it: the pure rules in `decisions`, the update function and the event
filter in `updates`, the tools' backends in `backends`, the agent's turn in `agent`, the
restart in `recovery`, the saved state in `loop_state`, the updates' way in in `inbox`.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from langchain_core.language_models import BaseChatModel

from lightscientist_jupyter.errors import RuntimeLayerError, SupervisorError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerUpdate
from lightscientist_jupyter.supervisor import agent, decisions, handoff, lessons, prompts
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.inbox import Inbox
from lightscientist_jupyter.supervisor.jobs import JobPoller
from lightscientist_jupyter.supervisor.loop_state import (
    LoopState,
    SupervisedStage,
    save_loop_state,
)
from lightscientist_jupyter.supervisor.permissions import PermissionDesk
from lightscientist_jupyter.supervisor.recovery import recover
from lightscientist_jupyter.supervisor.review import ReviewRunner
from lightscientist_jupyter.supervisor.search import SearchRunner
from lightscientist_jupyter.supervisor.updates import SchedulingEvent, apply_update, filter_update
from lightscientist_jupyter.values.task import StageHost, StageResult, StageTask
from lightscientist_jupyter.vocab import EventType, SchedulingKind, StageOutcome, WorkerStatus
from lightscientist_jupyter.workspace import Workspace

TICK_S = 0.05
"""How long the loop waits for a layer-3 update when it has nothing else to do."""


class StageSupervisor:
    """Supervises every worker of the current stage for one project, a stage at a time.

    Args:
        workspace: the project workspace.
        model: the chat model of the supervisor agent and the workers.
        host: layer 1's tools (`finish_stage`, `request_user_decision`) and position.
        bus: the event bus.
        checkpointer: 'sqlite' (default) or 'memory' (see `ExecutionRuntime`).
        stall_after_s: a running worker silent this long raises `worker.stalled`.
        command_timeout: the default lifetime of a worker's shell command, in seconds.
        retries: retries of a failing model call (see `ExecutionRuntime`).
        retry_initial_delay: the first retry's delay, in seconds.
        record: record every model call (see `ExecutionRuntime`).
        shell_policy: the workers' sandbox, network and limits (see `ExecutionRuntime`).
    """

    def __init__(
        self,
        workspace: Workspace,
        model: BaseChatModel,
        host: StageHost,
        *,
        bus: EventBus | None = None,
        checkpointer: Any = "sqlite",
        stall_after_s: float = 300.0,
        command_timeout: float = 120.0,
        retries: int | None = None,
        retry_initial_delay: float = 1.0,
        record: bool = False,
        shell_policy: ShellPolicy | None = None,
        meter: UsageMeter | None = None,
    ):
        self.workspace = workspace
        self.host = host
        self.bus = bus or EventBus()
        self.stall_after_s = stall_after_s
        self.inbox = Inbox()
        self.runtime = ExecutionRuntime(
            workspace,
            model,
            on_update=self.inbox.put,
            bus=self.bus,
            checkpointer=checkpointer,
            command_timeout=command_timeout,
            retries=retries,
            retry_initial_delay=retry_initial_delay,
            record=record,
            shell_policy=shell_policy,
            meter=meter,
        )
        self.inbox.bind(self.runtime)
        self._lock = threading.RLock()
        self._stage: SupervisedStage | None = None
        self.control = WorkerControl(self._current, self.runtime, host, self.bus, workspace)
        """The agent's tool backends (one for every stage: the agent's session outlives one)."""
        self.jobs = JobPoller(self.runtime, self.bus)  # resumes workers whose jobs ended
        self.search = SearchRunner(host, self.control, self.runtime.jobs, workspace)
        """A search stage's nodes, run before the agent hears of the stage."""
        self.review = ReviewRunner(host, self.control)
        """A review stage's reviewers, run before the agent hears of the stage."""
        self.permissions = PermissionDesk(host, self.control)
        """Coding agents' permission requests, put to the researcher in manual mode."""

    @property
    def task(self) -> StageTask:
        return self._current().task

    def _current(self) -> SupervisedStage:
        if self._stage is None:
            raise SupervisorError("no stage is being supervised")
        return self._stage

    # ------------------------------------------------------------------ the loop

    def run_stage(self, task: StageTask, stop: threading.Event | None = None) -> StageResult:
        """Supervise `task` until layer 1 moves on, a gate waits, the stage fails, or `stop`."""
        with self._lock:
            stage = SupervisedStage(task, self.workspace.state_dir / "supervisor.json", self._lock)
            self._stage = stage
        control = self.control
        self.search.begin()
        if stage.fresh and task.search is None and task.review is None:
            stage.enqueue(
                SchedulingEvent(SchedulingKind.STAGE_STARTED, task.task_id, at=time.time())
            )
        elif not stage.fresh:
            recover(stage, self.runtime, control)
        idle_streak = 0
        calls_before = self._agent_tool_calls()
        while True:
            if stop is not None and stop.is_set():
                return StageResult(StageOutcome.STOPPED, "stopped on request")
            self._drain(stage)
            self._fire_due(stage, control)
            self.jobs.poll(stage, control)
            self.search.tick(stage)
            self.review.tick(stage)
            self._check_stalls(stage)
            host = self.host
            outcome = decisions.stage_outcome(
                task.task_id,
                project_status=host.status,
                project_task_id=host.task_id,
                pending_kind=host.pending_kind,
                last_finish=stage.state.last_finish,
            )
            if outcome is not None:
                handoff.release_if_taken(self, task.task_id)
                return outcome
            event = stage.take_event() if self.inbox.may_decide(stage) else None
            if event is not None and self.permissions.handled(stage, event):
                stage.decided()  # an agent's permission: asked of the researcher, or answered
                continue
            if event is None:
                # read before the loop's lock is taken: a reply in progress holds layer 1's
                # lock and then takes the loop's, to queue its `user_answered` event
                status = host.settled_status()
                with self._lock:
                    idle = decisions.is_idle(stage.state, status)
                if idle:
                    failure = decisions.idle_failure(
                        task.stage,
                        idle_streak,
                        stage.state.problem,
                        no_tool_calls=self._agent_tool_calls() == calls_before
                        and not any(r.progress.tool_calls for r in stage.state.records.values()),
                    )
                    if failure is not None:
                        return failure
                    counts = decisions.status_counts(stage.state.records.values())
                    stage.enqueue(
                        SchedulingEvent(
                            SchedulingKind.STAGE_IDLE,
                            task.task_id,
                            None,
                            {"workers": counts},
                            time.time(),
                        )
                    )
                    continue
                self.inbox.unstick(stage, status)
                update = self.inbox.next(stage, TICK_S)
                if update is not None:
                    self._absorb(stage, update)
                continue
            reply = self._decide(stage, control, event)
            failure = decisions.reply_failure(
                reply, task.stage, event.kind, stage.state.problem
            ) or decisions.attempts_failure(task.stage, stage.state.attempts, stage.state.problem)
            if failure is not None:
                return failure
            idle_streak = decisions.next_idle_streak(idle_streak, event.kind)

    def _agent_tool_calls(self) -> int:
        """The tool calls the supervisor agent has made so far (its session's counter)."""
        record = self.runtime.find(agent.SUPERVISOR_ID)
        return record.progress.tool_calls if record is not None else 0

    # ------------------------------------------------------------------ updates → events

    def _drain(self, stage: SupervisedStage) -> None:
        while (update := self.inbox.next(stage)) is not None:
            self._absorb(stage, update)

    def _absorb(self, stage: SupervisedStage, update: WorkerUpdate) -> None:
        if update.worker_id == agent.SUPERVISOR_ID:
            return
        with self._lock:
            before = stage.state.records.get(update.worker_id)
            if before is None:
                return  # a worker of an earlier stage
            after = apply_update(before, update)
            stage.state.records[update.worker_id] = after
            stage.state.stalled.discard(update.worker_id)  # a new silence starts now
            change = filter_update(before, after)
            if change is not None:  # what the agent is told changed: recorded, or replayed
                self.inbox.took(after)
            event = self.jobs.screen(stage, change)
            # a node's or a reviewer's end: the search's or the round's, not the agent's
            told = self.review.screen(stage, self.search.screen(stage, event))
            if event is not None:
                self._emit_about(
                    after,
                    EventType.WORKER_STATUS,
                    f"{after.id}: {before.status} → {after.status}",
                    {"from": str(before.status), "to": str(after.status)},
                )
            if told is not None:
                stage.enqueue(told)
            elif before.status != after.status:
                stage.save()

    def _decide(
        self, stage: SupervisedStage, control: WorkerControl, event: SchedulingEvent
    ) -> decisions.Reply:
        """One turn of the supervisor agent on one event; returns its one-line reply."""
        task = stage.task
        if decisions.counts_as_attempt(event.kind):
            stage.state.attempts += 1
        stage.state.problem = decisions.problem_of(event) or stage.state.problem
        workers = control.worker_summaries() if event.kind == SchedulingKind.WORKER_FINISHED else []
        message = prompts.event_message(event, task, max(1, stage.state.attempts), workers)
        self.bus.emit(
            EventType.SUPERVISOR_EVENT,
            f"{event.kind}" + (f" ({event.worker_id})" if event.worker_id else ""),
            stage=task.stage,
            task_id=task.task_id,
            worker_id=event.worker_id,
            data={"event": event.to_dict(), "input_chars": len(message)},
        )
        agent.run_turn(self.runtime, agent.agent_spec(control, message))
        after = self.runtime.get(agent.SUPERVISOR_ID)
        if after.held or after.status == WorkerStatus.RUNNING:  # a budget is spent, or the
            # turn was cut short (its storage went away, the run stops): decided on resume
            return decisions.Reply.CONTINUE  # (the event stays in progress, for `recover`)
        reply, text = decisions.parse_reply(self.runtime.get(agent.SUPERVISOR_ID))
        self.bus.emit(
            EventType.SUPERVISOR_DECISION,
            decisions.decision_line(reply, text),
            stage=task.stage,
            task_id=task.task_id,
            data={"reply": str(reply), "text": text[:500], "event": str(event.kind)},
        )
        stage.decided()
        return reply

    # ------------------------------------------------------------------ timers

    def _fire_due(self, stage: SupervisedStage, control: WorkerControl) -> None:
        with self._lock:
            due, later = decisions.split_due(stage.state.schedules, time.time())
            if not due:
                return
            stage.state.schedules = later
            stage.save()
        for item in due:
            record = stage.state.records.get(item["worker_id"])
            if record is None or not decisions.may_fire(record):
                continue
            self._emit_about(
                record,
                EventType.RESUME_FIRED,
                f"resuming {record.id}: {item['message'][:80]}",
                dict(item),
            )
            try:
                control.resume(record.id, None, item["message"])
            except RuntimeLayerError as exc:  # it finished or was cancelled meanwhile
                self._emit_about(
                    record,
                    EventType.SUPERVISOR_EVENT,
                    f"scheduled resume of {record.id} skipped: {exc}",
                )

    def _emit_about(
        self,
        record: WorkerRecord,
        type: EventType,
        message: str,
        data: dict[str, Any] | None = None,
    ) -> None:
        self.bus.emit(
            type,
            message,
            worker_id=record.id,
            stage=record.stage,
            task_id=record.task_id,
            data=data,
        )

    def _check_stalls(self, stage: SupervisedStage) -> None:
        now = time.time()
        with self._lock:
            state = stage.state
            for wid, record in list(state.records.items()):
                if decisions.is_stalled(
                    record, now, self.stall_after_s, reported=wid in state.stalled
                ):
                    state.stalled.add(wid)
                    silent = now - record.updated_at
                    self._emit_about(
                        record,
                        EventType.WORKER_STALLED,
                        f"{wid} silent for {silent:.0f} s",
                        {"silent_s": round(silent, 1)},
                    )
                    stage.enqueue(
                        SchedulingEvent(
                            SchedulingKind.WORKER_STALLED,
                            record.task_id or "",
                            wid,
                            {"silent_s": round(silent, 1), "label": record.label},
                            now,
                        )
                    )

    # ------------------------------------------------------------------ layer 1's side

    def on_user_answer(self, answer: dict[str, Any]) -> None:
        """Layer 1 calls this when the user answers a project-level question."""
        stage = self._stage
        if stage is not None:
            stage.enqueue(
                SchedulingEvent(
                    SchedulingKind.USER_ANSWERED,
                    stage.task.task_id,
                    None,
                    {
                        "question": answer.get("question"),
                        "permission": answer.get("permission"),
                        "approve": answer.get("approve"),
                        "comment": answer.get("comment"),
                    },
                    time.time(),
                )
            )

    def restart_stage(self, task_id: str) -> None:
        """Forget what layer 2 knew of `task_id` (workers, events, attempts): the next
        `run_stage` of it starts from the stage's start with fresh workers."""
        with self._lock:
            save_loop_state(self.workspace.state_dir / "supervisor.json", LoopState(task_id))

    def records(self) -> list[WorkerRecord]:
        """Layer 2's records of the current stage's workers."""
        with self._lock:
            return list(self._stage.state.records.values()) if self._stage else []

    def cancel_all(self, timeout: float = 10.0) -> None:
        """Cancel every worker session alive in this process (each finalizes or is stopped)."""
        with self._lock:  # after layer 1 stopped the project: no worker starts past this
            live = self.runtime.live_workers()
        self.runtime.jobs.stop_all()  # the project's jobs end with it
        for worker_id in live:
            if worker_id != agent.SUPERVISOR_ID:
                try:
                    self.runtime.cancel(worker_id, timeout=timeout)
                except RuntimeLayerError:
                    pass  # it finished meanwhile

    def draw_lessons(
        self,
        goal: str,
        why: str,
        stop: threading.Event,
        *,
        memory_on: bool = True,
        reason: str = "",
    ) -> lessons.Drawn:
        """The lessons of a rejected gate (`reason`) or of the project's end, drawn by a
        worker (`lessons`)."""
        text = self.control.read_process()
        return lessons.draw_lessons(
            self.runtime, goal, why, text, stop, memory_on=memory_on, reason=reason
        )

    def close(self) -> None:
        self.runtime.close()
