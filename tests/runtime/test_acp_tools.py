"""Our tools served to a coding agent over MCP (`runtime.acp.tool_server`, `worker_tools`),
through the real `ExecutionRuntime` with the fake agent as a real subprocess that knows our
tools only as the stdio MCP server `session/new` (or `session/load`) gave it: its
`complete_stage` is the worker's result, a next stage its task does not allow is refused in
layer 1's words, its `request_input` makes the worker wait for the answer a resume brings, a
job it submits puts the worker in the background (and a cancel stops it), every event of a
call is redacted, and the socket answers nothing to a process without the turn's token nor
shows itself to another worker's sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.runtime import Updates
from support.waiting import wait_for

from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.acp.tool_server import BRIDGE, SOCKET_NAME
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.protocol import render_header
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session.lifecycle import lifecycle_tools
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.vocab import AgentPermissions, WorkerStatus
from lightscientist_jupyter.workspace import Workspace

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py")
FAKE_AGENT = AgentSpec("fake", (sys.executable, FAKE), (), AgentPermissions.ALLOW)


def task(*lines: str) -> str:
    fields = {
        "role": "worker",
        "stage": "a",
        "outputs": ["out/a.md"],
        "default_next": "b",
        "allowed_next": ["b", "c"],
    }
    return render_header("LightScientist task", fields, "\n".join(lines))


@pytest.fixture(params=["none"])
def runtime(request, tmp_path):
    """A runtime in `tmp_path/ws`, unsandboxed unless a test asks for `bwrap` (the sandboxed
    run through the command line is `test_acp_stage`'s); its updates, and its events as they
    were emitted."""
    ws = Workspace.at(tmp_path / "ws")
    updates = Updates()
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)
    rt = ExecutionRuntime(
        ws,
        resolve_model("offline"),
        on_update=updates,
        bus=bus,
        checkpointer="memory",
        meter=UsageMeter(ws.state_dir / "usage.jsonl", model="offline"),
        shell_policy=ShellPolicy(sandbox=request.param == "bwrap"),
    )
    yield rt, updates, seen
    rt.close()


def start(rt: ExecutionRuntime, *lines: str) -> str:
    return rt.start(WorkerSpec(message=task(*lines), stage="a", task_id="a#1", agent=FAKE_AGENT))


def test_complete_stage_over_mcp_is_the_workers_result_with_its_next_stage(runtime):
    rt, updates, _ = runtime
    wid = start(rt, "complete c: wrote a; c comes next")
    assert rt.wait(wid, 30)
    record = rt.get(wid)
    assert record.status == WorkerStatus.COMPLETED, record.error
    assert record.result == {
        "kind": "complete_stage",
        "summary": "wrote a; c comes next",
        "outputs": ["out/a.md"],
        "next_stage": "c",
    }
    assert updates.of(wid)[-1].result == record.result
    answer = (rt.workspace.root / "notes" / "complete-1.txt").read_text(encoding="utf-8")
    assert answer == (
        "Delivered to the supervisor; suggested next stage: c. Your work on this stage is "
        "over: end your turn now.\n"
    )


def test_a_next_stage_the_task_does_not_allow_is_refused_and_the_agent_tries_again(runtime):
    rt, _, seen = runtime
    key = "sk-" + "k3y" * 8  # a key-like text in its arguments: redacted in every event
    wid = start(rt, f"complete nowhere: first try {key}", f"complete b: second try {key}")
    assert rt.wait(wid, 30)
    refused = (rt.workspace.root / "notes" / "complete-1.txt").read_text(encoding="utf-8")
    assert refused == (
        "Not delivered: 'nowhere' is not an allowed next stage of 'a'; choose one of b, c "
        "(default: b). Call complete_stage again.\n"
    )
    record = rt.get(wid)
    assert record.status == WorkerStatus.COMPLETED
    assert record.result is not None
    assert record.result["next_stage"] == "b"
    assert record.result["summary"] == "second try [REDACTED]"
    ours = [e.message for e in seen if e.type == "tool.result" and e.data.get("via")]
    assert ours[0].startswith("complete_stage failed: Not delivered: 'nowhere' is not an")
    assert ours[1].startswith("complete_stage → Delivered to the supervisor")
    (call, _) = [e for e in seen if e.type == "tool.call" and e.data.get("via")]
    assert "[REDACTED]" in call.data["args"]
    assert not [e for e in seen if key in e.message or key in json.dumps(e.data)]


def test_a_session_loaded_after_a_crash_is_given_the_tools_again_with_a_new_token(runtime):
    rt, _, _ = runtime
    wid = start(rt, "complete c: delivered")
    assert rt.wait(wid, 30)
    first = rt.get(wid)
    folder = rt.workspace.workers_dir / wid
    # what a crash in its turn leaves: the record `running`, its agent's session named
    raw = json.loads((folder / "worker.json").read_text())
    raw.update(status="running", result=None)
    (folder / "worker.json").write_text(json.dumps(raw))
    (rt.workspace.root / "notes" / "complete-1.txt").unlink()
    again = ExecutionRuntime(rt.workspace, resolve_model("offline"), checkpointer="memory")
    try:
        again.resume(wid)
        assert again.wait(wid, 30)
        record = again.get(wid)
    finally:
        again.close()
    assert (record.status, record.agent_session) == (WorkerStatus.COMPLETED, first.agent_session)
    assert record.result is not None and record.result["next_stage"] == "c"  # not the default
    answer = (rt.workspace.root / "notes" / "complete-1.txt").read_text(encoding="utf-8")
    assert answer.startswith("Delivered to the supervisor; suggested next stage: c.")


def test_request_input_over_mcp_makes_the_worker_wait_for_the_answer(runtime):
    rt, updates, _ = runtime
    wid = start(rt, "input notes/answer.txt: Which learning rate should I use?")
    wait_for(lambda: rt.get(wid).status == WorkerStatus.WAITING, "the question", within=30)
    assert rt.get(wid).question == "Which learning rate should I use?"
    asked = "Which learning rate should I use?"
    wait_for(lambda: any(u.question == asked for u in updates.of(wid)), "its update")
    rt.resume(wid, answer="0.01")
    assert rt.wait(wid, 30)
    assert rt.get(wid).status == WorkerStatus.COMPLETED
    answer = (rt.workspace.root / "notes" / "answer.txt").read_text(encoding="utf-8")
    assert answer == "Answer from the supervisor: 0.01"


def test_a_job_submitted_over_mcp_puts_the_worker_in_the_background_until_resumed(runtime):
    rt, updates, _ = runtime
    job = {"command": "echo computed > job.txt", "name": "compute"}
    wid = start(rt, f"call submit_job: {json.dumps(job)}", "say the job runs")
    assert rt.wait(wid, 30)
    record = rt.get(wid)
    assert record.status == WorkerStatus.BACKGROUND, record.error
    (job_id,) = record.jobs
    assert record.result == {"kind": "suspend", "reason": f"job {job_id} is running"}
    assert updates.of(wid)[-1].check_after_s == 30.0
    said = (rt.workspace.root / "notes" / "call-1.txt").read_text(encoding="utf-8")
    assert said.startswith("Submitted job compute on this machine; its log is jobs/compute.log.")
    wait_for(lambda: (rt.workspace.root / "job.txt").is_file(), "the job's file")
    rt.resume(wid, message=f"Job {job_id} (compute) ended: exit code 0.")
    assert rt.wait(wid, 30)
    record = rt.get(wid)
    assert record.status == WorkerStatus.COMPLETED
    history = json.loads(
        (
            rt.workspace.workers_dir / wid / "home" / ".fake-acp" / f"{record.agent_session}.json"
        ).read_text()
    )["history"]
    assert history[-2] == ["user", f"Job {job_id} (compute) ended: exit code 0."]


def test_cancelling_an_agent_worker_stops_the_jobs_it_submitted(runtime):
    rt, _, _ = runtime
    job = {"command": "sleep 60", "name": "long"}
    wid = start(rt, f"call submit_job: {json.dumps(job)}")
    assert rt.wait(wid, 30)
    assert rt.get(wid).status == WorkerStatus.BACKGROUND
    record = rt.cancel(wid)
    assert record.status == WorkerStatus.CANCELLED
    (job_id,) = record.jobs
    stopped = wait_for(lambda: [j for j in rt.jobs.refresh() if not j.running], "its job's end")
    assert [(j.id, j.status) for j in stopped] == [(job_id, "stopped")]


def test_the_socket_answers_nothing_without_the_turns_token(runtime):
    rt, _, _ = runtime
    wid = start(rt, "input notes/answer.txt: Shall I go on?")
    wait_for(lambda: rt.get(wid).status == WorkerStatus.WAITING, "the question", within=30)
    socket = rt.workspace.workers_dir / wid / "home" / SOCKET_NAME
    assert socket.is_socket() and socket.stat().st_mode & 0o777 == 0o600
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for token in ("", "0" * 64):
        other = subprocess.run(
            [sys.executable, "-I", str(BRIDGE), str(socket)],
            input=json.dumps(initialize) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
            env={"LIGHTSCIENTIST_TOOLS_TOKEN": token},
        )
        assert other.stdout == ""  # closed on it, unanswered
        assert "Traceback" not in other.stderr
    assert rt.get(wid).status == WorkerStatus.WAITING
    rt.resume(wid, answer="yes")
    assert rt.wait(wid, 30)
    assert not socket.exists()  # removed with the turn


def test_the_agent_is_offered_our_tools_as_the_deepagents_workers_declare_them(runtime):
    rt, _, _ = runtime
    wid = start(rt, "tools notes/tools.json")
    assert rt.wait(wid, 30)
    listed = json.loads((rt.workspace.root / "notes" / "tools.json").read_text())
    assert [t["name"] for t in listed] == [
        "complete_stage",
        "request_input",
        "submit_job",
        "list_jobs",
        "job_status",
        "search_literature",
        "get_paper",
        "cite",
        "recall",
    ]
    declared = {t.name: t for t in lifecycle_tools()}
    complete = listed[0]
    assert complete["description"] == declared["complete_stage"].description
    assert sorted(complete["inputSchema"]["required"]) == ["next_stage", "outputs", "summary"]


@pytest.mark.parametrize("runtime", ["bwrap"], indirect=True)
def test_in_the_sandbox_only_the_workers_own_agent_reaches_its_tools(runtime, needs_bwrap):
    rt, _, _ = runtime
    wid = start(rt, "input notes/answer.txt: Shall I go on?")
    wait_for(lambda: rt.get(wid).status == WorkerStatus.WAITING, "the question", within=30)
    socket = rt.workspace.workers_dir / wid / "home" / SOCKET_NAME
    other_home = rt.workspace.workers_dir / "w99" / "home"  # another worker's sandbox
    prefix = ShellPolicy(sandbox=True).confinement(rt.workspace.root, other_home).prefix
    other = subprocess.run(
        [*prefix, sys.executable, "-I", str(BRIDGE), str(socket)],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert other.returncode != 0
    assert "No such file or directory" in other.stderr  # its folder is not there at all
    rt.resume(wid, answer="go on")
    assert rt.wait(wid, 30)
    assert rt.get(wid).status == WorkerStatus.COMPLETED  # its own bridge, in its sandbox
    answer = (rt.workspace.root / "notes" / "answer.txt").read_text(encoding="utf-8")
    assert answer == "Answer from the supervisor: go on"
