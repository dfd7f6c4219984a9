"""A coding agent as a worker session: the stage's task prompted to an ACP agent.

It keeps its record like a deepagents session (`session.record_keeping`), so layer 2 sees
one kind of worker. A turn starts the agent (in the worker's sandbox), opens its session —
`session/load` of the one its record names, when the agent can load sessions, else a new
one — and prompts it with the task (`task.md`; after a crash, with a notice that its turn
was cut short). The turn's end settles the worker:

- `end_turn`: `completed`, delivering the stage's outputs with the agent's last message as
  the summary and no suggested next stage (the stage's default), so layer 1's checks decide;
- `cancelled`, or a turn a cancel reached: nothing here (`ExecutionRuntime.cancel` settles it);
- another stop reason, or an `AgentFailed` line: `failed`, with that line.

Under `permissions = "ask"` a permission request makes the worker `waiting` with the request
itself on its record and update (`values.permission.PermissionRequest`: the tool call, an
edit's texts, the agent's own options; its question is one line naming them); the answer a
resume brings picks the option (`PermissionRequest.pick`: its name or id, or yes / no).
The usage the agent reports for a turn reaches the meter's ledger; a turn that reports none
is counted as "not reported", never as zero.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lightscientist_jupyter.errors import AgentFailed
from lightscientist_jupyter.redact import safe
from lightscientist_jupyter.runtime.acp.launch import find_program
from lightscientist_jupyter.runtime.acp.session import AcpSession
from lightscientist_jupyter.runtime.metering.meter import BudgetHold, UsageMeter
from lightscientist_jupyter.runtime.protocol import parse_header
from lightscientist_jupyter.runtime.sandbox.bwrap import program_binds
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session.record_keeping import RecordKeeping
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.vocab import (
    FINAL_WORKER_STATUSES,
    AgentPermissions,
    EventType,
    WorkerStatus,
)

RESUMED_NOTICE = (
    "Your previous turn on this task was cut short (the run stopped). Look at what is "
    "already in the workspace, then finish the task:\n\n"
)


class AgentWorkerSession(RecordKeeping):
    """One worker whose stage a coding agent works. Built and driven by `ExecutionRuntime`.

    Args:
        record: its record; `record.agent` names the agent.
        folder: `workers/<id>/` (its task, its record, the agent's stderr log `agent.log`).
        emit, report: as `RecordKeeping`'s.
        meter: counts the usage each turn reports.
        sandbox: the `bwrap` argv (up to its final `--`) the agent runs in; empty: none.
        problem: why the agent cannot run here (its sandbox cannot be made): every turn
            fails with this line.
        grace: how long a cancelled turn may take before the agent's group is ended.
    """

    def __init__(
        self,
        record: WorkerRecord,
        folder: Path,
        *,
        emit: Callable[..., object],
        report: Callable[[WorkerUpdate], None],
        meter: UsageMeter,
        sandbox: Sequence[str] = (),
        problem: str | None = None,
        grace: float = 5.0,
    ):
        super().__init__(record, folder, emit=emit, report=report)
        assert record.agent is not None  # the runtime makes this kind for agents only
        self.spec: AgentSpec = record.agent
        self.meter = meter
        self.sandbox = tuple(sandbox)
        self.problem = problem
        self.grace = grace
        self.acp: AcpSession | None = None
        """The agent's session while a turn runs."""
        self._answers: queue.Queue[str | None] = queue.Queue()
        """Answers to the permission question the turn waits on (None: cancelled)."""
        self._asking = False
        self.pending_answer: str | None = None
        """An answer brought to a question a crash cut off: it answers the agent's first
        permission request of the next turn (the agent asks it again)."""
        self._files = list(record.files_written)
        self._edits: dict[str, list[str]] = {}
        self._turns = record.progress.model_calls
        self._tool_calls_before = record.progress.tool_calls

    # ------------------------------------------------------------------ RecordKeeping

    def progress(self) -> Progress:
        acp = self.acp
        calls = acp.client.tool_calls if acp is not None else 0
        return Progress(
            model_calls=self._turns, tool_calls=self._tool_calls_before + calls, steps=self._turns
        )

    def tracked(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(self._files), ()

    @property
    def waiting_here(self) -> bool:
        """Whether a live turn waits for an answer to a permission question."""
        return self._asking and self.running

    # ------------------------------------------------------------------ turns

    def start_turn(self, inp: Any, *, resumed: bool) -> None:
        """Run one turn on a new thread: `inp` is the prompt's text, or None to continue a
        turn a crash cut short."""
        with self._lock:
            self.finished.clear()
            self._set(status=WorkerStatus.RUNNING, question=None, permission=None, held=None)
            self._emit_event(
                EventType.SESSION_START,
                ("resumed" if resumed else "started")
                + f" (agent {self.spec.name}, stage {self.record.stage})",
                {"resumed": resumed, "role": str(self.record.role), "agent": self.spec.name},
            )
            self._thread = threading.Thread(
                target=self._turn, args=(inp,), daemon=True, name=f"ls-agent-{self.id}"
            )
            self._thread.start()

    def answer(self, text: str) -> None:
        """Answer the permission question a live turn waits on."""
        self._answers.put(text)

    def stop(self) -> None:
        """End the agent at once (the runtime closes); its turn's thread closes its session."""
        self.hard_stop.set()
        self._answers.put(None)
        acp = self.acp
        if acp is not None:
            acp.kill()

    def cancel_turn(self) -> bool:
        """Cancel the running turn (`session/cancel`, then its group past the grace period);
        whether the agent stopped by itself."""
        self._answers.put(None)
        acp = self.acp
        return acp.cancel(next_turn=True) if acp is not None else True

    def cancel_now(self) -> WorkerRecord:
        """Cancel the worker: its turn's `session/cancel`, the agent's process group ended
        past the grace period; it is `cancelled` with the files it wrote."""
        self.cancel.set()
        stopped = self.cancel_turn() if self.running else True
        self.finished.wait(self.grace + 5.0)
        files = ", ".join(self.record.files_written) or "none"
        how = "it stopped its turn" if stopped else "it did not stop in time; it was ended"
        self.settle_cancelled(
            {
                "kind": "finalize_cancel" if stopped else "cancel_fallback",
                "notes": f"agent '{self.spec.name}' cancelled: {how}. Files it wrote: {files}",
            }
        )
        return self.record

    def _turn(self, text: str | None) -> None:
        acp = AcpSession(
            self.spec,
            Path(self.record.workspace),
            home=self.folder / "home",
            log=self.folder / "agent.log",
            emit=self._agent_event,
            ask=self._ask if self.spec.permissions == AgentPermissions.ASK else None,
            grace=self.grace,
            sandbox=self.sandbox,
        )
        self.acp = acp
        try:
            if self.problem is not None:
                raise AgentFailed(self.problem)
            self.meter.admit()
            loaded = self.record.agent_session
            opened = acp.start(load=loaded)
            with self._lock:
                self._set(agent_session=opened)
            if opened == loaded:
                self._emit_event(
                    EventType.SESSION_START,
                    f"loaded the agent's session {opened}",
                    {"resumed": True, "agent": self.spec.name, "agent_session": opened},
                )
            if self.cancel.is_set():
                return  # cancelled while the agent started: `cancel_now` settles it
            prompt = text if text is not None else RESUMED_NOTICE + self._task_text()
            began = time.monotonic()
            result = acp.prompt(prompt)
            self._turns += 1
            self.meter.charge_reported(
                self._who(), result.usage, self.spec.name, time.monotonic() - began
            )
            if self.cancel.is_set() or result.stop_reason == "cancelled":
                return  # `ExecutionRuntime.cancel` settles it
            if result.stop_reason != "end_turn":
                self._fail(f"agent '{self.spec.name}' ended its turn: {result.stop_reason}")
                return
            self._complete(result.summary)
        except BudgetHold as hold:
            with self._lock:
                self._set(held=str(hold))
        except AgentFailed as exc:
            if not (self.cancel.is_set() or self.hard_stop.is_set()):
                self._fail(str(exc))
        except Exception as exc:  # a worker failure never escapes its thread
            if not self.hard_stop.is_set():
                self._fail(f"agent '{self.spec.name}': {type(exc).__name__}: {safe(str(exc))}")
        finally:
            self._tool_calls_before += acp.client.tool_calls
            self.acp = None
            try:
                acp.close()
            finally:
                self.finished.set()

    def _complete(self, summary: str) -> None:
        fields = parse_header(self._task_text())[1]
        outputs = [str(o) for o in fields.get("outputs") or []]
        with self._lock:
            if self.status in FINAL_WORKER_STATUSES:
                return
            result = {
                "kind": "complete_stage",
                "summary": summary or f"agent '{self.spec.name}' ended its turn",
                "outputs": outputs,
                "next_stage": None,
            }
            self._set(status=WorkerStatus.COMPLETED, result=result)
            self._send()
            self._emit_event(
                EventType.SESSION_END, f"turn ended: {self.status}", {"status": str(self.status)}
            )

    def _task_text(self) -> str:
        return (self.folder / "task.md").read_text(encoding="utf-8")

    def _who(self) -> dict[str, Any]:
        r = self.record
        return {"worker": r.id, "role": str(r.role), "stage": r.stage, "task_id": r.task_id}

    # ------------------------------------------------------------------ what the agent says

    def _agent_event(self, type: str, message: str, data: dict[str, Any]) -> None:
        if type == EventType.TOOL_CALL and data.get("kind") == "edit":
            self._edits[str(data.get("id"))] = [str(p) for p in data.get("paths") or []]
        elif type == EventType.TOOL_RESULT and "result" in data:
            for path in self._edits.pop(str(data.get("id")), []):
                shown = _relative(path, Path(self.record.workspace))
                if shown not in self._files:
                    self._files.append(shown)
        self._emit_event(type, message, data)

    def _ask(self, request: PermissionRequest) -> str | None:
        """Make the worker `waiting` with the agent's question; block for the answer."""
        if self.pending_answer is not None:
            earlier, self.pending_answer = self.pending_answer, None
            return _picked(request, earlier)
        question = request.question
        with self._lock:
            self._asking = True
            self._set(status=WorkerStatus.WAITING, question=question, permission=request)
            self._emit_event(
                EventType.WORKER_WAITING,
                f"asks: {safe(question, 200)}",
                {
                    "question": safe(question, 1000),
                    "agent": self.spec.name,
                    "options": [o.name for o in request.options],
                },
            )
            self._send(question=question, permission=request)
        given = self._answers.get()
        with self._lock:
            self._asking = False
            # the runtime closing leaves it waiting, as a crash would: a resume asks again
            if self.status == WorkerStatus.WAITING and not self.hard_stop.is_set():
                self._set(status=WorkerStatus.RUNNING, question=None, permission=None)
                self._send()
        return None if given is None else _picked(request, given)


def agent_sandbox(spec: AgentSpec, policy: ShellPolicy, root: Path, home: Path) -> tuple[str, ...]:
    """The `bwrap` argv (up to its final `--`) an agent runs in, as its stage's commands do:
    the workspace writable, nothing else of the host, its program's files shown read-only;
    empty when the run's commands are not sandboxed. Raises `AgentFailed` for an agent with
    `network = true` where its sandbox would need a network of its own: the user-mode stack
    commands get (`netstack`) is not wired to agents yet."""
    if not policy.sandbox:
        return ()
    if spec.network and not policy.host_network:
        raise AgentFailed(
            f"agent '{spec.name}': network = true needs a network of its own in the sandbox, "
            "which agents do not get yet; run with --sandbox none, or set network = false"
        )
    root = root.resolve()
    prefix = policy.confinement(root, home).prefix
    try:
        program = find_program(spec)
    except AgentFailed:
        return prefix  # its turn fails with that line when it starts the agent
    return (*prefix[:-1], *program_binds([program, *spec.command[1:]], root), prefix[-1])


def _picked(request: PermissionRequest, answer: str) -> str | None:
    """The id of the option `answer` picks; None (the request is cancelled) when it picks
    none."""
    option = request.pick(answer)
    return option.id if option is not None else None


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path
