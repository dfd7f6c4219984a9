"""What the supervisor agent's tools do: start, resume, cancel and schedule workers, finish the
stage, ask the user, and read the stage's workers.

`WorkerControl` holds one stage's backends; each tool in `tools.py` is a thin wrapper over one
of its methods. Starting a worker never blocks. Layer 1 is reached only through the
`StageHost` handed down.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from lightscientist_jupyter._fs import read_named, read_text, write_text_atomic
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.errors import SupervisorError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.supervisor import prompts
from lightscientist_jupyter.supervisor.loop_state import Schedule, SupervisedStage
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.values.task import StageHost, StageTask
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    EventType,
    Role,
    SchedulingKind,
    WorkerStatus,
)
from lightscientist_jupyter.workspace import Workspace


class WorkerControl:
    """The tool backends of the supervisor agent, acting on the stage under supervision.

    The agent's session, and the tools bound into it, outlive a stage, so the backends
    look the current stage up on every call rather than holding one.

    Args:
        current: the stage under supervision now (task, loop state, lock); raises
            `SupervisorError` between stages.
        runtime: layer 3.
        host: layer 1's two tools and where the project stands.
        bus: the event bus.
        workspace: the project workspace (skills are copied into it; PROCESS.md is read).
    """

    def __init__(
        self,
        current: Callable[[], SupervisedStage],
        runtime: ExecutionRuntime,
        host: StageHost,
        bus: EventBus,
        workspace: Workspace,
    ):
        self._current = current
        self.runtime = runtime
        self.host = host
        self.bus = bus
        self.workspace = workspace
        self.agent_tools: list[Any] | None = None
        """The agent's tools over this control, built once (`agent.agent_spec`)."""

    @property
    def stage(self) -> SupervisedStage:
        return self._current()

    @property
    def task(self) -> StageTask:
        return self.stage.task

    # ------------------------------------------------------------------ workers

    def start_worker(
        self,
        instructions: str = "",
        label: str = "",
        call_key: str | None = None,
        header: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a worker on the current stage (`header`: the fields of a search node's or
        a reviewer's task, see `prompts.worker_message`).

        `call_key` says where the tool call sits in the agent's checkpointed thread
        (`tools.call_position`), never the model's own call id, which models reuse: a replay of
        the same call after a crash cut the agent's turn short returns the worker the first
        run started; any other call starts a new one."""
        task, stage = self.task, self.stage
        with stage.lock:
            known = stage.state.started.get(call_key) if call_key else None
        if known is not None and self.runtime.find(known) is not None:
            self.revive(known)
            return known
        skill = self.copy_skill(task)
        digest = prompts.process_digest(self.read_process())
        if task.agent is not None:
            skill_text = read_text(self.workspace.root / skill.lstrip("/"), errors="replace")
            message = prompts.agent_message(task, skill_text=skill_text, digest=digest)
        else:
            message = prompts.worker_message(
                task,
                skill=skill,
                digest=digest,
                label=label,
                instructions=instructions,
                header=header,
            )
        with stage.lock:  # held until the worker runs: `cancel_all` sees it or stops it
            if self.host.status in FINAL_PROJECT_STATUSES:
                raise SupervisorError(f"the project is {self.host.status}; no worker was started")
            # a replayed call whose worker never got going reuses the id it reserved
            worker_id = known or self.runtime.new_worker_id()
            labels = {"label": label} if label else {}
            spec = WorkerSpec(
                message=message,
                role=Role.WORKER,
                stage=task.stage,
                task_id=task.task_id,
                goal=task.goal,
                worker_id=worker_id,
                labels=labels,
                network=task.network,
                limits=dict(task.limits),
                memory=task.memory,
                agent=task.agent,
            )
            record = WorkerRecord(
                id=worker_id,
                task_id=task.task_id,
                stage=task.stage,
                goal=task.goal,
                labels=labels,
                workspace=task.workspace,
                updated_at=time.time(),
            )
            stage.state.records[worker_id] = record
            if call_key:
                stage.state.started[call_key] = worker_id
            stage.save()
            self.runtime.start(spec)
        self.bus.emit(
            EventType.WORKER_CREATED,
            f"{worker_id} started on {task.stage}" + (f" ({label})" if label else ""),
            worker_id=worker_id,
            stage=task.stage,
            task_id=task.task_id,
            data={
                "label": label,
                "instructions": instructions[:300],
                "first_prompt_chars": len(message),
            },
        )
        return worker_id

    def revive(self, worker_id: str) -> None:
        """Continue a worker whose turn a crash cut short (no-op when it is alive or idle)."""
        disk = self.runtime.find(worker_id)
        if disk and disk.status == WorkerStatus.RUNNING and not self.runtime.is_active(worker_id):
            self.runtime.resume(worker_id)

    def resume_worker(self, worker_id: str, answer: str | None, message: str | None) -> str:
        self.stage.known(worker_id)
        with self.stage.lock:
            record = self.stage.state.records.get(worker_id)
        if record is not None and record.permission and record.status == WorkerStatus.WAITING:
            self._permission_decided(worker_id, record.permission, answer or "")
        self.resume(worker_id, answer, message)
        return f"resumed {worker_id}"

    def _permission_decided(
        self, worker_id: str, permission: PermissionRequest, answer: str
    ) -> None:
        """Log the supervisor's answer to a coding agent's permission request (auto mode):
        the option it picks, or that it picks none (the request is then cancelled)."""
        option = permission.pick(answer)
        picked = option.name if option is not None else f"no option ({answer!r}): cancelled"
        self.bus.emit(
            EventType.SUPERVISOR_DECISION,
            f"{permission.question}: {picked}",
            worker_id=worker_id,
            stage=self.task.stage,
            task_id=self.task.task_id,
            data={
                "permission": permission.title,
                "agent": permission.agent,
                "answer": option.name if option is not None else None,
                "option": option.id if option is not None else None,
                "by": "supervisor",
            },
        )

    def resume(self, worker_id: str, answer: str | None, message: str | None) -> None:
        """Resume a suspended worker (the tool, or a scheduled resume that fell due)."""
        stage = self.stage
        with stage.lock:
            record = stage.state.records.get(worker_id)
            if record is not None:
                stage.put(_running(record, time.time()))
        self.runtime.resume(worker_id, answer=answer, message=message)

    def cancel_worker(self, worker_id: str) -> str:
        self.stage.known(worker_id)
        record = self.runtime.cancel(worker_id, timeout=10.0)
        return f"cancelled {worker_id}: {(record.result or {}).get('notes', '')}"

    def schedule_resume(self, worker_id: str, message: str, delay_s: float) -> str:
        self.stage.known(worker_id)
        delay = max(0.0, float(delay_s))
        item: Schedule = {"worker_id": worker_id, "message": message, "due": time.time() + delay}
        with self.stage.lock:
            self.stage.state.schedules.append(item)
            self.stage.save()
        self.bus.emit(
            EventType.RESUME_SCHEDULED,
            f"{worker_id} in {delay:g} s: {message[:80]}",
            worker_id=worker_id,
            stage=self.task.stage,
            task_id=self.task.task_id,
            data={"delay_s": delay, "message": message},
        )
        return f"scheduled: {worker_id} will be resumed in {delay:g} s"

    # ------------------------------------------------------------------ layer 1's two tools

    def finish_stage(self, summary: str, outputs: list[str], next_stage: str) -> str:
        outcome = self.host.finish_stage(summary, outputs, next_stage or None)
        if outcome.accepted:
            with self.stage.lock:
                self.stage.state.last_finish = {
                    "summary": summary,
                    "outputs": list(outputs),
                    "next_stage": next_stage,
                }
                self.stage.save()
            return f"accepted: {outcome.message}"
        self.stage.enqueue(
            SchedulingEvent(
                SchedulingKind.STAGE_REJECTED,
                self.task.task_id,
                None,
                {"reason": outcome.message},
                time.time(),
            )
        )
        return f"refused: {outcome.message}"

    def request_user_decision(self, question: str, options: list[str]) -> str:
        decision_id = self.host.request_user_decision(question, options)
        return (
            f"asked the user ({decision_id}); the answer will arrive as a "
            f"{SchedulingKind.USER_ANSWERED} event"
        )

    # ------------------------------------------------------------------ queries

    def worker_summaries(self) -> list[dict[str, Any]]:
        with self.stage.lock:
            return [_summary(r) for r in self.stage.state.records.values()]

    def worker_record(self, worker_id: str) -> dict[str, Any]:
        """One worker's record as the agent reads it: layer 2's copy, and whether it stalled."""
        record = self.stage.known(worker_id)
        with self.stage.lock:
            stalled = worker_id in self.stage.state.stalled
        return {**record.to_dict(), "stalled": stalled}

    # ------------------------------------------------------------------ files

    def copy_skill(self, task: StageTask) -> str:
        """Copy the stage's skill into the workspace (workers read only the workspace)."""
        target = self.workspace.state_dir / "skills" / f"{task.stage}.md"
        try:
            write_text_atomic(target, read_named(task.skill_path, self.workspace.root))
        except OSError as exc:
            why = str(exc) if isinstance(exc, PathRefused) else exc.strerror
            raise SupervisorError(
                f"cannot copy the skill of {task.stage} from {task.skill_path}: {why}"
            ) from None
        except UnicodeDecodeError:
            raise SupervisorError(
                f"cannot copy the skill of {task.stage} from {task.skill_path}: not UTF-8 text"
            ) from None
        return f"/.lightscientist/skills/{task.stage}.md"

    def read_process(self) -> str:
        """PROCESS.md's text for the worker's digest; none when it is missing or a link (the
        controller rewrites it from its own record: the digest is left out meanwhile)."""
        try:
            return read_text(self.workspace.process_md, errors="replace")
        except (FileNotFoundError, PathRefused):
            return ""


def _running(record: WorkerRecord, now: float) -> WorkerRecord:
    return dataclasses.replace(record, status=WorkerStatus.RUNNING, updated_at=now)


def _summary(record: WorkerRecord) -> dict[str, Any]:
    """One line of `list_workers`."""
    result = record.result or {}
    summary = str(result.get("summary") or "")
    return {
        "id": record.id,
        "label": record.label,
        "status": str(record.status),
        "stage": record.stage,
        "task_id": record.task_id,
        "outputs": result.get("outputs") or [],
        "next_stage": result.get("next_stage"),
        "summary_line": summary.splitlines()[0] if summary else "",
        "model_calls": record.progress.model_calls,
        "tool_calls": record.progress.tool_calls,
    }
