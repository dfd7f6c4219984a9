"""A session outlives its process: a worker waits in a child process, the child is killed with
SIGKILL, and a new runtime in this process resumes it from the checkpoints (the SQLite file, or
a PostgreSQL database) with the answer."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from support.runtime import checkpoint_messages, finish

from lightscientist_jupyter.offline.playbook import BUDGET_QUESTION

CHILD = textwrap.dedent("""\
    import json, sys, time
    sys.path[:0] = [sys.argv[2], sys.argv[2] + "/.."]  # tests/runtime and tests/
    from support.runtime import stage_spec
    from lightscientist_jupyter.controller import load_table
    from lightscientist_jupyter.runtime.models.resolver import resolve_model
    from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
    from lightscientist_jupyter.workspace import Workspace

    ws = Workspace.at(sys.argv[1])
    runtime = ExecutionRuntime(ws, resolve_model("offline"), checkpointer=sys.argv[3])
    spec = stage_spec(load_table(), ws, "idea.generate")
    worker = runtime.start(spec)
    runtime.wait(worker, 60)
    print(json.dumps({"worker": worker, "status": runtime.get(worker).status,
                      "message": spec.message}), flush=True)
    time.sleep(600)  # still holding the database when it is killed
    """)


def test_a_waiting_worker_resumes_in_a_new_process_after_sigkill(
    tmp_path: Path, ws, make_runtime, updates, checkpoints
):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen(
        [sys.executable, str(script), str(ws.root), str(Path(__file__).parent), checkpoints],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(90, child.kill)
    watchdog.start()
    try:
        line = child.stdout.readline()
        assert line, f"the child printed nothing: {child.stderr.read()}"
        told = json.loads(line)
        assert told["status"] == "waiting"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        watchdog.cancel()
        child.kill()
        child.wait()
        child.stdout.close()
        child.stderr.close()
    worker = told["worker"]
    if checkpoints == "sqlite":
        assert (ws.checkpoints_file.stat().st_mode & 0o777) == 0o600
    else:
        assert not ws.checkpoints_file.exists()

    # this process: a fresh runtime on the same workspace
    runtime = make_runtime(checkpointer=checkpoints)
    record = runtime.get(worker)
    assert (record.status, record.question) == ("waiting", BUDGET_QUESTION)
    runtime.resume(worker, answer="small")
    record = finish(runtime, worker)

    assert record["status"] == "completed", record
    assert record["result"]["next_stage"] == "idea.evaluate"
    assert "small" in (ws.root / "idea" / "candidates.md").read_text()
    assert "- `/idea/candidates.md`" in (ws.workers_dir / worker / "agent-run.md").read_text()
    assert updates.statuses(worker)[0] == "running" and updates.statuses(worker)[-1] == "completed"
    assert updates.of(worker)[-1].progress.model_calls > 2  # counters carried over from disk

    messages = checkpoint_messages(runtime, record["thread_id"])
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    assert [m.content for m in humans] == [told["message"]]
    asks = [
        c
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["name"] == "request_input"
    ]
    assert len(asks) == 1 and asks[0]["args"] == {"question": BUDGET_QUESTION}
    answers = [
        m.content for m in messages if isinstance(m, ToolMessage) and m.name == "request_input"
    ]
    assert answers == ["Answer from the supervisor: small"]
    assert messages.index(humans[0]) == 0
    assert any(isinstance(m, ToolMessage) and m.name == "complete_stage" for m in messages)


def test_a_worker_killed_before_its_first_checkpoint_starts_its_turn_again(
    ws, make_runtime, checkpoints
):
    """A kill can land between a worker's record (`running`, its `task.md`) and its first
    checkpoint, which LangGraph writes while the next step runs. Resumed, the worker starts its
    turn again from its first message, rather than failing with nothing to continue from."""
    from support.runtime import stage_spec

    from lightscientist_jupyter.controller import load_table
    from lightscientist_jupyter.runtime.session.worker_files import load_record, save_record

    first = make_runtime(checkpointer=checkpoints)
    spec = stage_spec(load_table(), ws, "idea.generate")
    worker = first.start(spec)
    assert first.wait(worker, 60)
    thread = first.get(worker).thread_id
    first.close()
    # the disk as such a kill leaves it: the record says running, the thread has no checkpoint
    folder = ws.workers_dir / worker
    save_record(folder, dataclasses.replace(load_record(folder), status="running"))
    second = make_runtime(checkpointer=checkpoints)
    second.saver.delete_thread(thread)
    assert second.saver.get_tuple({"configurable": {"thread_id": thread}}) is None

    second.resume(worker)
    assert second.wait(worker, 60)
    record = second.get(worker)
    assert (record.status, record.question) == ("waiting", BUDGET_QUESTION), record.error
    humans = [m.content for m in checkpoint_messages(second, thread) if isinstance(m, HumanMessage)]
    assert humans == [spec.message]
