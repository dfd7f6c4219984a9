"""ExecutionRuntime: layer 3's API to layer 2.

`start(spec)` creates a worker session and runs its first turn on its own thread;
`resume(worker_id, answer=… | message=…)` continues a `waiting` or `background` session (or
one caught `running` by a crash) on the same thread id; `cancel(worker_id, timeout)` asks it
to finalize, then stops it; `get` and `list` read the records. Every change is reported as a
`WorkerUpdate` to the callback handed in at construction. Sessions persist in a LangGraph
checkpointer — SQLite in the workspace by default, shared by all workers of the process — so
a new process resumes any session the old one left.
"""

from __future__ import annotations

import builtins
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from lightscientist_jupyter._fs import NO_LINKS, list_dir, mkdirs, read_text, write_text_atomic
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.acp.launch import agent_sandbox
from lightscientist_jupyter.runtime.acp.worker import AgentWorkerSession
from lightscientist_jupyter.runtime.acp.worker_tools import ToolContext
from lightscientist_jupyter.runtime.checkpoints import prune
from lightscientist_jupyter.runtime.checkpoints.sqlite import open_checkpointer
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.recording import recorder as recording
from lightscientist_jupyter.runtime.recording.update_order import UpdateOrder
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session import graphs
from lightscientist_jupyter.runtime.session.session import WorkerSession
from lightscientist_jupyter.runtime.session.worker_files import id_order as _id_order
from lightscientist_jupyter.runtime.session.worker_files import load_record
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord, new_thread_id
from lightscientist_jupyter.runtime.types import WorkerSpec, WorkerUpdate
from lightscientist_jupyter.vocab import (
    FINAL_WORKER_STATUSES,
    RESUMABLE_WORKER_STATUSES,
    WorkerStatus,
)
from lightscientist_jupyter.workspace import Workspace


