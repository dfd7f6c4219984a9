"""Record and replay from the command line: a custom stage table run once through the real
`ChatOpenAI` client against the local chat server with `--record`, then replayed with
`--model replay:<workspace>` into new folders after the server has stopped.

The recording is made once for the module; each test replays it into its own folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SMALL_TABLE, _write_table
from support.chat_server import ChatServer, answer, tool_call

GOAL = "Does warmup help a small MLP?"
OUTPUTS = {"a": ["out/a.md"], "gate": ["out/brief.md"], "b": ["out/b.md", "out/b.csv"]}
NEXT = {"a": "gate", "gate": "b", "b": "done"}
CONTENT = {
    "out/a.md": "# A\n\nThe first stage's notes.\n",
    "out/brief.md": "# Brief\n\nApprove: the notes are complete.\n",
    "out/b.md": "# B\n\n6 x 7 = 42\n",
    "out/b.csv": "x,y\n6,42\n",
}


def _field(text: str, name: str) -> str:
    found = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return found.group(1).strip() if found else ""


def is_model_check(body: dict[str, Any]) -> bool:
    """The one short call before the first stage (can this model call tools?)."""
    return [t["function"]["name"] for t in body.get("tools") or []] == ["report_word"]


def scientist(body: dict[str, Any]) -> dict[str, Any]:
    """The chat server's answers: a supervisor that starts one worker per stage and finishes
    it when the worker does, and workers that read their skill, write their outputs, run one
    command and complete the stage."""
    if is_model_check(body):
        return tool_call("report_word", word="ready")
    messages = body["messages"]
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    if str(messages[0].get("content", "")).startswith("You are the LightScientist supervisor"):
        event, since = messages[users[-1]]["content"], messages[users[-1] + 1 :]
        stage = _field(event, "stage")
        if since:
            return answer("done" if "event: worker_finished" in event else "continue")
        if "event: stage_started" in event:
            return tool_call("start_worker")
        if "event: worker_finished" in event:
            return tool_call(
                "finish_stage",
                summary=f"Stage {stage} is done.",
                outputs=OUTPUTS[stage],
                next_stage=NEXT[stage],
            )
        return answer("continue")
    task = messages[users[0]]["content"]
    stage = _field(task, "stage")
    plan = [tool_call("read_file", file_path=_field(task, "skill"))]
    plan += [tool_call("write_file", file_path="/" + p, content=CONTENT[p]) for p in OUTPUTS[stage]]
    plan.append(tool_call("execute", command="python3 -c 'print(6 * 7)'"))
    plan.append(
        tool_call(
            "complete_stage",
            summary=f"Wrote {', '.join(OUTPUTS[stage])}.",
            outputs=OUTPUTS[stage],
            next_stage=NEXT[stage],
        )
    )
    done = sum(1 for m in messages if m["role"] == "assistant")
    return plan[min(done, len(plan) - 1)]


def cli(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": "", **(env or {})},
    )


def events(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def stages_of(ws: Path) -> list[tuple[str, str]]:
    return [
        (e["data"].get("from"), e["data"].get("to"))
        for e in events(ws)
        if e["type"] == "stage.transition"
    ]


def process_entries(ws: Path) -> str:
    """PROCESS.md with its times masked."""
    text = (ws / "PROCESS.md").read_text(encoding="utf-8")
    return re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC", "<time>", text)


def outputs(ws: Path) -> dict[str, str]:
    return {
        str(p.relative_to(ws)): p.read_text(encoding="utf-8")
        for p in sorted((ws / "out").rglob("*"))
        if p.is_file()
    }


def nothing_listens(url: str) -> bool:
    host, port = re.match(r"http://([\d.]+):(\d+)", url).groups()  # type: ignore[union-attr]
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict[str, Any]:
    """One recorded run of the suite's small table (a → gate → b → done), in auto mode."""
    base = tmp_path_factory.mktemp("recorded")
    table = _write_table(base / "table", SMALL_TABLE)
    server = ChatServer().answer_with(scientist)
    first = base / "first"
    try:
        proc = cli(
            first,
            "research",
            GOAL,
            "--mode",
            "auto",
            "--stages",
            str(table),
            "--model",
            "some-model",
            "--base-url",
            server.base_url,
            "--record",
        )
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert nothing_listens(server.base_url)
    return {"base": base, "table": table, "first": first, "url": server.base_url, "server": server}


def replay(recorded: dict[str, Any], name: str, spec: str, table: Path | None = None):
    ws = recorded["base"] / name
    proc = cli(
        ws,
        "research",
        GOAL,
        "--mode",
        "auto",
        "--stages",
        str(table or recorded["table"]),
        "--model",
        spec,
        env={"OPENAI_BASE_URL": recorded["url"]},  # a dead server: any connection would fail
    )
    return ws, proc


@pytest.mark.slow
def test_the_recording_holds_every_call_of_every_session(recorded):
    first, server = recorded["first"], recorded["server"]
    files = sorted((first / ".lightscientist" / "recordings").glob("*.jsonl"))
    assert [f.name for f in files] == ["run-0001.jsonl"]
    lines = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "run" and lines[0]["model"] == "openai-chat:some-model"
    calls = lines[1:]
    sessions = [r for r in server.requests if not is_model_check(r)]
    assert len(calls) == len(sessions)  # every request of a session (the check is none)
    per_session: dict[str, list[int]] = {}
    for call in calls:
        per_session.setdefault(call["session"], []).append(call["call"])
    assert {k: len(v) for k, v in per_session.items()} == {
        "supervisor/0": 12,  # per stage: start_worker, continue, finish_stage, done
        "worker/a/0": 4,
        "worker/gate/0": 4,
        "worker/b/0": 5,
    }
    assert all(v == list(range(len(v))) for v in per_session.values())
    first_call = calls[0]
    assert (first_call["role"], first_call["stage"], first_call["worker"]) == (
        "supervisor",
        "a",
        "supervisor",
    )
    names = {first_call["defs"][h]["name"] for h in first_call["tools"]}
    assert {"start_worker", "finish_stage", "get_worker"} <= names
    worker_call = next(c for c in calls if c["session"] == "worker/b/0" and c["call"] == 4)
    assert worker_call["response"]["tool_calls"][0]["name"] == "complete_stage"
    assert worker_call["response"]["usage"]["total_tokens"] == 18
    text = files[0].read_text(encoding="utf-8")
    assert str(first) not in text


