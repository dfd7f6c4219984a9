"""Lighter checkpoints (runtime/checkpoints/prune.py): a worker's thread keeps all its checkpoints
while it can still be resumed, and once it reached a final state it is carried over to a new
thread holding only its final state — its whole history still readable, in this process and in
the next one, and the old thread gone; the supervisor agent's carried thread is at rest, so a
later turn goes on from it; closing the runtime leaves the SQLite file compact, without its
WAL."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from support.chat_server import answer, tool_call
from support.offline import run_second_half
from support.runtime import checkpoint_messages, finish

from lightscientist_jupyter.runtime.checkpoints import prune
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.session.lifecycle import SETTLES
from lightscientist_jupyter.runtime.session.worker_files import load_record, save_record
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.supervisor.agent import SUPERVISOR_ID, run_turn
from lightscientist_jupyter.vocab import Role, WorkerStatus


def checkpoint_rows(path: Path, thread_id: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        ).fetchone()
    return int(count)


def checkpoints_of(runtime: ExecutionRuntime, thread_id: str) -> int:
    """How many checkpoints the thread has (its own, not its subgraphs'), as the saver lists
    them: the SQLite file's or the PostgreSQL database's."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return len(list(runtime.saver.list(config)))


def state_of(runtime: ExecutionRuntime, worker: str, spec: WorkerSpec | None = None) -> Any:
    """The session's state as its own graph reads it back (`get_state`, as history does)."""
    session = runtime.attach(worker, spec)
    return session.graph.get_state({"configurable": {"thread_id": session.record.thread_id}})


def test_a_finished_worker_keeps_one_checkpoint_and_its_whole_history(
    make_runtime, spec_for, ws, checkpoints
):
    """On SQLite and on PostgreSQL alike."""
    runtime = make_runtime(checkpointer=checkpoints)
    spec = spec_for("idea.generate")  # asks a question first, then completes
    worker = runtime.start(spec)
    record = finish(runtime, worker)
    assert record["status"] == "waiting"
    waiting_rows = checkpoints_of(runtime, record["thread_id"])
    assert waiting_rows > 1  # resumable: its intermediate checkpoints stay
    session = runtime.attach(worker)
    assert prune.carry_over(session.graph, session.record) is None  # and its thread too
    assert checkpoints_of(runtime, record["thread_id"]) == waiting_rows
    before = state_of(runtime, worker).values["messages"]
    waiting_thread = record["thread_id"]

    runtime.resume(worker, answer="small, please")
    record = finish(runtime, worker)
    assert record["status"] == "completed", record
    assert record["thread_id"] != waiting_thread  # carried over to a new thread...
    assert checkpoints_of(runtime, waiting_thread) == 0  # ...the old one dropped
    assert checkpoints_of(runtime, record["thread_id"]) == 1

    state = state_of(runtime, worker)
    assert state.next == () and state.tasks == ()  # at rest, as the finished thread was
    messages = state.values["messages"]
    assert messages[: len(before)] == before  # the same messages, in order, with their ids
    assert [m.id for m in messages] == [
        m.id for m in checkpoint_messages(runtime, record["thread_id"])
    ]
    assert messages[0].content == spec.message and isinstance(messages[0], HumanMessage)
    calls = [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = [m.name for m in messages if isinstance(m, ToolMessage)]
    assert calls == answered and calls[-1] == "complete_stage"
    answers = [m for m in messages if isinstance(m, AIMessage)]
    assert len(answers) == record["progress"]["model_calls"]  # every turn's, none missing
    asked = [m for m in messages if isinstance(m, ToolMessage) and m.name == "request_input"]
    assert "small, please" in asked[0].content  # the answer, from before the final turn

    runtime.close()
    if checkpoints == "sqlite":
        assert not Path(f"{ws.checkpoints_file}-wal").exists()  # folded back at close
    # a new process's view: the same history, from the one checkpoint
    again = make_runtime(checkpointer=checkpoints)
    assert state_of(again, worker).values["messages"] == messages
    assert checkpoint_messages(again, record["thread_id"]) == messages
    assert again.get(worker).status == "completed"


def supervisor_spec(message: str) -> WorkerSpec:
    """A supervisor agent's session (a plain agent graph, no files) with a tool that settles
    its turn, one that does not, and the supervisor's id."""

    @tool(response_format="content_and_artifact")
    def start_it(label: str = "") -> tuple[str, Any]:
        """Start something; settles the event."""
        return f"started {label}", {SETTLES: "continue"}

    @tool
    def look() -> str:
        """A query: never settles."""
        return "nothing to see"

    return WorkerSpec(
        message=message,
        role=Role.SUPERVISOR,
        worker_id=SUPERVISOR_ID,
        file_tools=False,
        max_input_messages=True,
        system_prompt="You supervise.",
        extra_tools=[start_it, look],
    )


@pytest.mark.parametrize("ended_by", ["a settling tool", "the model"])
def test_the_supervisors_carried_thread_is_at_rest_and_goes_on(
    chat_server, chat_model, make_runtime, ws, ended_by
):
    """The supervisor agent's thread is carried over when its runtime closes between two
    decisions, its last turn ended by a tool that settles it (its graph then ends on a jump)
    or by the model's answer. The next process reads the same history, does not take the
    thread for a turn a crash cut short even when the record says a turn began (a crash
    before that turn wrote anything), and the next decision goes on in that thread."""
    settled_turn = [tool_call("start_it", label="a")]
    answered_turn = [tool_call("look"), answer("nothing yet")]
    by_tool = ended_by == "a settling tool"
    chat_server.play(*(answered_turn + settled_turn if by_tool else settled_turn + answered_turn))
    first = make_runtime(chat_model, retries=0)
    run_turn(first, supervisor_spec("event: the stage started"))
    run_turn(first, supervisor_spec("event: a worker finished"))
    record = first.get(SUPERVISOR_ID)
    assert record.result == {"kind": "reply", "text": "continue" if by_tool else "nothing yet"}
    history = state_of(first, SUPERVISOR_ID).values["messages"]
    assert isinstance(history[-1], ToolMessage if by_tool else AIMessage)
    assert checkpoint_rows(ws.checkpoints_file, record.thread_id) > 1
    first.close()

    folder = ws.workers_dir / SUPERVISOR_ID
    carried = load_record(folder)
    assert carried is not None and carried.thread_id != record.thread_id
    assert checkpoint_rows(ws.checkpoints_file, record.thread_id) == 0
    assert checkpoint_rows(ws.checkpoints_file, carried.thread_id) == 1
    save_record(folder, dataclasses.replace(carried, status=WorkerStatus.RUNNING))

    second = make_runtime(chat_model, retries=0)
    spec = supervisor_spec("event: another worker finished")
    assert state_of(second, SUPERVISOR_ID, spec).values["messages"] == history
    assert state_of(second, SUPERVISOR_ID, spec).next == ()
    assert not second.has_unfinished_turn(SUPERVISOR_ID, spec)
    chat_server.play(tool_call("start_it", label="b"))
    run_turn(second, spec)
    record = second.get(SUPERVISOR_ID)
    assert record.thread_id == carried.thread_id  # the decision went on in the carried thread
    messages = state_of(second, SUPERVISOR_ID, spec).values["messages"]
    assert messages[: len(history)] == history
    assert [type(m) for m in messages[len(history) :]] == [HumanMessage, AIMessage, ToolMessage]
    assert messages[len(history)].content == "event: another worker finished"


def test_a_thread_is_pruned_when_no_turn_can_resume_mid_way():
    def record(role: Role, status: WorkerStatus) -> WorkerRecord:
        return WorkerRecord(id="x", role=role, status=status)

    worker, supervisor = Role.WORKER, Role.SUPERVISOR
    assert not prune.settled(record(supervisor, WorkerStatus.RUNNING))
    assert prune.settled(record(supervisor, WorkerStatus.BACKGROUND))  # between two decisions
    for status in (WorkerStatus.RUNNING, WorkerStatus.WAITING, WorkerStatus.BACKGROUND):
        assert not prune.settled(record(worker, status))  # it will be resumed
    for status in (WorkerStatus.COMPLETED, WorkerStatus.FAILED, WorkerStatus.CANCELLED):
        assert prune.settled(record(worker, status))


@pytest.mark.slow
def test_after_a_run_every_session_keeps_one_checkpoint(tmp_path, monkeypatch):
    """The offline project from experiment.setup to the end: the supervisor agent's thread,
    renewed every few turns while the run goes on (the old ones deleted), is pruned when it
    closes, so each worker and the supervisor keep exactly one checkpoint, the supervisor
    one thread, and no WAL file is left."""
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    ws = tmp_path / "ws"
    run_second_half(ws)
    db = ws / ".lightscientist" / "checkpoints.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = dict(
            conn.execute(
                "SELECT thread_id, count(*) FROM checkpoints WHERE checkpoint_ns = '' "
                "GROUP BY thread_id"
            ).fetchall()
        )
    supervisor = json.loads((ws / ".lightscientist/workers/supervisor/worker.json").read_text())
    turns = supervisor["progress"]["model_calls"]
    assert turns > prune.SUPERVISOR_EVERY  # it was renewed during the run
    assert 0 < supervisor["answers_before"] < turns  # the answers of its earlier threads
    assert rows.pop(supervisor["thread_id"]) == 1
    assert not [t for t in rows if t.startswith("supervisor-")]  # the earlier ones are gone
    assert rows and set(rows.values()) == {1}  # the workers
    assert not Path(f"{db}-wal").exists()
    with contextlib.closing(sqlite3.connect(db)) as conn:  # the dropped threads' pages too
        pages, free = (
            conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count")
        )
    assert free / pages < prune.VACUUM_FREE_SHARE


@pytest.mark.slow
def test_a_recording_replays_across_the_supervisors_renewed_threads(tmp_path, monkeypatch):
    """A recording numbers the supervisor's calls over all its threads (`answers_before`):
    a run recorded with the offline model replays strictly into a new folder, though the
    supervisor changed threads on the way — every request the replay makes is the one
    recorded at its number (the workers' requests differ only in what their commands print,
    which a replay reports and goes on)."""
    from lightscientist_jupyter.app.project import Project

    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    first, second = tmp_path / "first", tmp_path / "second"
    for ws, model in ((first, "offline"), (second, f"replay:{first}")):
        project = Project.create(
            ws, "Does warmup help?", mode="auto", stage="experiment.setup", model=model,
            record=model == "offline", skip_model_check=True,
        )  # fmt: skip
        try:
            assert project.run() == "done"
        finally:
            project.close()

    def events(ws: Path, kind: str) -> list[dict]:
        lines = (ws / ".lightscientist" / "events.jsonl").read_text().splitlines()
        return [e for e in map(json.loads, lines) if e["type"] == kind]

    supervisor = json.loads((second / ".lightscientist/workers/supervisor/worker.json").read_text())
    assert supervisor["answers_before"] > 0  # the replay's supervisor was renewed too
    decided = [e["message"] for e in events(first, "supervisor.decision")]
    assert len(decided) > prune.SUPERVISOR_EVERY
    assert [e["message"] for e in events(second, "supervisor.decision")] == decided
    diverged = [e for e in events(second, "replay.divergence") if e["worker_id"] == "supervisor"]
    assert diverged == []
