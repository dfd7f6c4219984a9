"""RuntimeSupervisor: layer 2's control loop around the supervisor agent.

Layer-3 updates land in a raw queue. The loop folds each into the worker's record (the
update function), passes it through the event filter, and queues the scheduling events that
matter. When the agent is idle it takes one event, runs one turn of its persistent session
with that event as its whole input, and reads back its one-line reply. Scheduled resumes fire
by themselves; silent workers raise `worker.stalled`. Everything the loop needs to pick up
after a crash — records, queued events, schedules — is in `.lightscientist/supervisor.json`.
"""

from __future__ import annotations

import dataclasses
import queue
import shutil
import threading
import time
from typing import Any

from langchain_core.language_models import BaseChatModel

from lightscientist_jupyter.errors import RuntimeLayerError, SupervisorError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.types import FINAL_STATES, WorkerSpec, WorkerUpdate
from lightscientist_jupyter.supervisor import prompts
from lightscientist_jupyter.supervisor.records import (
    SchedulingEvent,
    WorkerRecord,
    apply_update,
    filter_update,
    stalled,
)
from lightscientist_jupyter.supervisor.loop_state import (
    LoopState,
    load_loop_state,
    save_loop_state,
)
from lightscientist_jupyter.supervisor.task import StageHost, StageResult, StageTask
from lightscientist_jupyter.supervisor.tools import supervisor_tools
from lightscientist_jupyter.workspace import Workspace

SUPERVISOR_ID = "supervisor"
MAX_IDLE_DECISIONS = 3
"""Consecutive `stage_idle` decisions that leave nothing running before the stage fails."""
TICK_S = 0.05