def test_a_replay_without_the_server_reproduces_the_run(recorded):
    first = recorded["first"]
    assert nothing_listens(recorded["url"])
    second, proc = replay(recorded, "second", f"replay:{first}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert stages_of(second) == stages_of(first) == [("a", "gate"), ("gate", "b"), ("b", "done")]
    assert process_entries(second) == process_entries(first)
    assert (
        outputs(second)
        == outputs(first)
        == {
            "out/a.md": CONTENT["out/a.md"],
            "out/b.csv": CONTENT["out/b.csv"],
            "out/b.md": CONTENT["out/b.md"],
            "out/brief.md": CONTENT["out/brief.md"],
        }
    )
    assert [e for e in events(second) if e["type"] == "replay.divergence"] == []
    assert not (second / ".lightscientist" / "recordings").exists()  # a replay records nothing


@pytest.mark.slow
def test_a_changed_skill_fails_a_strict_replay_and_counts_once_in_a_lenient_one(recorded):
    table = recorded["base"] / "changed" / "table.toml"
    shutil.copytree(recorded["table"].parent, table.parent)
    (table.parent / "skills" / "b.md").write_text("# b\n\nWrite b with care.\n", encoding="utf-8")

    strict, proc = replay(recorded, "strict", f"replay:{recorded['first']}", table)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "failed"
    ends = [e for e in events(strict) if e["type"] == "session.end" and "error" in e["data"]]
    assert ends[0]["worker_id"] == "w3" and ends[0]["stage"] == "b"
    assert ends[0]["data"]["error"] == (
        "ReplayDivergence: replay diverged: worker w3 (stage b), call 2, message 4 (tool) "
        "differs — recorded: '@@ lines 1-3 of 3 @@\\n# skills/b.md\\n\\nDo the work of this "
        "stage.'; now: '@@ lines 1-3 of 3 @@\\n# b\\n\\nWrite b with care.' (replay with "
        "replay:PATH,lenient to go on)"
    )
    assert stages_of(strict) == [("a", "gate"), ("gate", "b")]

    lenient, proc = replay(recorded, "lenient", f"replay:{recorded['first']},lenient", table)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    found = [e for e in events(lenient) if e["type"] == "replay.divergence"]
    assert [(e["worker_id"], e["stage"], e["data"]["call"], e["data"]["total"]) for e in found] == [
        ("w3", "b", 2, 1)
    ]
    assert found[0]["message"] == (
        "call 2: message 4 (tool) differs from the recording (request; 1 so far)"
    )
    assert outputs(lenient) == outputs(recorded["first"])


@pytest.mark.slow
def test_gate_replies_are_recorded_and_replayed_with_replies_recorded(recorded):
    base, table = recorded["base"], recorded["table"]
    server = ChatServer().answer_with(scientist)
    manual = base / "manual"
    try:
        proc = cli(
            manual,
            "research",
            GOAL,
            "--stages",
            str(table),
            "--model",
            "some-model",
            "--base-url",
            server.base_url,
            "--record",
        )
        assert proc.stdout.strip().splitlines()[-1] == "waiting_user", proc.stdout + proc.stderr
        proc = cli(manual, "reply", "y", "--comment", "Looks right.")
        assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    finally:
        server.close()
    files = sorted((manual / ".lightscientist" / "recordings").glob("*.jsonl"))
    assert [f.name for f in files] == ["run-0001.jsonl", "run-0002.jsonl"]  # research, reply
    replies = [
        json.loads(line)
        for line in files[1].read_text(encoding="utf-8").splitlines()
        if '"kind": "reply"' in line
    ]
    assert replies == [
        {
            "kind": "reply",
            "stage": "gate",
            "approve": True,
            "comment": "Looks right.",
            "to": "b",
            "source": "cli",
        }
    ]

    again = base / "manual-again"
    proc = cli(
        again, "research", GOAL, "--stages", str(table), "--model", f"replay:{manual}",
        "--replies", "recorded",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert stages_of(again) == stages_of(manual) == [("a", "gate"), ("gate", "b"), ("b", "done")]
    assert process_entries(again) == process_entries(manual)
    assert outputs(again) == outputs(manual)

    # Without --replies recorded the replay waits at the gate, and a reply given anew goes on.
    anew = base / "manual-anew"
    proc = cli(anew, "research", GOAL, "--stages", str(table), "--model", f"replay:{manual}")
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user"
    proc = cli(anew, "reply", "y", "--comment", "Looks right.")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    assert [e for e in events(anew) if e["type"] == "replay.divergence"] == []


def test_replies_recorded_needs_a_replay_model(tmp_path):
    proc = cli(tmp_path / "ws", "research", GOAL, "--replies", "recorded")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "lightscientist research: error: --replies recorded needs --model replay:PATH "
        "(the replies come from that recording)"
    )
    assert not (tmp_path / "ws" / ".lightscientist").exists()
