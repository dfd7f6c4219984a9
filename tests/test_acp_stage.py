"""A stage worked by a coding agent over ACP, through the real command line: the offline
model works the other stages, the fake agent (`tests/support/fake_acp_agent.py`, a real
subprocess in the run's sandbox) works its own; its permissions answered by policy or by the
researcher (`reply`) in manual mode and by the supervisor in auto mode, its usage counted, a
kill in its turn resumed, a cancel in its turn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.acp_project import (
    REPO,
    asked,
    background,
    env,
    of_type,
    project,
    start,
    state,
    table,
)
from support.waiting import wait_for

pytestmark = pytest.mark.slow


def cli(ws: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
    )


def stop(run: subprocess.Popen[str]) -> None:
    """Kill a background run still going (a test that failed half-way), and reap it."""
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGKILL)
    if run.stdout is not None and not run.stdout.closed:
        run.communicate()


def worker(ws: Path, worker_id: str) -> dict[str, Any]:
    path = ws / ".lightscientist" / "workers" / worker_id / "worker.json"
    return json.loads(path.read_text(encoding="utf-8"))


def agent_workers(ws: Path) -> list[dict[str, Any]]:
    folder = ws / ".lightscientist" / "workers"
    found = [worker(ws, p.name) for p in sorted(folder.iterdir()) if (p / "worker.json").is_file()]
    return [w for w in found if w.get("agent")]


def in_the_agents_turn(ws: Path) -> None:
    """Wait until the agent has begun its turn on stage b (its plan came)."""
    wait_for(
        lambda: any(e["stage"] == "b" for e in of_type(ws, "agent.plan")),
        "the agent's turn on b",
        within=60,
    )


def finished(run: subprocess.Popen[str], within: float = 120) -> str:
    out, err = run.communicate(timeout=within)
    assert run.returncode == 0, err
    return out


def test_stages_worked_by_the_agent_run_to_done_in_the_sandbox_with_their_usage(
    tmp_path, write_table, needs_bwrap
):
    outside = REPO / "test-output" / f"acp-outside-{uuid.uuid4().hex[:8]}.txt"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text("a file of the host, outside the workspace\n", encoding="utf-8")
    try:
        stages = project(
            tmp_path / "table",
            write_table,
            "allow",
            b=f"# b\n\nask\nusage 120 30\nread {outside}: notes/seen.txt\n",
            c="# c\n\nsay c is written\n",
        )
        ws = tmp_path / "ws"
        out = finished(start(ws, stages))
    finally:
        outside.unlink()
    assert out.strip().splitlines()[-1] == "done"
    assert state(ws)["stage"] == "done"
    assert "offline" in (ws / "out" / "a.md").read_text(encoding="utf-8").lower()
    assert (ws / "out" / "b.md").read_text(
        encoding="utf-8"
    ) == "out/b.md, written by fake-acp-agent\n"
    assert (ws / "out" / "c.md").read_text(
        encoding="utf-8"
    ) == "out/c.md, written by fake-acp-agent\n"
    assert (ws / "notes" / "seen.txt").read_text(encoding="utf-8") == (
        f"cannot read {outside}: No such file or directory\n"
    )
    b, c = agent_workers(ws)
    assert (b["stage"], b["status"], c["stage"], c["status"]) == (
        "b",
        "completed",
        "c",
        "completed",
    )
    assert b["result"] == {
        "kind": "complete_stage",
        "summary": "Wrote out/b.md.",
        "outputs": ["out/b.md"],
        "next_stage": None,
    }
    assert c["result"]["summary"] == "c is written"
    assert b["files_written"] == ["out/b.md"]  # its own edits (the note is a plain write)
    assert [e["message"] for e in of_type(ws, "agent.permission")] == [
        "Write out/b.md: Allow once (policy allow)"
    ]
    usage = cli(ws, "usage", "--by", "worker")
    assert usage.returncode == 0, usage.stderr
    rows = {line.split()[0]: line for line in usage.stdout.splitlines()[1:]}
    assert rows[b["id"]].split() == [b["id"], "1", "120", "30", "0.0", "unknown"]
    assert rows[c["id"]].split() == [c["id"], "1", "usage", "not", "reported"]


def test_under_deny_every_permission_is_refused_and_logged(tmp_path, write_table):
    stages = project(tmp_path / "table", write_table, "deny", b="# b\n\nask\n", c="# c\n")
    ws = tmp_path / "ws"
    run = start(ws, stages)
    out, err = run.communicate(timeout=120)
    assert out.strip().splitlines()[-1] == "failed", err
    assert state(ws)["status"] == "failed"
    refused = of_type(ws, "agent.permission")
    assert [e["message"] for e in refused] == ["Write out/b.md: Reject (policy deny)"] * 3
    assert len({e["worker_id"] for e in refused}) == 3  # the supervisor tried three workers
    assert not (ws / "out" / "b.md").exists()


QUESTION = "fake asks to edit out/b.md"


def test_under_ask_the_researcher_answers_the_agents_permission_with_reply(tmp_path, write_table):
    stages = project(tmp_path / "table", write_table, "ask", b="# b\n\nask\n", c="# c\n")
    ws = tmp_path / "ws"
    run = start(ws, stages, "manual")
    try:
        asked(ws, QUESTION)
        status = cli(ws, "status")
        assert "pending: d1 — fake asks to edit out/b.md\n" in status.stdout
        assert "options: Allow once | Reject — `lightscientist reply y --comment OPTION`" in (
            status.stdout
        )
        reply = cli(ws, "reply", "n", "--comment", "Allow once")
        assert reply.returncode == 0, reply.stderr
        out = finished(run)
    finally:
        stop(run)
    assert out.strip().splitlines()[-1] == "done"
    assert [e["message"] for e in of_type(ws, "agent.permission")] == [
        "Write out/b.md: Allow once (asked)"
    ]
    assert (ws / "out" / "b.md").is_file()


def test_in_auto_mode_the_supervisor_answers_the_agents_permissions(tmp_path, write_table):
    # c's agent asks to write outside the workspace first, then its output
    c = "# c\n\nask\nwrite ../escaped.md: out of bounds\nwrite out/c.md: the output\n"
    stages = project(tmp_path / "table", write_table, "ask", b="# b\n\nask\n", c=c)
    ws = tmp_path / "ws"
    out = finished(start(ws, stages, "auto"), within=180)
    assert out.strip().splitlines()[-1] == "done"
    assert not of_type(ws, "user.decision_requested")  # nothing was asked of the researcher
    decided = [
        e["message"]
        for e in of_type(ws, "supervisor.decision")
        if e["data"].get("by") == "supervisor"
    ]
    assert decided == [
        "fake asks to edit out/b.md: Allow once",
        "fake asks to edit ../escaped.md: Reject",
        "fake asks to edit out/c.md: Allow once",
    ]
    assert [e["message"] for e in of_type(ws, "agent.permission")] == [
        "Write out/b.md: Allow once (asked)",
        "Write ../escaped.md: Reject (asked)",
        "Write out/c.md: Allow once (asked)",
    ]
    assert (ws / "out" / "c.md").read_text() == "the output\n"
    assert not (tmp_path / "escaped.md").exists()


def test_a_run_killed_in_the_agents_turn_resumes_its_session(tmp_path, write_table):
    stages = project(tmp_path / "table", write_table, "allow", b="# b\n\nsleep 3\n", c="# c\n")
    ws = tmp_path / "ws"
    run = start(ws, stages)
    try:
        in_the_agents_turn(ws)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
    (b,) = agent_workers(ws)
    assert b["status"] == "running" and b["agent_session"]
    assert not (ws / "out" / "b.md").exists()
    resumed = cli(ws, "resume", timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert state(ws)["stage"] == "done"
    loaded = [e for e in of_type(ws, "session.start") if e["data"].get("agent_session")]
    assert [e["message"] for e in loaded] == [f"loaded the agent's session {b['agent_session']}"]
    b_after = worker(ws, b["id"])
    assert (b_after["status"], b_after["agent_session"]) == ("completed", b["agent_session"])
    assert (ws / "out" / "b.md").is_file()


def test_a_permission_pending_when_the_run_was_killed_is_answered_after_resume(
    tmp_path, write_table
):
    stages = project(tmp_path / "table", write_table, "ask", b="# b\n\nask\n", c="# c\n")
    ws = tmp_path / "ws"
    run = start(ws, stages, "manual")
    try:
        asked(ws, QUESTION)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
    resumed = background(ws, "resume")
    try:
        wait_for(
            lambda: "runner:  pid" in cli(ws, "status").stdout or resumed.poll() is not None,
            "the resumed run",
            within=60,
        )
        assert resumed.poll() is None, resumed.communicate()
        assert (state(ws).get("pending") or {}).get("question") == QUESTION  # asked once
        reply = cli(ws, "reply", "y")
        assert reply.returncode == 0, reply.stderr
        out = finished(resumed)
    finally:
        stop(resumed)
    assert out.strip().splitlines()[-1] == "done"
    (b,) = [w for w in agent_workers(ws) if w["stage"] == "b"]
    loaded = [e["message"] for e in of_type(ws, "session.start") if e["data"].get("agent_session")]
    assert loaded == [f"loaded the agent's session {b['agent_session']}"]
    assert [e["message"] for e in of_type(ws, "agent.permission")] == [
        "Write out/b.md: Allow once (asked)"
    ]
    assert (ws / "out" / "b.md").is_file()


def test_a_cancel_in_the_agents_turn_ends_it_cleanly(tmp_path, write_table):
    stages = project(tmp_path / "table", write_table, "allow", b="# b\n\nsleep 60\n", c="# c\n")
    ws = tmp_path / "ws"
    run = start(ws, stages)
    try:
        in_the_agents_turn(ws)
        cancelled = cli(ws, "cancel")
        assert cancelled.returncode == 0, cancelled.stderr
        run.communicate(timeout=60)
    finally:
        stop(run)
    assert state(ws)["status"] == "cancelled"
    (b,) = agent_workers(ws)
    assert b["status"] == "cancelled"
    assert b["result"]["notes"] == (
        "agent 'fake' cancelled: it stopped its turn. Files it wrote: none"
    )
    assert not (ws / "out" / "b.md").exists()


def test_the_stage_goes_where_the_agents_complete_stage_over_mcp_said(
    tmp_path, write_table, needs_bwrap
):
    note = "# {0}\n\nWrite the note.\n"
    b = "# b\n\ncomplete nowhere: a first try\ncomplete d: b is written; d should come next\n"
    stages = write_table(
        tmp_path / "table",
        table("allow", branching=True),
        skills={
            "skills/a.md": note.format("a"),
            "skills/b.md": b,
            "skills/c.md": note.format("c"),
            "skills/d.md": note.format("d"),
        },
    )
    ws = tmp_path / "ws"
    out = finished(start(ws, stages))
    assert out.strip().splitlines()[-1] == "done"
    moves = [(e["data"]["from"], e["data"]["to"]) for e in of_type(ws, "stage.transition")]
    assert ("b", "d") in moves and not any(to == "c" for _, to in moves)
    assert (ws / "out" / "d.md").is_file() and not (ws / "out" / "c.md").exists()
    assert (ws / "notes" / "complete-1.txt").read_text(encoding="utf-8") == (
        "Not delivered: 'nowhere' is not an allowed next stage of 'b'; choose one of c, d "
        "(default: c). Call complete_stage again.\n"
    )
    (b_worker,) = agent_workers(ws)
    assert b_worker["result"] == {
        "kind": "complete_stage",
        "summary": "b is written; d should come next",
        "outputs": ["out/b.md"],
        "next_stage": "d",
    }
    ours = [e for e in of_type(ws, "tool.result") if e["data"].get("via") == "mcp"]
    assert [e["message"].split(":")[0] for e in ours] == [
        "complete_stage failed",
        "complete_stage → Delivered to the supervisor; suggested next stage",
    ]


def test_the_agents_request_input_over_mcp_is_answered_by_the_supervisor(
    tmp_path, write_table, needs_bwrap
):
    b = "# b\n\ninput notes/answer.txt: Which compute budget may I use?\ncomplete c: done\n"
    stages = project(tmp_path / "table", write_table, "allow", b=b, c="# c\n")
    ws = tmp_path / "ws"
    out = finished(start(ws, stages))
    assert out.strip().splitlines()[-1] == "done"
    assert (ws / "notes" / "answer.txt").read_text(encoding="utf-8") == (
        "Answer from the supervisor: small: keep every batch to a few seconds on a laptop CPU"
    )
    waiting = [e["message"] for e in of_type(ws, "worker.waiting")]
    assert waiting == ["asks: Which compute budget may I use?"]
