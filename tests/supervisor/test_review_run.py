"""A review stage end to end through the real `ChatOpenAI` client against the scripted chat
server: layer 2 starts the round's reviewers, each its own session and thread; layer 1 reads
their review files, aggregates the round into `paper/reviews/meta.json`, and — below the bar
with a round left — sends the paper back to the writing stage with the reviewers' required
changes in its task; the second round accepts, the agent hears of it once (`review_over`),
and the stage's worker ends the project. The agent's input never names a reviewer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import _write_table
from support.chat_server import ChatServer, answer, tool_call
from support.real_run import (
    answers_given,
    events,
    field,
    is_model_check,
    research_auto,
    supervisor_turn,
    worker_task,
)

pytestmark = pytest.mark.slow

TABLE = """\
start = "write"

[stages.write]
skill = "skills/write.md"
outputs = ["paper/paper.tex"]
next = "review"
allowed = ["review"]

[stages.review]
skill = "skills/review.md"
outputs = ["out/review.md"]
next = "done"
allowed = ["done", "write"]
review = { reviewers = 3, rubric = "neurips", accept = 6, rounds = 2 }
"""

OVERALL = {1: {1: 4, 2: 5, 3: 6}, 2: {1: 7, 2: 7, 3: 6}}
"""round -> reviewer -> overall score: 5.0 below 6 in round 1, 6.67 in round 2."""
WEAKNESS = {1: "Add an ablation of the warmup length.", 2: "Say what the error bars show."}


def review_of(reviewer: int, round_number: int) -> dict[str, Any]:
    overall = OVERALL[round_number][reviewer]
    weak = [WEAKNESS[reviewer]] if reviewer in WEAKNESS and round_number == 1 else []
    return {
        "reviewer": reviewer,
        "round": round_number,
        "scores": {"soundness": 3, "presentation": 2, "contribution": 3, "overall": overall},
        "strengths": ["Seeds and intervals are reported."],
        "weaknesses": weak,
        "questions": [],
        "decision": "accept" if overall >= 6 else "revise",
    }


def reviewing_scientist(body: dict[str, Any]) -> dict[str, Any]:
    if is_model_check(body):
        return tool_call("report_word", word="ready")
    turn = supervisor_turn(body)
    if turn is not None:
        event, since = turn
        if since:
            return answer("done" if "event: worker_finished" in event else "continue")
        if "event: stage_started" in event or "event: review_over" in event:
            return tool_call("start_worker")
        if "event: worker_finished" in event:
            return tool_call("finish_stage", summary="Done.", outputs=[], next_stage="")
        return answer("continue")
    task = worker_task(body)
    reviewer = field(task, "reviewer")
    if reviewer:
        number, round_number = int(reviewer), int(field(task, "round"))
        plan = [
            tool_call("read_file", file_path="/paper/paper.tex"),
            tool_call(
                "write_file",
                file_path="/" + field(task, "review_file"),
                content=json.dumps(review_of(number, round_number)),
            ),
            tool_call("complete_stage", summary="Reviewed.", outputs=[], next_stage="done"),
        ]
    elif field(task, "stage") == "write":
        version = field(task, "visit")
        plan = [
            tool_call(
                "write_file",
                file_path="/paper/paper.tex",
                content=f"\\documentclass{{article}}\\begin{{document}}Version {version}."
                "\\end{document}\n",
            ),
            tool_call("complete_stage", summary="Wrote.", outputs=[], next_stage="review"),
        ]
    else:
        plan = [
            tool_call("read_file", file_path="/paper/reviews/meta.json"),
            tool_call("write_file", file_path="/out/review.md", content="# Review\n\nAccepted.\n"),
            tool_call("complete_stage", summary="Reviewed.", outputs=[], next_stage="done"),
        ]
    return plan[min(answers_given(body), len(plan) - 1)]


@pytest.fixture
def server():
    server = ChatServer().answer_with(reviewing_scientist)
    yield server
    server.close()


def test_reviewers_send_the_paper_back_once_then_accept_it(tmp_path: Path, server: ChatServer):
    table = _write_table(tmp_path / "table", TABLE)
    ws = tmp_path / "ws"
    proc = research_auto(ws, table, "some-model", "--base-url", server.base_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr

    meta = json.loads((ws / "paper" / "reviews" / "meta.json").read_text())
    assert (meta["round"], meta["mean"], meta["decision"]) == (2, 6.67, "accept")
    assert [(r["reviewer"], r["overall"]) for r in meta["reviews"]] == [(1, 7), (2, 7), (3, 6)]
    (first,) = meta["rounds"]
    assert (first["round"], first["mean"], first["decision"]) == (1, 5.0, "revise")
    assert first["required_changes"] == [WEAKNESS[1], WEAKNESS[2]]

    # the writing stage ran twice, the second time told the reviewers' changes
    writes = [worker_task(r) for r in server.requests if "stage: write" in _first(r)]
    visits = sorted({field(t, "visit") for t in writes})
    assert visits == ["1", "2"]
    second = next(t for t in writes if field(t, "visit") == "2")
    assert WEAKNESS[1] in second and WEAKNESS[2] in second
    assert "Version 2." in (ws / "paper" / "paper.tex").read_text()

    # six reviewer sessions (three a round), each its own thread
    folder = ws / ".lightscientist" / "workers"
    records = [json.loads(p.read_text()) for p in folder.glob("*/worker.json")]
    reviewers = [r for r in records if str(r["labels"].get("label", "")).startswith("reviewer ")]
    assert sorted(r["labels"]["label"] for r in reviewers) == sorted(
        [f"reviewer {n}" for n in (1, 2, 3)] * 2
    )
    assert len({r["thread_id"] for r in reviewers}) == 6
    assert len({r["id"] for r in reviewers}) == 6

    told = [r for r in server.requests if supervisor_turn(r) is not None]
    heard = {field(supervisor_turn(r)[0], "event") for r in told}
    assert heard <= {"stage_started", "worker_finished", "review_over"}, heard
    assert not any("reviewer: " in supervisor_turn(r)[0] for r in told)
    metas = [e for e in events(ws) if e["type"] == "review.meta"]
    assert [(e["data"]["round"], e["data"]["decision"]) for e in metas] == [
        (1, "revise"),
        (2, "accept"),
    ]
    assert (ws / "out" / "review.md").is_file()


def _first(body: dict[str, Any]) -> str:
    return worker_task(body) if supervisor_turn(body) is None else ""
