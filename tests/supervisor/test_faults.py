"""Faults of layers 1 and 2, tried as a user meets them (issue 20, points 1 and 2).

Every run here is a real project in a temporary folder, driven by the offline model through
the real supervisor, runtime and controller; the only fault injected is on disk (a folder
where a worker wants to write a file), exactly as a user's machine could have it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from support.tables import loop_stages

from lightscientist_jupyter import api
from lightscientist_jupyter.events import Event
from lightscientist_jupyter.supervisor.tools import call_position

PROBE = "c2-lr-sweep"


def _events(ws: Path) -> list[dict]:
    lines = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _workers(ws: Path) -> list[dict]:
    folder = ws / ".lightscientist" / "workers"
    return [json.loads(p.read_text()) for p in folder.glob("*/worker.json")]


def test_a_stage_that_cannot_finish_fails_with_the_real_reason(tmp_path):
    """`--stage experiment.loop` on a fresh folder: the setup's files are missing, so each
    finish is refused. Every retry starts a real worker (the offline supervisor reuses its
    tool-call ids), and the stage fails with the refusal, not the idle message."""
    ws = tmp_path / "project"
    table = loop_stages(tmp_path / "stages")  # the loop as one plan: one worker a try
    run = api.start("x", ws, mode="auto", stage="experiment.loop", stages=table)
    assert run.wait(timeout=120) == "failed"
    state = json.loads((ws / ".lightscientist" / "state.json").read_text())
    assert state["reason"].startswith(
        "required outputs are not ready: experiment/results.csv (missing)"
    ), state["reason"]
    assert "no worker running" not in state["reason"]
    created = [e["worker_id"] for e in _events(ws) if e["type"] == "worker.created"]
    assert created == ["w1", "w2", "w3"]  # the first worker and two retries, each real
    kinds = [e["data"]["event"]["kind"] for e in _events(ws) if e["type"] == "supervisor.event"]
    assert kinds == ["stage_started"] + ["worker_finished", "stage_rejected"] * 3, kinds


@pytest.mark.slow
def test_a_probe_whose_file_tools_fail_is_not_delivered_and_its_retry_reaches_done(tmp_path):
    """One of the two parallel probes cannot write its script (a folder is in the way), so
    its `execute` fails too, yet it calls complete_stage claiming its note. It is failed for
    the claim, the supervisor starts that probe again (the fault is gone by then), and the
    project reaches done with every file PROCESS.md names on disk."""
    ws = tmp_path / "project"
    blocker = ws / "idea" / "probes" / f"{PROBE}.py"
    blocker.mkdir(parents=True)
    healed: list[str] = []

    def heal(event: Event) -> None:  # the fault lasts for the first probe's attempt only
        if event.type == "session.end" and event.data.get("status") == "failed" and not healed:
            healed.append(str(event.worker_id))
            shutil.rmtree(blocker)

    run = api.start("Does warmup help?", ws, mode="auto", subscribers=(heal,))
    assert run.wait(timeout=300) == "done", run.state().reason
    assert len(healed) == 1
    failed = next(w for w in _workers(ws) if w["id"] == healed[0])
    assert failed["status"] == "failed"
    assert failed["labels"] == {"label": f"probe {PROBE}"}
    assert failed["error"] == (
        f"a file tool failed, yet it reported idea/probes/{PROBE}.md (missing) as delivered in "
        "complete_stage"
    )
    again = [
        w
        for w in _workers(ws)
        if w["labels"].get("label") == f"probe {PROBE}" and w["id"] != healed[0]
    ]
    assert [w["status"] for w in again] == ["completed"]
    process = (ws / "PROCESS.md").read_text(encoding="utf-8")
    assert f"idea/probes/{PROBE}.md" in process
    for line in process.splitlines():  # every output an entry names exists, non-empty
        if line.startswith("Outputs:"):
            for rel in line.split(":", 1)[1].replace("`", "").split(","):
                rel = rel.strip()
                if rel:
                    assert (ws / rel).is_file() and (ws / rel).stat().st_size > 0, rel


ONE_STAGE = """\
start = "note"