class ExecutionRuntime:
    """Persistent worker sessions for one workspace, in this process.

    Args:
        workspace: the project workspace (workers' file tools and shell are confined to it).
        model: the chat model every session uses.
        on_update: receives every `WorkerUpdate` (called from worker threads; keep it quick).
        bus: where layer-3 events go.
        checkpointer: 'sqlite' (default), 'memory', or a LangGraph saver.
        command_timeout: the default lifetime of a worker's shell command, in seconds.
        retries: retries of a failing model call (transient errors only); 0 for offline.
        record: append every model call to `.lightscientist/recordings/` (see `recording.recorder`).
    """

    def __init__(
        self,
        workspace: Workspace,
        model: BaseChatModel,
        *,
        on_update: Callable[[WorkerUpdate], None] | None = None,
        bus: EventBus | None = None,
        checkpointer: Literal["sqlite", "memory"] | BaseCheckpointSaver[Any] = "sqlite",
        command_timeout: float = 120.0,
        retries: int | None = None,
        retry_initial_delay: float = 1.0,
        record: bool = False,
        shell_policy: ShellPolicy | None = None,
        meter: UsageMeter | None = None,
    ):
        self.workspace = workspace
        self.meter = meter or UsageMeter()  # counts, prices and gates every model call
        self.model = model
        self.on_update = on_update or (lambda update: None)
        self.bus = bus or EventBus()
        self.saver = open_checkpointer(workspace, checkpointer)
        self.command_timeout = command_timeout
        scripted = type(model).__name__ == "OfflineScientistModel" or recording.is_replay(model)
        self.retries = (0 if scripted else 3) if retries is None else retries
        self.retry_initial_delay = retry_initial_delay
        self.shell_policy = shell_policy or ShellPolicy()
        """The run's sandbox, network and limits; a worker's stage adds its own."""
        self.groups = ProcessGroups()
        self.jobs = JobManager(workspace, self.bus, self.groups)  # submit_job's jobs
        self._sessions: dict[str, Session] = {}
        self._specs: dict[str, WorkerSpec] = {}
        self._graphs: dict[str, Any] = {}
        """The workers' shared graph, by system prompt (see `graphs`)."""
        self._droppers: list[threading.Thread] = []
        """Threads deleting cancelled sessions' checkpoints (joined before the database closes)."""
        self._lock = threading.RLock()
        self.recorder = recording.Recorder.of(workspace, model, self.meter) if record else None
        self._taped = record or recording.is_replay(model)

    # ------------------------------------------------------------------ API

    def start(self, spec: WorkerSpec) -> str:
        """Create a worker and run its first turn in the background; returns its id.

        With `spec.worker_id` naming a worker whose turn a crash cut short, the worker starts
        again on a new thread: its half-done tool calls are not replayed."""
        with self._lock:
            worker_id = spec.worker_id or self.new_worker_id()
            live = self._sessions.get(worker_id)
            if live is not None and (live.running or live.status in RESUMABLE_WORKER_STATUSES):
                raise RuntimeLayerError(
                    f"worker {worker_id} already exists and is {live.status}; resume it instead"
                )
            # (a record left `running` by a crash is started afresh on a new thread)
            folder = self.workspace.workers_dir / worker_id
            mkdirs(folder)
            now = time.time()
            record = WorkerRecord(
                id=worker_id,
                thread_id=new_thread_id(worker_id, now),
                role=spec.role,
                stage=spec.stage,
                task_id=spec.task_id,
                goal=spec.goal,
                labels=dict(spec.labels),
                created_at=now,
                updated_at=now,
                system_prompt=spec.system_prompt,
                file_tools=spec.file_tools,
                current_turn_only=spec.max_input_messages,
                workspace=str(self.workspace.root),
                network=spec.network,
                limits=dict(spec.limits),
                memory=spec.memory,
                agent=spec.agent,
            )
            write_text_atomic(folder / "task.md", spec.message)
            session = self._make_session(record, folder, spec)
            self._sessions[worker_id] = session
        if isinstance(session, AgentWorkerSession):
            session.start_turn(spec.message, resumed=False)
        else:
            session.start_turn({"messages": [HumanMessage(spec.message)]}, resumed=False)
        return worker_id

    def resume(
        self,
        worker_id: str,
        *,
        answer: Any = None,
        message: str | None = None,
        spec: WorkerSpec | None = None,
    ) -> None:
        """Continue a session: `answer` a waiting one, `message` a background one, or neither
        to pick up a turn a crash interrupted."""
        session = self._session(worker_id, spec)
        if session.removed or session.status in FINAL_WORKER_STATUSES:
            raise RuntimeLayerError(
                f"worker {worker_id} is {session.status}; a finished session cannot be "
                "resumed — start a new worker"
            )
        if isinstance(session, AgentWorkerSession):
            self._resume_agent(session, answer if answer is not None else message)
            return
        with self._lock:
            if session.running:
                raise RuntimeLayerError(
                    f"worker {worker_id} is running; resume it once it "
                    "waits or is in the background"
                )
            if session.status == WorkerStatus.WAITING and answer is None:
                if message is None:
                    raise RuntimeLayerError(
                        f"worker {worker_id} is waiting for an answer to: {session.record.question}"
                    )
                answer = message
            elif (
                session.status == WorkerStatus.BACKGROUND and answer is not None and message is None
            ):
                # no interrupt is pending: a Command(resume=…) would be dropped silently
                message, answer = str(answer), None
            if answer is not None:
                inp: Any = Command(resume=answer)
            elif message is not None:
                inp = {"messages": [HumanMessage(message)]}
            elif self.saver.get_tuple(_thread(session)) is not None:
                inp = None
            else:  # killed before its first checkpoint reached the disk: the turn starts again
                inp = {"messages": [HumanMessage(self._first_message(session))]}
            session.start_turn(inp, resumed=True)

    def _resume_agent(self, session: AgentWorkerSession, answer: Any) -> None:
        """Answer an agent's question (a permission, a `request_input`), prompt it with the
        message a worker in the background is resumed with (its job ended), or start its
        turn again after a crash (`session/load` of its session; a question a crash cut off
        is answered when the agent asks it again)."""
        with self._lock:
            if session.waiting_here:
                if answer is None:
                    raise RuntimeLayerError(
                        f"worker {session.id} is waiting for an answer to: "
                        f"{session.record.question}"
                    )
                session.answer(str(answer))
                return
            if session.running:
                raise RuntimeLayerError(
                    f"worker {session.id} is running; resume it once it waits for an answer"
                )
            if session.status == WorkerStatus.BACKGROUND and answer is not None:
                session.start_turn(str(answer), resumed=True)
                return
            if session.status == WorkerStatus.WAITING and answer is not None:
                session.pending_answer = str(answer)
            session.start_turn(None, resumed=True)

    def _first_message(self, session: WorkerSession) -> str:
        """The message a worker's first turn began with (`task.md`, written by `start`)."""
        path = self.workspace.workers_dir / session.id / "task.md"
        try:
            return read_text(path)
        except OSError as exc:
            why = str(exc) if isinstance(exc, PathRefused) else f"{path}: {exc.strerror}"
            raise RuntimeLayerError(
                f"worker {session.id} has no checkpoint to continue from and its first "
                f"message cannot be read ({why})"
            ) from None

    def cancel(self, worker_id: str, timeout: float = 10.0) -> WorkerRecord:
        """Ask the worker to finalize; past `timeout` stop it with a fallback result."""
        session = self._session(worker_id)
        if session.status in FINAL_WORKER_STATUSES:
            return session.record
        if isinstance(session, AgentWorkerSession):
            record = session.cancel_now()
            self.jobs.stop_owner(worker_id)  # the jobs it submitted over MCP
            session.removed = True
            return record
        session.cancel.set()
        self.jobs.stop_owner(worker_id)
        self.groups.kill_owner(worker_id)
        if not session.running:
            session.start_turn(session.finalize_input(), resumed=True)
        session.finished.wait(timeout)
        notes = session.finalize_notes() if session.finished.is_set() else None
        if notes is not None:
            result = {"kind": "finalize_cancel", "notes": notes}
        else:
            session.hard_stop.set()
            files = session.observer.files_written
            result = {
                "kind": "cancel_fallback",
                "notes": f"the worker did not finalize within {timeout:g} s; it was "
                "stopped. Files it wrote: " + (", ".join(files) or "none"),
            }
        self.groups.kill_owner(worker_id)
        session.settle_cancelled(result)
        self._remove(session)
        return session.record

    def get(self, worker_id: str) -> WorkerRecord:
        """The worker's record (from memory, or from disk for an older process's)."""
        with self._lock:
            if worker_id in self._sessions:
                return self._sessions[worker_id].record
        record = load_record(self.workspace.workers_dir / worker_id)
        if record is None:
            raise RuntimeLayerError(f"no worker '{worker_id}' in {self.workspace.workers_dir}")
        return record

    def find(self, worker_id: str) -> WorkerRecord | None:
        """The worker's record, or None when this workspace has no such worker."""
        try:
            return self.get(worker_id)
        except RuntimeLayerError:
            return None

    def list(self) -> list[WorkerRecord]:
        """Every worker's record in this workspace, oldest first."""
        folder = self.workspace.workers_dir
        ids = [
            e.name
            for e in list_dir(folder)
            if e.is_dir(follow_symlinks=False) and NO_LINKS.is_file(folder / e.name / "worker.json")
        ]
        return [self.get(i) for i in sorted(ids, key=_id_order)]

    def attach(self, worker_id: str, spec: WorkerSpec | None = None) -> WorkerSession:
        """The live session of a worker, loaded from its record when this process has none
        (`spec` supplies tools that cannot be stored, such as the supervisor's)."""
        session = self._session(worker_id, spec)
        if not isinstance(session, WorkerSession):
            raise RuntimeLayerError(f"worker {worker_id} is a coding agent's, not a graph's")
        return session

    def has_unfinished_turn(self, worker_id: str, spec: WorkerSpec | None = None) -> bool:
        """Whether the worker's checkpoint holds a turn that stopped half-way (a crash)."""
        session = self.attach(worker_id, spec)
        return bool(session.graph.get_state(_thread(session)).next)

    def live_workers(self) -> builtins.list[str]:
        """Workers of this process that are not in a final state."""
        with self._lock:
            return [
                wid for wid, s in self._sessions.items() if s.status not in FINAL_WORKER_STATUSES
            ]

    def is_active(self, worker_id: str) -> bool:
        """Whether a turn of this worker is running in this process now."""
        with self._lock:
            session = self._sessions.get(worker_id)
            return session is not None and session.running

    def tape_key(self, worker_id: str) -> str | None:
        """The worker's session key in a recording or a replay (`tape.session_key`); None when
        this runtime neither records nor replays, or the worker has no session here."""
        with self._lock:
            session = self._sessions.get(worker_id)
        return session.tape_key if isinstance(session, WorkerSession) else None

    @property
    def update_order(self) -> UpdateOrder | None:
        """In a replay, the order in which the recorded run's layer 2 took in its workers'
        updates (see `update_order`); None otherwise, or when the recording kept none."""
        return getattr(getattr(self.model, "tape", None), "order", None)

    def wait(self, worker_id: str, timeout: float | None = None) -> bool:
        """Block until the worker's current turn ends; returns whether it did."""
        return self._session(worker_id).finished.wait(timeout)

    def close(self, wait: float = 2.0) -> None:
        """Stop every session's commands (at exit). When every turn has stopped within
        `wait` seconds, the checkpoint database is closed too (folding its WAL file back in);
        otherwise it is left open for the turns still finishing."""
        self.groups.kill_all()
        if self.shell_policy.cgroups is not None:
            self.shell_policy.cgroups.close()
        sessions = list(self._sessions.values())
        for session in sessions:
            session.hard_stop.set()
            if isinstance(session, AgentWorkerSession):
                session.stop()
        deadline = time.monotonic() + wait
        for session in sessions:
            session.finished.wait(max(0.0, deadline - time.monotonic()))
        for dropper in list(self._droppers):
            dropper.join(max(0.0, deadline - time.monotonic()))
        if self.recorder is not None:
            self.recorder.close()
        conn = getattr(self.saver, "conn", None)
        busy = any(s.running for s in sessions) or any(d.is_alive() for d in self._droppers)
        for session in sessions if not busy else ():  # the supervisor's last few turns
            if isinstance(session, WorkerSession) and session.unpruned_turns:
                session.carry_over()
        if conn is not None and not busy:
            with getattr(self.saver, "lock", threading.Lock()):  # no cursor is in use
                prune.close_connection(conn)  # compacted when pruning freed much of it

    # ------------------------------------------------------------------ internals

    def new_worker_id(self) -> str:
        """Reserve the next free worker id (`w<n>`) in this workspace."""
        folder = self.workspace.workers_dir
        mkdirs(folder)
        numbers = [_id_order(e.name) for e in list_dir(folder) if e.name.startswith("w")]
        n = max([0, *numbers]) + 1
        with NO_LINKS.open_dir(folder) as fd:
            while True:
                try:
                    os.mkdir(f"w{n}", dir_fd=fd)
                    return f"w{n}"
                except FileExistsError:
                    n += 1

    def _session(self, worker_id: str, spec: WorkerSpec | None = None) -> Session:
        with self._lock:
            if worker_id in self._sessions:
                return self._sessions[worker_id]
            folder = self.workspace.workers_dir / worker_id
            record = load_record(folder)
            if record is None:
                raise RuntimeLayerError(f"no worker '{worker_id}' in {self.workspace.workers_dir}")
            session = self._make_session(record, folder, spec or self._specs.get(worker_id))
            self._sessions[worker_id] = session
            return session

    def _make_session(self, record: WorkerRecord, folder: Path, spec: WorkerSpec | None) -> Session:
        if record.agent is not None:
            policy = self.shell_policy.for_stage(record.agent.network, record.limits)
            tools = ToolContext.of(self.workspace, self.jobs, self.shell_policy, record, self.model)
            return AgentWorkerSession(
                record,
                folder,
                emit=self.bus.emit,
                report=self._report,
                meter=self.meter,
                sandbox=agent_sandbox(record.agent, policy, self.workspace.root, folder / "home"),
                tools=tools,
            )
        session = WorkerSession(record, folder, emit=self.bus.emit, report=self._report)
        session.meter(self.meter)
        if self._taped:
            session.tape(self.recorder, self.workspace.workers_dir)
        extra = list(spec.extra_tools) if spec else []
        if spec is not None:
            self._specs[record.id] = spec
        session.graph = graphs.session_graph(self, record, session, extra, self._graphs)
        return session

    def _remove(self, session: WorkerSession) -> None:
        """Drop a cancelled session's checkpoints once its thread has stopped."""
        session.removed = True

        def drop() -> None:
            session.finished.wait(60)
            try:
                self.saver.delete_thread(session.record.thread_id)
            except Exception:  # the record already says cancelled; a leftover is harmless
                pass

        dropper = threading.Thread(target=drop, daemon=True, name=f"ls-drop-{session.id}")
        dropper.start()  # before it is listed: `close`, on another thread, joins the listed
        self._droppers.append(dropper)

    def _report(self, update: WorkerUpdate) -> None:
        self.on_update(update)


Session = WorkerSession | AgentWorkerSession
"""A worker session of either kind: a deepagents graph, or a coding agent over ACP."""


def _thread(session: WorkerSession) -> RunnableConfig:
    return {"configurable": {"thread_id": session.record.thread_id}}