class RuntimeSupervisor:
    """Supervises every worker of the current stage for one project.

    Args:
        workspace: the project workspace.
        model: the chat model of the supervisor agent and the workers.
        host: layer 1's tools (`finish_stage`, `request_user_decision`) and position.
        bus: the event bus.
        checkpointer: 'sqlite' (default) or 'memory' (see `ExecutionRuntime`).
        stall_after_s: a running worker silent this long raises `worker.stalled`.
    """

    def __init__(self, workspace: Workspace, model: BaseChatModel, host: StageHost, *,
                 bus: EventBus | None = None, checkpointer: Any = "sqlite",
                 stall_after_s: float = 300.0, command_timeout: float = 120.0,
                 retries: int | None = None, retry_initial_delay: float = 1.0):
        self.workspace = workspace
        self.host = host
        self.bus = bus or EventBus()
        self.stall_after_s = stall_after_s
        self._raw: queue.Queue[WorkerUpdate] = queue.Queue()
        self.runtime = ExecutionRuntime(workspace, model, on_update=self._raw.put, bus=self.bus,
                                        checkpointer=checkpointer,
                                        command_timeout=command_timeout, retries=retries,
                                        retry_initial_delay=retry_initial_delay)
        self._lock = threading.RLock()
        self._task: StageTask | None = None
        self._state: LoopState | None = None

    # ------------------------------------------------------------------ the loop

    @property
    def task(self) -> StageTask:
        if self._task is None:
            raise SupervisorError("no stage is being supervised")
        return self._task

    def run_stage(self, task: StageTask, stop: threading.Event | None = None) -> StageResult:
        """Supervise `task` until layer 1 moves on, a gate waits, the stage fails, or `stop`."""
        with self._lock:
            self._task = task
            self._state = self._load(task)
        if not self._state.records and not self._state.queue and self._state.in_progress is None:
            self._enqueue(SchedulingEvent("stage_started", task.task_id, at=time.time()))
        else:
            self._recover()
        idle_streak = 0
        while True:
            if stop is not None and stop.is_set():
                return StageResult("stopped", "stopped on request")
            self._drain()
            self._fire_due()
            self._check_stalls()
            outcome = self._stage_outcome(task)
            if outcome is not None:
                return outcome
            event = self._next_event()
            if event is None and self._idle():
                if idle_streak >= MAX_IDLE_DECISIONS:
                    return StageResult("failed", f"the supervisor left {task.stage} with no "
                                       f"worker running {idle_streak} times in a row")
                self._enqueue(SchedulingEvent("stage_idle", task.task_id, None,
                                              {"workers": self._status_counts()}, time.time()))
                continue
            if event is None:
                try:
                    self._absorb(self._raw.get(timeout=TICK_S))
                except queue.Empty:
                    pass
                continue
            reply = self._decide(event)
            if reply == "failed":
                return StageResult("failed", f"the supervisor gave up on {task.stage} "
                                   f"(after event {event.kind})")
            idle_streak = idle_streak + 1 if event.kind == "stage_idle" else 0

    def _idle(self) -> bool:
        """Nothing will happen by itself: no event queued, no worker running, no resume
        scheduled, no question waiting for the user (the agent must act, or the stage stalls)."""
        with self._lock:
            state = self._state
            if state.queue or state.schedules or self.host.status == "waiting_user":
                return False
            return not any(r.status == "running" for r in state.records.values())

    def _status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self._state.records.values():
            counts[record.status] = counts.get(record.status, 0) + 1
        return counts

    def _stage_outcome(self, task: StageTask) -> StageResult | None:
        host = self.host
        if host.status in ("done", "failed", "cancelled") or host.task_id != task.task_id:
            finish = (self._state.last_finish if self._state else None) or {}
            return StageResult("completed", finish.get("summary", ""),
                               tuple(finish.get("outputs", ())), finish.get("next_stage"))
        if host.status == "waiting_user" and host.pending_kind == "gate":
            return StageResult("waiting_user", "waiting for the user's decision at the gate")
        return None

    # ------------------------------------------------------------------ updates → events

    def _drain(self) -> None:
        while True:
            try:
                self._absorb(self._raw.get_nowait())
            except queue.Empty:
                return

    def _absorb(self, update: WorkerUpdate) -> None:
        if update.worker_id == SUPERVISOR_ID:
            return
        with self._lock:
            state = self._state
            before = state.records.get(update.worker_id) if state else None
            if before is None:
                return  # a worker of an earlier stage
            after = apply_update(before, update)
            state.records[update.worker_id] = after
            event = filter_update(before, after)
            if event is not None:
                self.bus.emit("worker.status", f"{after.worker_id}: {before.status} → "
                              f"{after.status}", worker_id=after.worker_id, stage=after.stage,
                              task_id=after.task_id, data={"from": before.status,
                                                           "to": after.status})
                self._enqueue(event)
            elif before.status != after.status:
                self._save()

    def _enqueue(self, event: SchedulingEvent) -> None:
        with self._lock:
            self._state.queue.append(event)
            self._save()

    def _next_event(self) -> SchedulingEvent | None:
        with self._lock:
            if not self._state.queue:
                return None
            event = self._state.queue.pop(0)
            self._state.in_progress = event
            self._save()
            return event

    def _decide(self, event: SchedulingEvent) -> str:
        """One turn of the supervisor agent on one event; returns its one-line reply."""
        task = self.task
        if event.kind in ("worker_failed", "finish_refused"):
            self._state.attempts += 1
        message = prompts.event_message(event, task, max(1, self._state.attempts))
        self.bus.emit("supervisor.event", f"{event.kind}" + (f" ({event.worker_id})"
                                                             if event.worker_id else ""),
                      stage=task.stage, task_id=task.task_id, worker_id=event.worker_id,
                      data={"event": event.to_dict(), "input_chars": len(message)})
        self._run_agent(message)
        record = self.runtime.get(SUPERVISOR_ID)
        result = record.get("result") or {}
        if record.get("status") == "failed":
            reply = "failed"
            text = record.get("error") or "the supervisor agent failed"
        else:
            text = str(result.get("text") or "").strip()
            words = text.lower().split()
            reply = words[0].strip(".:;!") if words else "continue"
            if reply not in ("done", "failed", "continue"):
                reply = "continue"
        self.bus.emit("supervisor.decision", f"{reply}" + (f" — {text[:120]}" if text and
                                                            text.lower() != reply else ""),
                      stage=task.stage, task_id=task.task_id,
                      data={"reply": reply, "text": text[:500], "event": event.kind})
        with self._lock:
            self._state.in_progress = None
            self._save()
        return reply

    def _run_agent(self, message: str) -> None:
        spec = WorkerSpec(message=message, role="supervisor", worker_id=SUPERVISOR_ID,
                          system_prompt=prompts.SUPERVISOR_PROMPT,
                          extra_tools=supervisor_tools(self), file_tools=False,
                          max_input_messages=True, stage=self.task.stage,
                          task_id=self.task.task_id)
        record = _safe_get(self.runtime, SUPERVISOR_ID)
        stale = (record is not None and record.get("status") == "running"
                 and not self.runtime.is_active(SUPERVISOR_ID))
        if record is None or stale:
            # first decision, or one an earlier crash cut short in another stage: a new
            # thread, so no half-done tool call of that stage is replayed into this one
            self.runtime.start(spec)
        else:
            session = self.runtime.attach(SUPERVISOR_ID, spec)
            session.record["stage"], session.record["task_id"] = spec.stage, spec.task_id
            if session.status == "failed":
                session.record["status"] = "background"  # a new decision, a new chance
            self.runtime.resume(SUPERVISOR_ID, message=message, spec=spec)
        self.runtime.wait(SUPERVISOR_ID)

    # ------------------------------------------------------------------ timers

    def _fire_due(self) -> None:
        now = time.time()
        with self._lock:
            due = [s for s in self._state.schedules if s["due"] <= now]
            if not due:
                return
            self._state.schedules = [s for s in self._state.schedules if s["due"] > now]
            self._save()
        for item in due:
            record = self._state.records.get(item["worker_id"])
            if record is None or record.status in FINAL_STATES or record.status == "running":
                continue
            self.bus.emit("resume.fired", f"resuming {item['worker_id']}: {item['message'][:80]}",
                          worker_id=item["worker_id"], stage=record.stage,
                          task_id=record.task_id, data=item)
            try:
                self._resume(item["worker_id"], None, item["message"])
            except RuntimeLayerError as exc:  # it finished or was cancelled meanwhile
                self.bus.emit("supervisor.event", f"scheduled resume of {item['worker_id']} "
                              f"skipped: {exc}", worker_id=item["worker_id"],
                              stage=record.stage, task_id=record.task_id)

    def _check_stalls(self) -> None:
        now = time.time()
        with self._lock:
            for wid, record in list(self._state.records.items()):
                if stalled(record, now, self.stall_after_s):
                    self._state.records[wid] = dataclasses.replace(record, stalled=True)
                    silent = now - record.last_update
                    self.bus.emit("worker.stalled", f"{wid} silent for {silent:.0f} s",
                                  worker_id=wid, stage=record.stage, task_id=record.task_id,
                                  data={"silent_s": round(silent, 1)})
                    self._enqueue(SchedulingEvent("worker_stalled", record.task_id, wid,
                                                  {"silent_s": round(silent, 1),
                                                   "label": record.label}, now))

    # ------------------------------------------------------------------ tool backends

    def start_worker(self, instructions: str = "", label: str = "",
                     call_id: str | None = None) -> str:
        """Start a worker on the current stage; a replay of the same tool call (after a crash
        cut the supervisor's turn short) returns the worker the first call started."""
        task = self.task
        with self._lock:
            known = self._state.started.get(call_id) if call_id else None
        if known is not None and _safe_get(self.runtime, known) is not None:
            self._revive(known)
            return known
        skill = self._copy_skill(task)
        digest = prompts.process_digest(self._read_process())
        message = prompts.worker_message(task, skill=skill, digest=digest, label=label,
                                         instructions=instructions)
        with self._lock:  # held until the worker runs: `cancel_all` sees it or stops it
            if self.host.status in ("done", "failed", "cancelled"):
                raise SupervisorError(f"the project is {self.host.status}; no worker was started")
            # a replayed call whose worker never got going reuses the id it reserved
            worker_id = known or self.runtime.new_worker_id()
            spec = WorkerSpec(message=message, role="worker", stage=task.stage,
                              task_id=task.task_id, goal=task.goal, worker_id=worker_id,
                              labels={"label": label} if label else {})
            self._state.records[worker_id] = WorkerRecord(
                worker_id=worker_id, task_id=task.task_id, stage=task.stage, goal=task.goal,
                label=label, workspace=task.workspace, last_update=time.time())
            if call_id:
                self._state.started[call_id] = worker_id
            self._save()
            self.runtime.start(spec)
        self.bus.emit("worker.created", f"{worker_id} started on {task.stage}"
                      + (f" ({label})" if label else ""), worker_id=worker_id,
                      stage=task.stage, task_id=task.task_id,
                      data={"label": label, "instructions": instructions[:300],
                            "first_prompt_chars": len(message)})
        return worker_id

    def _revive(self, worker_id: str) -> None:
        """Continue a worker whose turn a crash cut short (no-op when it is alive or idle)."""
        disk = _safe_get(self.runtime, worker_id)
        if disk and disk.get("status") == "running" and not self.runtime.is_active(worker_id):
            self.runtime.resume(worker_id)

    def resume_worker(self, worker_id: str, answer: str | None, message: str | None) -> str:
        self._known(worker_id)
        self._resume(worker_id, answer, message)
        return f"resumed {worker_id}"

    def _resume(self, worker_id: str, answer: str | None, message: str | None) -> None:
        with self._lock:
            record = self._state.records.get(worker_id)
            if record is not None:
                self._state.records[worker_id] = dataclasses.replace(
                    record, status="running", suspension=None, last_update=time.time())
                self._save()
        self.runtime.resume(worker_id, answer=answer, message=message)

    def cancel_worker(self, worker_id: str) -> str:
        self._known(worker_id)
        record = self.runtime.cancel(worker_id, timeout=10.0)
        return f"cancelled {worker_id}: {(record.get('result') or {}).get('notes', '')}"

    def schedule_resume(self, worker_id: str, message: str, delay_s: float) -> str:
        self._known(worker_id)
        delay = max(0.0, float(delay_s))
        item = {"worker_id": worker_id, "message": message, "due": time.time() + delay}
        with self._lock:
            self._state.schedules.append(item)
            self._save()
        self.bus.emit("resume.scheduled", f"{worker_id} in {delay:g} s: {message[:80]}",
                      worker_id=worker_id, stage=self.task.stage, task_id=self.task.task_id,
                      data={"delay_s": delay, "message": message})
        return f"scheduled: {worker_id} will be resumed in {delay:g} s"

    def finish_stage(self, summary: str, outputs: list[str], next_stage: str) -> str:
        outcome = self.host.finish_stage(summary, outputs, next_stage or None)
        if outcome.accepted:
            with self._lock:
                self._state.last_finish = {"summary": summary, "outputs": list(outputs),
                                           "next_stage": next_stage}
                self._save()
            return f"accepted: {outcome.message}"
        self._enqueue(SchedulingEvent("finish_refused", self.task.task_id, None,
                                      {"reason": outcome.message}, time.time()))
        return f"refused: {outcome.message}"

    def request_user_decision(self, question: str, options: list[str]) -> str:
        decision_id = self.host.request_user_decision(question, options)
        return (f"asked the user ({decision_id}); the answer will arrive as a user_answered "
                "event")

    def on_user_answer(self, answer: dict[str, Any]) -> None:
        """Layer 1 calls this when the user answers a project-level question."""
        if self._state is not None:
            self._enqueue(SchedulingEvent("user_answered", self.task.task_id, None,
                                          {"question": answer.get("question"),
                                           "approve": answer.get("approve"),
                                           "comment": answer.get("comment")}, time.time()))

    def worker_summaries(self) -> list[dict[str, Any]]:
        with self._lock:
            out = []
            for record in self._state.records.values():
                result = record.result or {}
                summary = str(result.get("summary") or "")
                out.append({"id": record.worker_id, "label": record.label,
                            "status": record.status, "stage": record.stage,
                            "task_id": record.task_id, "outputs": result.get("outputs") or [],
                            "next_stage": result.get("next_stage"),
                            "summary_line": summary.splitlines()[0] if summary else "",
                            "model_calls": record.model_calls, "tool_calls": record.tool_calls})
            return out

    def worker_record(self, worker_id: str) -> dict[str, Any]:
        return self._known(worker_id).to_dict()

    def records(self) -> list[WorkerRecord]:
        with self._lock:
            return list(self._state.records.values()) if self._state else []

    def cancel_all(self, timeout: float = 10.0) -> None:
        """Cancel every worker session alive in this process (each finalizes or is stopped)."""
        with self._lock:  # after layer 1 stopped the project: no worker starts past this
            live = self.runtime.live_workers()
        for worker_id in live:
            if worker_id != SUPERVISOR_ID:
                try:
                    self.runtime.cancel(worker_id, timeout=timeout)
                except RuntimeLayerError:
                    pass  # it finished meanwhile

    def close(self) -> None:
        self.runtime.close()

    # ------------------------------------------------------------------ persistence

    def _known(self, worker_id: str) -> WorkerRecord:
        with self._lock:
            record = self._state.records.get(worker_id)
        if record is None:
            raise SupervisorError(f"no worker '{worker_id}' in stage {self.task.task_id}; "
                                  "list_workers shows the stage's workers")
        return record

    @property
    def _state_file(self):
        return self.workspace.state_dir / "supervisor.json"

    def _load(self, task: StageTask) -> LoopState:
        return load_loop_state(self._state_file, task.task_id)

    def _save(self) -> None:
        save_loop_state(self._state_file, self._state)

    def _recover(self) -> None:
        """After a restart: reconcile records with the workers' own files, resume the
        turns a crash cut short, and finish the decision that was in progress."""
        state = self._state
        if state.in_progress is not None:
            sup = _safe_get(self.runtime, SUPERVISOR_ID)
            spec = WorkerSpec(message="", role="supervisor", worker_id=SUPERVISOR_ID,
                              system_prompt=prompts.SUPERVISOR_PROMPT,
                              extra_tools=supervisor_tools(self), file_tools=False,
                              max_input_messages=True)
            if (sup and sup.get("status") == "running"
                    and self.runtime.has_unfinished_turn(SUPERVISOR_ID, spec)):
                # the agent was mid-decision: let it finish that turn from its checkpoint
                self.runtime.resume(SUPERVISOR_ID, spec=spec)
                self.runtime.wait(SUPERVISOR_ID)
                state.in_progress = None
            else:
                state.queue.insert(0, state.in_progress)
                state.in_progress = None
        for wid, before in list(state.records.items()):
            disk = _safe_get(self.runtime, wid)
            if disk is None:
                continue
            if disk["status"] == "running":
                # a turn the crash cut short: continue it from its last checkpoint
                state.records[wid] = dataclasses.replace(before, status="running",
                                                         suspension=None,
                                                         last_update=time.time())
                state.schedules = [s for s in state.schedules if s["worker_id"] != wid]
                self._revive(wid)
                continue
            synthetic = WorkerUpdate(worker_id=wid, status=disk["status"],
                                     progress=_progress_of(disk), result=disk.get("result"),
                                     question=disk.get("question"),
                                     check_after_s=disk.get("check_after_s"),
                                     error=disk.get("error"), at=time.time())
            after = apply_update(before, synthetic)
            state.records[wid] = after
            event = filter_update(before, after)
            if event is not None:
                state.queue.append(event)
            elif after.status == "background" and not any(
                    s["worker_id"] == wid for s in state.schedules):
                state.schedules.append({"worker_id": wid, "due": time.time(),
                                        "message": "The run was restarted; check on your "
                                                   "background job."})
        self._save()

    def _copy_skill(self, task: StageTask) -> str:
        """Copy the stage's skill into the workspace (workers read only the workspace)."""
        target = self.workspace.state_dir / "skills" / f"{task.stage}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(task.skill_path, target)
        except OSError as exc:
            raise SupervisorError(f"cannot copy the skill of {task.stage} from "
                                  f"{task.skill_path}: {exc.strerror}") from None
        return f"/.lightscientist/skills/{task.stage}.md"

    def _read_process(self) -> str:
        try:
            return self.workspace.process_md.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""


def _safe_get(runtime: ExecutionRuntime, worker_id: str) -> dict[str, Any] | None:
    try:
        return runtime.get(worker_id)
    except Exception:
        return None


def _progress_of(record: dict[str, Any]):
    from lightscientist_jupyter.runtime.types import Progress

    p = record.get("progress") or {}
    return Progress(model_calls=p.get("model_calls", 0), tool_calls=p.get("tool_calls", 0),
                    steps=p.get("steps", 0), input_chars=p.get("input_chars", 0))
