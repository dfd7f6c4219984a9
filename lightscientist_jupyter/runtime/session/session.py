"""One persistent worker session: a deepagents graph on a thread id, run turn by turn.

A turn runs on its own daemon thread (`start`/`resume` never block). When it ends, the
session's status is read back from the checkpoint alone — a pending interrupt means
`waiting`; the lifecycle call that ended the turn means `completed`, `background` or
`cancelled` — so the same rules hold in a process that picked the session up after a crash.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command, Durability

from lightscientist_jupyter._faults import report_storage_fault
from lightscientist_jupyter._fs import missing_files
from lightscientist_jupyter.redact import safe
from lightscientist_jupyter.runtime.checkpoints import prune
from lightscientist_jupyter.runtime.checkpoints.redacting import failure_text
from lightscientist_jupyter.runtime.metering.meter import BudgetHold, UsageMeter
from lightscientist_jupyter.runtime.metering.usage_callback import UsageCallback
from lightscientist_jupyter.runtime.recording.tape import session_key, tape_metadata
from lightscientist_jupyter.runtime.session.binding import BOUND, Binding
from lightscientist_jupyter.runtime.session.lifecycle import CANCEL_NOTICE, stop_call, turn_reply
from lightscientist_jupyter.runtime.session.observe import SessionObserver
from lightscientist_jupyter.runtime.session.record_keeping import RecordKeeping
from lightscientist_jupyter.runtime.session.worker_files import save_record
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.values.usage import Usage
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, EventType, Role, WorkerStatus

RECURSION_LIMIT = 400


class WorkerSession(RecordKeeping):
    """A worker's graph, record and turn thread. Built and driven by `ExecutionRuntime`."""

    def __init__(
        self,
        record: WorkerRecord,
        folder: Path,
        *,
        emit: Callable[..., object],
        report: Callable[[WorkerUpdate], None],
    ):
        super().__init__(record, folder, emit=emit, report=report)
        self.graph: Any = None
        self.binding: Binding | None = None
        """What a worker binds the runtime's shared graph to, for its turns."""
        self.unpruned_turns = 0
        """Turns since its thread was last pruned or renewed (see `prune`)."""
        self.observer = SessionObserver(self._emit_event, self._progress)
        self.observer.files_written = list(record.files_written)
        self.observer.commands = list(record.commands)
        self.observer.model_calls = record.progress.model_calls
        self.observer.tool_calls = record.progress.tool_calls
        self._steps = record.progress.steps
        self.tape_key: str | None = None
        """Set by the runtime when calls are recorded or replayed: the session's key there."""
        self.callbacks: list[Any] = [self.observer]
        self._usage = Usage.from_dict(record.usage)

    # ------------------------------------------------------------------ properties

    @property
    def config(self) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": self.record.thread_id},
            "callbacks": list(self.callbacks),
            "recursion_limit": RECURSION_LIMIT,
        }

    def tape(self, recorder: Any, workers_dir: Path) -> None:
        """Mark the session's model calls for a recording or a replay (its key: see
        `tape.session_key`), and let `recorder`, if any, write them."""
        r = self.record
        self.tape_key = session_key(str(r.role), r.stage, r.id, workers_dir)
        if recorder is not None:
            self.callbacks.append(recorder)

    def meter(self, meter: UsageMeter) -> None:
        """Count, price and gate this session's model calls (see `runtime.metering.meter`)."""
        hook = UsageCallback(
            meter,
            lambda: {
                "worker": self.id,
                "role": str(self.record.role),
                "stage": self.record.stage,
                "task_id": self.record.task_id,
            },
        )
        hook.on_usage = self._add_usage
        self.callbacks.append(hook)

    def _add_usage(self, usage: Usage) -> None:
        with self._lock:  # in memory; the next change of status saves it
            self._usage = self._usage.plus(usage)
            self.record = dataclasses.replace(self.record, usage=self._usage.to_dict())

    def turn_config(self) -> dict[str, Any]:
        """`config`, plus the metadata a recorder or the replay model reads (see
        `tape.tape_metadata`) when the session has a tape key."""
        config = self.config
        if self.tape_key is not None:
            snapshot = self.graph.get_state(config)
            messages = snapshot.values.get("messages", []) if snapshot.values else []
            config["metadata"] = tape_metadata(
                key=self.tape_key,
                worker_id=self.id,
                role=str(self.record.role),
                stage=self.record.stage,
                root=self.record.workspace,
                calls_before=self.record.answers_before
                + sum(isinstance(m, AIMessage) for m in messages),
            )
        return config

    def progress(self) -> Progress:
        o = self.observer
        return Progress(
            model_calls=o.model_calls,
            tool_calls=o.tool_calls,
            steps=self._steps,
            input_chars=o.input_chars,
        )

    @property
    def durability(self) -> Durability:
        """LangGraph's durability for this session's steps.

        A worker's steps are `async`: each checkpoint is written while the next step runs,
        so a crash redoes at most the step it cut short (a turn can be many steps and
        commands long). The supervisor agent's turn is one decision (one model call and the
        tool that settles its event), written once at its end or at its interrupt (`exit`):
        a crash in between decides that event again, which `supervisor.recovery` does from
        `supervisor.json`, and a `start_worker` repeated at the same place in the thread
        returns the worker the cut turn started (`tools.call_position`). Its checkpoints
        wait on the saver the workers share, so the two fewer writes per turn shorten every
        decision (about 16 ms of 90 in the default offline run). What must be on disk at
        once, a stage transition or a gate, is layer 1's `state.json`, replaced atomically
        and fsynced when the supervisor's tool makes it. (`sync` for the supervisor's steps
        made that run about 1.6x slower.)"""
        return "exit" if self.record.role == Role.SUPERVISOR else "async"

    # ------------------------------------------------------------------ turns

    def start_turn(self, inp: Any, *, resumed: bool) -> None:
        """Run one turn of the graph on a new thread."""
        with self._lock:
            self.finished.clear()
            turns = self.unpruned_turns if isinstance(inp, dict) else 0  # a new message
            changes = prune.renewal(self.graph, self.record, turns) or {}
            old_thread = self.record.thread_id
            running = {"status": WorkerStatus.RUNNING, "question": None, "check_after_s": None}
            self._set(**running, held=None, **changes)
            if changes:  # saved: the old thread can go
                prune.drop_thread(self.graph, old_thread)
                self.unpruned_turns = 0
            role, stage = self.record.role, self.record.stage
            self._emit_event(
                EventType.SESSION_START,
                ("resumed" if resumed else "started")
                + f" ({role}"
                + (f", stage {stage})" if stage else ")"),
                {"resumed": resumed, "role": str(role)},
            )
            self._thread = threading.Thread(
                target=self._turn, args=(inp,), daemon=True, name=f"ls-worker-{self.id}"
            )
            self._thread.start()

    def _turn(self, inp: Any) -> None:
        if self.binding is not None:  # this thread's turn is this worker's (see `binding`)
            BOUND.set(self.binding)
        try:
            state: dict[str, Any] = {}
            interrupts: tuple[Any, ...] = ()
            for mode, chunk in self.graph.stream(
                inp,
                self.turn_config(),
                stream_mode=["updates", "values"],
                durability=self.durability,
            ):
                if mode == "values":
                    state = chunk if isinstance(chunk, dict) else {}
                elif isinstance(chunk, dict) and "__interrupt__" in chunk:
                    interrupts = tuple(chunk["__interrupt__"])
                elif isinstance(chunk, dict):
                    self._steps += len(chunk)
            self._conclude(state.get("messages") or [], interrupts)
        except BudgetHold as hold:  # the call did not start: the turn waits for a resume
            self._hold(str(hold))
        except Exception as exc:  # a worker failure never escapes its thread
            if report_storage_fault(exc) is not None:
                return  # the run stops; the record stays `running`, as a crash leaves it
            try:
                self._fail(failure_text(exc, 600))
            except Exception as again:  # the record cannot be written either
                if not report_storage_fault(again):
                    raise
        finally:
            self.unpruned_turns += 1  # a settled thread keeps one checkpoint
            if self.status in FINAL_WORKER_STATUSES:  # (the supervisor's is renewed instead)
                self.carry_over()
            self.finished.set()

    def _conclude(self, messages: list[Any], interrupts: tuple[Any, ...]) -> None:
        """Settle the record from the turn's end: its last state and pending interrupts, as
        the stream gave them (reading them back from the checkpoint cost a few ms a turn)."""
        with self._lock:
            if self.status in FINAL_WORKER_STATUSES:
                return
            if interrupts:
                value = interrupts[0].value
                question = value.get("question") if isinstance(value, dict) else str(value)
                self._set(status=WorkerStatus.WAITING, question=question)
                self._emit_event(
                    EventType.WORKER_WAITING,
                    f"asks: {safe(question, 200)}",
                    {"question": safe(question, 1000)},
                )
                self._send(question=question)
                return
            call = stop_call(messages) or {}
            name, args = call.get("name"), call.get("args") or {}
            if self.cancel.is_set():
                return  # `ExecutionRuntime.cancel` settles the final state
            if name == "complete_stage":
                result = {
                    "kind": "complete_stage",
                    "summary": str(args.get("summary", "")),
                    "outputs": [str(o) for o in args.get("outputs") or []],
                    "next_stage": args.get("next_stage"),
                }
                root, claimed = self.record.workspace, [str(o) for o in args.get("outputs") or []]
                undelivered = missing_files(claimed, Path(root), dirs_ok=True)
                if root and undelivered and self.observer.file_tool_failures:
                    # its file tools failed, and it still reports files it could not write
                    self._fail(
                        "a file tool failed, yet it reported "
                        + ", ".join(undelivered)
                        + " as delivered in complete_stage"
                    )
                    return
                self._set(status=WorkerStatus.COMPLETED, result=result)
            elif name in ("suspend", "submit_job"):  # a job: resumed by layer 2 when it ends
                after = float(args.get("check_after_s") or 30.0)
                args.setdefault("reason", f"job {args.get('name', '')} is running")
                self._set(
                    status=WorkerStatus.BACKGROUND,
                    check_after_s=after,
                    result={"kind": "suspend", "reason": str(args.get("reason", ""))},
                )
                self._emit_event(
                    EventType.WORKER_BACKGROUND,
                    f"suspended: {args.get('reason', '')} (check after {after:g} s)",
                    {"reason": str(args.get("reason", "")), "check_after_s": after},
                )
            else:
                text = turn_reply(messages)
                if self.record.role == Role.SUPERVISOR:
                    self._set(
                        status=WorkerStatus.BACKGROUND, result={"kind": "reply", "text": text}
                    )
                else:
                    self._set(
                        status=WorkerStatus.COMPLETED,
                        result={"kind": "final_message", "text": text},
                    )
            self._send(check_after_s=self.record.check_after_s)
            self._emit_event(
                EventType.SESSION_END, f"turn ended: {self.status}", {"status": str(self.status)}
            )

    def _hold(self, reason: str) -> None:
        """Keep the turn for later: the record stays `running`, marked `held`, and its
        checkpoint still holds the model call to make (`ExecutionRuntime.resume` makes it)."""
        with self._lock:
            if self.status in FINAL_WORKER_STATUSES:
                return
            self._set(held=reason)
            self._emit_event(
                EventType.SESSION_END,
                f"held before a model call: {reason}",
                {"status": "held", "reason": reason},
            )

    # ------------------------------------------------------------------ cancellation

    def finalize_input(self) -> Any:
        """The input that asks an idle session to call `finalize_cancel`."""
        if self.status == WorkerStatus.WAITING:
            return Command(resume=CANCEL_NOTICE)
        return {"messages": [HumanMessage(CANCEL_NOTICE)]}

    def finalize_notes(self) -> str | None:
        """The notes of a `finalize_cancel` call that ended the latest turn, if any."""
        snapshot = self.graph.get_state({"configurable": {"thread_id": self.record.thread_id}})
        call = stop_call(snapshot.values.get("messages", []) if snapshot.values else [])
        if call and call["name"] == "finalize_cancel":
            return str(call["args"].get("notes", ""))
        return None

    # ------------------------------------------------------------------ checkpoints

    def carry_over(self) -> bool:
        """Move a settled session to a new thread that holds only its final state
        (`prune.carry_over`); whether it moved. The record pointing at the new thread is
        saved, flushed to disk, before the old thread is dropped: a crash in between leaves
        an unused thread, never a record pointing at a deleted one."""
        old_thread = self.record.thread_id
        changes = prune.carry_over(self.graph, self.record)
        if changes is None:
            return False
        with self._lock:
            if self.record.thread_id != old_thread:  # moved meanwhile: the copy is unused
                prune.drop_thread(self.graph, changes["thread_id"])
                return False
            self.record = dataclasses.replace(self.record, **changes)
            try:
                save_record(self.folder, self.record, flush=True)
            except Exception as exc:  # maybe saved, maybe not: both threads stay
                report_storage_fault(exc)
                return False
        prune.drop_thread(self.graph, old_thread)
        self.unpruned_turns = 0
        return True

    def tracked(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(self.observer.files_written), tuple(self.observer.commands)
