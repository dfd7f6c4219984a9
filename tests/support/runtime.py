"""Helpers of the layer-3 tests: the scripted chat server, update collection, stage tasks.

The only stand-in in these tests is the model: the offline scientist model, or `ChatServer`,
a tiny OpenAI-compatible HTTP server (standard library, 127.0.0.1, a random port, its own
thread) that answers `POST /v1/chat/completions` from a per-test script, as JSON or as
`stream=True` server-sent events. Everything else — deepagents graphs, SQLite checkpoints, the
shell, the event bus — is the real thing.
"""

from __future__ import annotations

import shutil
import threading
from typing import Any

from langgraph.graph import END, START, MessagesState, StateGraph

from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.offline.study.files import script_files
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecordDict
from lightscientist_jupyter.runtime.types import WorkerSpec, WorkerUpdate
from lightscientist_jupyter.supervisor.prompts import worker_message
from lightscientist_jupyter.values.task import StageTask
from lightscientist_jupyter.workspace import Workspace
from support.chat_server import ChatServer, answer, http_error, tool_call  # noqa: F401 (re-exported)

GOAL = "Does learning-rate warmup help a small MLP?"


# ----------------------------------------------------------------------------- updates


class Updates:
    """Collects the `WorkerUpdate`s that worker threads report."""

    def __init__(self) -> None:
        self.items: list[WorkerUpdate] = []
        self._lock = threading.Lock()

    def __call__(self, update: WorkerUpdate) -> None:
        with self._lock:
            self.items.append(update)

    def of(self, worker_id: str) -> list[WorkerUpdate]:
        with self._lock:
            return [u for u in self.items if u.worker_id == worker_id]

    def statuses(self, worker_id: str) -> list[str]:
        return [u.status for u in self.of(worker_id)]


# ----------------------------------------------------------------------------- tasks, checkpoints


def stage_task(table: StageTable, ws: Workspace, stage: str, visit: int = 1) -> StageTask:
    s = table[stage]
    return StageTask(
        goal=GOAL,
        stage=stage,
        skill_path=str(s.skill),
        outputs=s.outputs,
        default_next=s.next,
        allowed_next=s.allowed,
        workspace=str(ws.root),
        process_md=str(ws.process_md),
        visit=visit,
        task_id=f"{stage}#{visit}",
    )


def copy_skill(ws: Workspace, task: StageTask) -> str:
    """What `WorkerControl.copy_skill` (layer 2) does: workers read only the workspace."""
    target = ws.state_dir / "skills" / f"{task.stage}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(task.skill_path, target)
    return f"/.lightscientist/skills/{task.stage}.md"


def write_study_script(ws: Workspace, target: str) -> None:
    """Put one of the offline study's scripts at `target`, with the modules it imports beside
    it, as its worker would have written them."""
    for path, text in script_files(target).items():
        (ws.root / path).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / path).write_text(text, encoding="utf-8")


def stage_spec(table: StageTable, ws: Workspace, stage: str, visit: int = 1) -> WorkerSpec:
    """The spec layer 2 would hand down for one worker of `stage`."""
    task = stage_task(table, ws, stage, visit)
    message = worker_message(task, skill=copy_skill(ws, task), digest="")
    return WorkerSpec(message=message, stage=stage, task_id=task.task_id, goal=GOAL)


def plain_spec(message: str = "Do the task.", **fields: Any) -> WorkerSpec:
    """A worker spec for a scripted real-model worker (no stage table involved)."""
    return WorkerSpec(message=message, stage=fields.pop("stage", "custom.stage"), **fields)


def checkpoint_messages(runtime: ExecutionRuntime | Any, thread_id: str) -> list[Any]:
    """The messages a session's checkpoints hold (in the runtime's saver, or the saver given),
    read back through a plain LangGraph graph on the same saver (checkpoints store changed
    channels only, so the graph reassembles them)."""
    graph = StateGraph(MessagesState)
    graph.add_node("noop", lambda state: {})
    graph.add_edge(START, "noop")
    graph.add_edge("noop", END)
    saver = runtime.saver if isinstance(runtime, ExecutionRuntime) else runtime
    state = graph.compile(checkpointer=saver).get_state({"configurable": {"thread_id": thread_id}})
    return list(state.values.get("messages", []))


def finish(runtime: ExecutionRuntime, worker_id: str, timeout: float = 30.0) -> WorkerRecordDict:
    """Wait for the worker's current turn to end; returns its record as `worker.json` spells it
    (so the tests check the keys the readers of that file use)."""
    assert runtime.wait(worker_id, timeout), f"worker {worker_id} still running after {timeout} s"
    return runtime.get(worker_id).to_dict()