[stages.note]
skill = "skills/note.md"
outputs = ["notes/one.md"]
next = "done"
allowed = ["done"]
"""


def _cli(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )


@pytest.mark.slow
def test_resume_of_a_failed_project_retries_the_failed_stage_once_the_cause_is_gone(
    tmp_path, write_table
):
    """The stage's output cannot be written (a folder is in its place): the project fails
    with that reason. Once the folder is gone, `resume` says what failed before, starts the
    stage again with fresh workers and reaches done; the history is kept."""
    table = write_table(tmp_path / "table", ONE_STAGE)
    ws = tmp_path / "project"
    (ws / "notes" / "one.md").mkdir(parents=True)
    first = _cli(ws, "research", "x", "--mode", "auto", "--stages", str(table))
    assert first.returncode == 1, first.stderr
    assert first.stdout.splitlines()[-1] == "failed"
    reason = json.loads((ws / ".lightscientist" / "state.json").read_text())["reason"]
    assert reason.startswith("w3 failed: a file tool failed, yet it reported notes/one.md")
    workers_before = {w["id"] for w in _workers(ws)}

    again = _cli(ws, "resume")  # the cause is still there: it fails again, saying so
    assert again.returncode == 1
    assert again.stdout.splitlines()[0] == (
        f"note failed before ({reason}); it starts again from its start with fresh workers"
    )

    (ws / "notes" / "one.md").rmdir()
    last = _cli(ws, "resume")
    assert last.returncode == 0, last.stdout + last.stderr
    assert last.stdout.splitlines()[0].startswith("note failed before (")
    assert last.stdout.splitlines()[-1] == "done"
    assert (ws / "notes" / "one.md").read_text().strip()
    retried = [e for e in _events(ws) if e["type"] == "stage.retried"]
    assert len(retried) == 2 and retried[0]["stage"] == "note"
    starts = [e for e in _events(ws) if e["type"] == "supervisor.event"]
    assert [e["data"]["event"]["kind"] for e in starts].count("stage_started") == 3
    fresh = [w for w in _workers(ws) if w["id"] not in workers_before and w["role"] == "worker"]
    assert fresh and all(w["status"] in ("completed", "failed") for w in fresh)
    state = json.loads((ws / ".lightscientist" / "state.json").read_text())
    assert state["visits"] == {"note": 1}  # the same visit, retried: the history is kept


def _runtime(messages: list, call_id: str, thread: str = "supervisor-1") -> ToolRuntime:
    return ToolRuntime(
        state={"messages": messages},
        context=None,
        config={"configurable": {"thread_id": thread}},
        stream_writer=lambda _: None,
        tool_call_id=call_id,
        store=None,
    )


def test_a_start_worker_call_is_known_by_its_place_not_by_the_model_s_call_id():
    """Servers that number calls per reply send `call_0` every time: two such calls are two
    calls; the same call seen again from the same checkpoint (a replay) is the same one."""
    first = AIMessage("", tool_calls=[{"name": "start_worker", "args": {}, "id": "call_0"}])
    answer = ToolMessage("started w1", tool_call_id="call_0")
    second = AIMessage("", tool_calls=[{"name": "start_worker", "args": {}, "id": "call_0"}])
    history = [HumanMessage("event 1"), first]
    one = call_position(_runtime(history, "call_0"))
    two = call_position(_runtime([*history, answer, HumanMessage("event 2"), second], "call_0"))
    assert one == "supervisor-1:1.0" and two == "supervisor-1:4.0"
    assert call_position(_runtime(list(history), "call_0")) == one  # a replay: the same place
    assert call_position(_runtime(history, "call_0", thread="supervisor-2")) != one
