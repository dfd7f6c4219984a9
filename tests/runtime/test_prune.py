"""Lighter checkpoints (runtime/checkpoints/prune.py): a worker's thread keeps all its checkpoints
while it can still be resumed, and only the newest once it reached a final state — with its whole
history still readable, in this process and in the next one; closing the runtime leaves the
SQLite file alone, without its WAL."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from support.offline import run_second_half
from support.runtime import checkpoint_messages, finish

from lightscientist_jupyter.runtime.checkpoints import prune
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.vocab import Role, WorkerStatus


def checkpoint_rows(path: Path, thread_id: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        ).fetchone()
    return int(count)


def test_a_finished_worker_keeps_one_checkpoint_and_its_whole_history(make_runtime, spec_for, ws):
    runtime = make_runtime()
    spec = spec_for("idea.generate")  # asks a question first, then completes
    worker = runtime.start(spec)
    record = finish(runtime, worker)
    assert record["status"] == "waiting"
    waiting_rows = checkpoint_rows(ws.checkpoints_file, record["thread_id"])
    assert waiting_rows > 1  # resumable: its intermediate checkpoints stay
    before = checkpoint_messages(runtime, record["thread_id"])

    runtime.resume(worker, answer="small, please")
    record = finish(runtime, worker)
    assert record["status"] == "completed", record
    assert checkpoint_rows(ws.checkpoints_file, record["thread_id"]) == 1

    messages = checkpoint_messages(runtime, record["thread_id"])
    assert [type(m) for m in messages[: len(before)]] == [type(m) for m in before]
    assert messages[0].content == spec.message and isinstance(messages[0], HumanMessage)
    calls = [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = [m.name for m in messages if isinstance(m, ToolMessage)]
    assert calls == answered and calls[-1] == "complete_stage"
    asked = [m for m in messages if isinstance(m, ToolMessage) and m.name == "request_input"]
    assert "small, please" in asked[0].content  # the answer, from before the final turn

    runtime.close()
    assert not Path(f"{ws.checkpoints_file}-wal").exists()  # folded back at close
    again = make_runtime()  # a new process's view: the same history from the one checkpoint
    assert checkpoint_messages(again, record["thread_id"]) == messages
    assert again.get(worker).status == "completed"


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
