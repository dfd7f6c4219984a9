"""One supervisor model call per decision, end to end: the offline project from
experiment.setup to the end, in auto mode. Every scheduling event it meets (the stage started,
a worker finished) is decided by one model call whose tool settles it, and no decision is
lost: every stage is finished and the project is done."""

from __future__ import annotations

import json

import pytest
from support.offline import run_second_half

pytestmark = pytest.mark.slow


def test_each_decision_is_one_supervisor_model_call(tmp_path, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    ws = tmp_path / "ws"
    project = run_second_half(ws)
    state = project.controller.state
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines()]
    decisions = [e for e in events if e["type"] == "supervisor.decision"]
    calls = [e for e in events if e["type"] == "model.call" and e["worker_id"] == "supervisor"]
    kinds = {e["data"]["event"] for e in decisions}
    assert {"stage_started", "worker_finished"} <= kinds
    assert len(calls) == len(decisions)
    replies = [e["data"]["reply"] for e in decisions]
    assert set(replies) == {"done", "continue"}
    # each accepted finish_stage said `done`: one per move of layer 1 after the start, but
    # the reviewers' revision (layer 1 sends the paper back; the agent is told nothing)
    moves = [h for h in state.history if h["by"] not in ("start", "revise")]
    assert replies.count("done") == len(moves) and len(moves) < len(state.history) - 1
    sizes = [e["data"]["input_chars"] for e in events if e["type"] == "supervisor.event"]
    assert max(sizes) < 1500  # the richer events stay bounded (summary clipped, few workers)
