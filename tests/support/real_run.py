"""The suite's real-model run, recorded once per test session and replayed by any test.

A custom stage table (`SMALL_TABLE`: a → gate → b → done) is run through the real `ChatOpenAI`
client against the local chat server of `support.chat_server`, with `--record`, in a folder
of the session's temporary directory; the server then stops. Tests that need a project a
real model ran replay it (`--model replay:<that workspace>`) into their own folder, with
nothing listening: the suite exercises the real client once and the replay path everywhere
else, at no extra cost (a pytest plugin, registered in tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SMALL_TABLE, _write_table

from lightscientist_jupyter.values.task import LESSONS_STAGE
from support.chat_server import ChatServer, answer, tool_call
from support.slow import whole_project

GOAL = "Does warmup help a small MLP?"
OUTPUTS = {"a": ["out/a.md"], "gate": ["out/brief.md"], "b": ["out/b.md", "out/b.csv"]}
NEXT = {"a": "gate", "gate": "b", "b": "done"}
CONTENT = {
    "out/a.md": "# A\n\nThe first stage's notes.\n",
    "out/brief.md": "# Brief\n\nApprove: the notes are complete.\n",
    "out/b.md": "# B\n\n6 x 7 = 42\n",
    "out/b.csv": "x,y\n6,42\n",
}


def field(text: str, name: str) -> str:
    found = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return found.group(1).strip() if found else ""


def is_model_check(body: dict[str, Any]) -> bool:
    """The one short call before the first stage (can this model call tools?)."""
    return [t["function"]["name"] for t in body.get("tools") or []] == ["report_word"]


def supervisor_turn(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """For a request of the supervisor agent: the event it decides on, and the messages of
    its turn since (its tool calls and their results); None for a worker's request."""
    messages = body["messages"]
    if not str(messages[0].get("content", "")).startswith("You are the LightScientist supervisor"):
        return None
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return messages[last]["content"], messages[last + 1 :]


def worker_task(body: dict[str, Any]) -> str:
    """A worker's task: the first message it was given."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def answers_given(body: dict[str, Any]) -> int:
    """How many answers the session got before this request."""
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


LESSONS = (
    "- Writing every output before running the check command kept each stage to one visit.\n"
    "- The larger data set was worth asking about before stage a started."
)
"""What the scripted lessons worker delivers at a project's end."""


def scientist(body: dict[str, Any]) -> dict[str, Any]:
    """The chat server's answers: a supervisor that starts one worker per stage and finishes
    it when the worker does, and workers that read their skill, write their outputs, run one
    command and complete the stage."""
    if is_model_check(body):
        return tool_call("report_word", word="ready")
    turn = supervisor_turn(body)
    if turn is not None:
        event, since = turn
        stage = field(event, "stage")
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
    task = worker_task(body)
    stage = field(task, "stage")
    if stage == LESSONS_STAGE:  # the project's end: read PROCESS.md, draw two lessons
        plan = [
            tool_call("read_file", file_path="/PROCESS.md"),
            tool_call("complete_stage", summary=LESSONS, outputs=[], next_stage="done"),
        ]
        return plan[min(answers_given(body), len(plan) - 1)]
    plan = [tool_call("read_file", file_path=field(task, "skill"))]
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
    return plan[min(answers_given(body), len(plan) - 1)]


def asking_scientist(body: dict[str, Any]) -> dict[str, Any]:
    """`scientist`, but the supervisor asks the user a project-level question when stage a
    starts, and starts its worker when the answer arrives."""
    turn = supervisor_turn(body)
    if turn is not None:
        event, since = turn
        if not since and "event: stage_started" in event and field(event, "stage") == "a":
            return tool_call(
                "request_user_decision", question="Use the larger data set?", options=["yes", "no"]
            )
        if not since and "event: user_answered" in event:
            return tool_call("start_worker")
    return scientist(body)


def research_auto(ws: Path, table: Path, model: str, *extra: str) -> subprocess.CompletedProcess:
    """`lightscientist research GOAL --mode auto` of `table` in `ws` with `model` (a model
    name served by the chat server, given its `--base-url` in `extra`, or a `replay:`)."""
    return cli(
        ws, "research", GOAL, "--mode", "auto", "--stages", str(table), "--model", model, *extra
    )


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


def nothing_listens(url: str) -> bool:
    host, port = re.match(r"http://([\d.]+):(\d+)", url).groups()  # type: ignore[union-attr]
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) != 0


@pytest.fixture(scope="session")
@whole_project
def real_recording(tmp_path_factory) -> dict[str, Any]:
    """One recorded run of the suite's small table (a → gate → b → done), in auto mode."""
    base = tmp_path_factory.mktemp("real-recording")
    table = _write_table(base / "table", SMALL_TABLE)
    server = ChatServer().answer_with(scientist)
    first = base / "first"
    try:
        proc = research_auto(first, table, "some-model", "--base-url", server.base_url, "--record")
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert nothing_listens(server.base_url)
    return {"base": base, "table": table, "first": first, "url": server.base_url, "server": server}
