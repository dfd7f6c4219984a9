"""A replay of a run whose supervisor starts two workers at once: the supervisor hears of
their ends in the recorded order, whatever order they end in this time.

A custom one-stage table is run through the real `ChatOpenAI` client against the local chat
server with `--record`: the supervisor starts workers `left` and `right` in one message, and
decides on each end from the event (the other still running: `continue`; both done: finish
the stage). The server holds back `left`'s last answer, so `right` ends first in the
recording; in the replay nothing holds `left` back, and it ends first. A strict replay must
still reach `done`: layer 2 takes in `right`'s end first, as the recording did.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import _write_table
from support.chat_server import ChatServer, answer, tool_call, tool_calls
from support.real_run import (
    answers_given,
    cli,
    events,
    field,
    is_model_check,
    supervisor_turn,
    worker_task,
)

GOAL = "Do two things at once."
PAIR_TABLE = """\
start = "pair"

[stages.pair]
skill = "skills/pair.md"
outputs = ["out/left.md", "out/right.md"]
next = "done"
allowed = ["done"]
"""
COMMANDS = {
    "left": "python3 -c 'print(1)'",
    "right": "python3 -c 'import time; time.sleep(2); print(2)'",
}
"""Each worker's command: `right`'s takes 2 s, so in a replay `left` ends first."""
HOLD_LEFT_S = 4.0
"""How long the recording's server holds back `left`'s last answer: there `right` ends first."""


def pair_scientist(body: dict[str, Any]) -> dict[str, Any]:
    """The chat server's answers for `PAIR_TABLE` (see the module docstring)."""
    if is_model_check(body):
        return tool_call("report_word", word="ready")
    turn = supervisor_turn(body)
    if turn is not None:
        event, since = turn
        if since:
            return answer("continue")
        if "event: stage_started" in event:
            return tool_calls(
                tool_call("start_worker", label="left"),
                tool_call("start_worker", label="right"),
            )
        others = json.loads(field(event, "workers") or "[]")
        if any(w.get("status") == "running" for w in others):
            return answer("continue")
        outputs = ["out/left.md", "out/right.md"]
        return tool_call("finish_stage", summary="Both done.", outputs=outputs, next_stage="done")
    label = field(worker_task(body), "label")
    plan = [
        tool_call("write_file", file_path=f"/out/{label}.md", content=f"# {label}\n"),
        tool_call("execute", command=COMMANDS[label]),
        tool_call(
            "complete_stage",
            summary=f"Wrote {label}.",
            outputs=[f"out/{label}.md"],
            next_stage="done",
        ),
    ]
    done = answers_given(body)
    if label == "left" and done == len(plan) - 1:
        time.sleep(HOLD_LEFT_S)
    return plan[min(done, len(plan) - 1)]


def ended(ws: Path) -> list[str]:
    """The workers' labels in the order their sessions ended (layer 3's view)."""
    labels = {
        e["worker_id"]: e["data"].get("label") for e in events(ws) if e["type"] == "worker.created"
    }
    return [
        labels.get(e["worker_id"])
        for e in events(ws)
        if e["type"] == "session.end" and e["worker_id"] in labels
    ]


def heard(ws: Path) -> list[str]:
    """The workers the supervisor decided on after they finished, in order."""
    return [
        e["data"]["event"]["data"]["label"]
        for e in events(ws)
        if e["type"] == "supervisor.event"
        and e["data"].get("event", {}).get("kind") == "worker_finished"
    ]


@pytest.mark.slow
def test_workers_started_together_replay_strictly_in_the_order_they_were_heard(tmp_path):
    table = _write_table(tmp_path / "table", PAIR_TABLE)
    args = ("research", GOAL, "--mode", "auto", "--stages", str(table))
    server = ChatServer().answer_with(pair_scientist)
    first = tmp_path / "first"
    try:
        proc = cli(first, *args, "--model", "some-model", "--base-url", server.base_url, "--record")
    finally:
        server.close()
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    assert heard(first) == ["right", "left"]

    again = tmp_path / "again"
    proc = cli(again, *args, "--model", f"replay:{first}", env={"OPENAI_BASE_URL": server.base_url})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert ended(again) == ["left", "right"]  # this time left ended first…
    assert heard(again) == ["right", "left"]  # …and the supervisor heard of it second
    kinds = {e["data"]["kind"] for e in events(again) if e["type"] == "replay.divergence"}
    assert kinds <= {"command output"}
    for name in ("left", "right"):
        assert (again / "out" / f"{name}.md").read_text(encoding="utf-8") == f"# {name}\n"
