"""A coding agent as a worker session: the stage's task prompted to an ACP agent.

It keeps its record like a deepagents session (`session.record_keeping`), so layer 2 sees
one kind of worker. A turn starts the agent (in the worker's sandbox), opens its session —
`session/load` of the one its record names, when the agent can load sessions, else a new
one — and prompts it with the task (`task.md`; after a crash, with a notice that its turn
was cut short). The turn's end settles the worker:

- a delivery the agent made with our `complete_stage` tool: `completed` with its summary,
  outputs and suggested next stage (whatever the stop reason), so layer 1's checks decide;
- else `end_turn`: `completed`, delivering the stage's outputs with the agent's last message
  as the summary and no suggested next stage (the stage's default) — an agent that knows
  nothing of our tools still delivers — or `background` when it submitted a job this turn
  (layer 2 resumes it with the job's end, a new prompt in the same session);
- `cancelled`, or a turn a cancel reached: nothing here (`ExecutionRuntime.cancel` settles it);
- another stop reason, or an `AgentFailed` line: `failed`, with that line.

Our tools reach the agent as an MCP server of the turn (`tool_server`, `worker_tools`): its
`request_input` makes the worker `waiting` like a permission question does, and one answer
channel serves both.

Under `permissions = "ask"` a permission request makes the worker `waiting` with the request
itself on its record and update (`values.permission.PermissionRequest`: the tool call, an
edit's texts, the agent's own options; its question is one line naming them); the answer a
resume brings picks the option (`PermissionRequest.pick`: its name or id, or yes / no).
The usage the agent reports for a turn reaches the meter's ledger, priced by the model the
agent names where the price table knows it (else its cost is unknown); a turn that reports
none is counted as "not reported", never as zero.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.errors import AgentFailed
from lightscientist_jupyter.redact import redact, safe
from lightscientist_jupyter.runtime.acp.tool_server import ToolServer
from lightscientist_jupyter.runtime.acp.worker_tools import ToolContext, agent_tools
from lightscientist_jupyter.runtime.metering.meter import BudgetHold, UsageMeter
from lightscientist_jupyter.runtime.protocol import parse_header
from lightscientist_jupyter.runtime.sandbox.spawn import Confinement
from lightscientist_jupyter.runtime.session.record_keeping import RecordKeeping
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.values.task import next_stage_refusal
from lightscientist_jupyter.vocab import (
    FINAL_WORKER_STATUSES,
    AgentPermissions,
    EventType,
    WorkerStatus,
)

if TYPE_CHECKING:  # imported by a turn: the protocol library takes a third of a second to
    # import, which every run, kernel and command line would pay for a stage no agent works
    from lightscientist_jupyter.runtime.acp.session import AcpSession

RESUMED_NOTICE = (
    "Your previous turn on this task was cut short (the run stopped). Look at what is "
    "already in the workspace, then finish the task:\n\n"
)
JOB_CHECK_S = 30.0
"""When a worker in the background for its job asks to be checked (as a deepagents one's)."""


class AgentWorkerSession(RecordKeeping):
    """One worker whose stage a coding agent works. Built and driven by `ExecutionRuntime`.

    Args:
        record: its record; `record.agent` names the agent.
        folder: `workers/<id>/` (its task, its record, the agent's stderr log `agent.log`).
        emit, report: as `RecordKeeping`'s.
        meter: counts the usage each turn reports.
        sandbox: where the agent runs (`agent_sandbox`); None: unsandboxed.
        grace: how long a cancelled turn may take before the agent's group is ended.
        tools: what our tools serve it (its stage's jobs, literature and memory); None: it is
            offered no tools.
    """

    def __init__(
        self,
        record: WorkerRecord,
        folder: Path,
        *,
        emit: Callable[..., object],
        report: Callable[[WorkerUpdate], None],
        meter: UsageMeter,
        sandbox: Confinement | None = None,
        grace: float = 5.0,
        tools: ToolContext | None = None,
    ):
        super().__init__(record, folder, emit=emit, report=report)
        self.tools = tools
        assert record.agent is not None  # the runtime makes this kind for agents only
        self.spec: AgentSpec = record.agent
        self.meter = meter
        self.sandbox = sandbox
        self.grace = grace
        self.acp: AcpSession | None = None
        """The agent's session while a turn runs."""
        self._answers: queue.Queue[str | None] = queue.Queue()
        """Answers to the question the turn waits on, a permission's or `request_input`'s
        (None: cancelled)."""
        self._asking = False
        self._one_question = threading.Lock()
        """One question waits at a time (the agent may ask a permission and call
        `request_input` at once)."""
        self._in_turn = False
        self._delivery: dict[str, Any] | None = None
        """What the agent delivered with `complete_stage` this turn."""
        self._jobs_this_turn: list[str] = []
        self.pending_answer: str | None = None
        """An answer brought to a question a crash cut off: it answers the agent's first
        question of the next turn, a permission or a `request_input` (it asks again)."""
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
        try:
            server = self._tool_server()
        except Exception as exc:  # a worker failure never escapes its thread
            self._fail(f"agent '{self.spec.name}': cannot offer it our tools: {safe(str(exc))}")
            self.finished.set()
            return
        from lightscientist_jupyter.runtime.acp.session import AcpSession

        acp = AcpSession(
            self.spec,
            Path(self.record.workspace),
            home=self.folder / "home",
            log=self.folder / "agent.log",
            emit=self._agent_event,
            ask=self._ask if self.spec.permissions == AgentPermissions.ASK else None,
            grace=self.grace,
            sandbox=self.sandbox,
            mcp_servers=[server.stdio_server()] if server is not None else (),
        )
        self.acp = acp
        self._in_turn = True
        self._delivery, self._jobs_this_turn = None, []
        while not self._answers.empty():  # a cancel's leftover: no question waited for it
            self._answers.get_nowait()
        try:
            self.meter.admit()
            if server is not None:
                try:
                    server.start()
                except OSError as exc:
                    raise AgentFailed(
                        f"agent '{self.spec.name}': cannot serve its tools at {server.path} "
                        f"({exc.strerror or exc})"
                    ) from None
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
            began = time.monotonic()
            result = acp.prompt(self._prompt_text(text, loaded, opened))
            self._turns += 1
            self.meter.charge_reported(
                self._who(),
                result.usage,
                self.spec.name,
                time.monotonic() - began,
                model=result.model,
            )
            if self.cancel.is_set() or result.stop_reason == "cancelled":
                return  # `ExecutionRuntime.cancel` settles it
            if self._delivery is None and result.stop_reason != "end_turn":
                self._fail(f"agent '{self.spec.name}' ended its turn: {result.stop_reason}")
            elif self._delivery is None and self._jobs_this_turn:
                self._background(self._jobs_this_turn[-1])
            else:
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
            self._in_turn = False
            self._tool_calls_before += acp.client.tool_calls
            self.acp = None
            try:
                acp.close()
            finally:
                if server is not None:
                    server.close()
                self.finished.set()

    def _prompt_text(self, text: str | None, loaded: str | None, opened: str) -> str:
        """What the turn prompts: the task (after a crash, with a notice that its turn was
        cut short), or a resume's message — after the task, when the agent could not load
        the session that read it."""
        if text is None:
            return RESUMED_NOTICE + self._task_text()
        if loaded is not None and opened != loaded:
            return f"{self._task_text()}\n\n{text}"
        return text

    def _tool_server(self) -> ToolServer | None:
        if self.tools is None:
            return None
        from lightscientist_jupyter.runtime.acp.session import OUR_VERSION

        return ToolServer(
            self.folder / "home",
            agent_tools(self, self.tools),
            agent=self.spec.name,
            emit=self._emit_event,
            version=OUR_VERSION,
        )

    def _complete(self, summary: str) -> None:
        fields = parse_header(self._task_text())[1]
        outputs = [str(o) for o in fields.get("outputs") or []]
        with self._lock:
            if self.status in FINAL_WORKER_STATUSES:
                return
            result = self._delivery or {
                "kind": "complete_stage",
                "summary": summary or f"agent '{self.spec.name}' ended its turn",
                "outputs": outputs,
                "next_stage": None,
            }
            # an outside program's words, bound for PROCESS.md: no key-like text gets there
            result = {**result, "summary": redact(str(result["summary"]))}
            self._set(status=WorkerStatus.COMPLETED, result=result)
            self._send()
            self._emit_event(
                EventType.SESSION_END, f"turn ended: {self.status}", {"status": str(self.status)}
            )

    def _background(self, job_id: str) -> None:
        """In the background while the job it submitted runs (layer 2 resumes it)."""
        reason, after = f"job {job_id} is running", JOB_CHECK_S
        with self._lock:
            if self.status in FINAL_WORKER_STATUSES:
                return
            self._set(
                status=WorkerStatus.BACKGROUND,
                check_after_s=after,
                result={"kind": "suspend", "reason": reason},
            )
            self._emit_event(
                EventType.WORKER_BACKGROUND,
                f"suspended: {reason} (check after {after:g} s)",
                {"reason": reason, "check_after_s": after, "agent": self.spec.name},
            )
            self._send(check_after_s=after)
            self._emit_event(
                EventType.SESSION_END, f"turn ended: {self.status}", {"status": str(self.status)}
            )

    # ------------------------------------------------------------------ its tools' effects

    def deliver(self, summary: str, outputs: list[str], next_stage: str) -> str | None:
        """`complete_stage`: the turn's delivery, or why the next stage it names is refused
        (the allowed ones are in its task's header, from layer 1's task)."""
        fields = parse_header(self._task_text())[1]
        allowed = fields.get("allowed_next")
        if next_stage and isinstance(allowed, list):
            refused = next_stage_refusal(
                str(self.record.stage),
                next_stage,
                [str(a) for a in allowed],
                str(fields.get("default_next") or ""),
            )
            if refused is not None:
                return refused
        self._delivery = {
            "kind": "complete_stage",
            "summary": summary or f"agent '{self.spec.name}' delivered",
            "outputs": outputs,
            "next_stage": next_stage or None,
        }
        return None

    def ask(self, question: str) -> str | None:
        """`request_input`: the worker waits with `question`; the answer, or None."""
        return self._wait_for_answer(question)

    def job_submitted(self, job_id: str) -> None:
        """`submit_job` started a job: its id goes to the record; the turn's end is then
        `background`."""
        self.amend(jobs=(*self.record.jobs, job_id))
        self._jobs_this_turn.append(job_id)

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
        """A permission request under `ask`: the option the answer picks, or None."""
        given = self._wait_for_answer(request.question, request)
        return None if given is None else _picked(request, given)

    def _wait_for_answer(
        self, question: str, permission: PermissionRequest | None = None
    ) -> str | None:
        """Make the worker `waiting` with `question` (and the permission request it is, if
        it is one); block for the answer (None: the worker is cancelled or stopped, or its
        turn ended). An answer a crash cut off answers the first question of the next turn
        at once."""
        with self._one_question:
            if self.pending_answer is not None:
                earlier, self.pending_answer = self.pending_answer, None
                return earlier
            data: dict[str, Any] = {"question": safe(question, 1000), "agent": self.spec.name}
            if permission is not None:
                data["options"] = [o.name for o in permission.options]
            with self._lock:
                self._asking = True
                self._set(status=WorkerStatus.WAITING, question=question, permission=permission)
                self._emit_event(EventType.WORKER_WAITING, f"asks: {safe(question, 200)}", data)
                self._send(question=question, permission=permission)
            given = self._next_answer()
            with self._lock:
                self._asking = False
                # the runtime closing leaves it waiting, as a crash would: a resume asks again
                if self.status == WorkerStatus.WAITING and not self.hard_stop.is_set():
                    self._set(status=WorkerStatus.RUNNING, question=None, permission=None)
                    self._send()
            return given

    def _next_answer(self) -> str | None:
        while True:
            try:
                return self._answers.get(timeout=0.5)
            except queue.Empty:
                if self.cancel.is_set() or self.hard_stop.is_set() or not self._in_turn:
                    return None


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
