"""Budgets end to end, from the command line, through the real `ChatOpenAI` client against the
local chat server (which reports 11 + 7 tokens per call): a project budget pauses the project
at a `budget` decision, `reply y --budget` raises it and the project ends `done` with no stage
finished twice, and `usage` matches what the server reported exactly; `reply n` ends it
`failed` with the reason `budget`, and `resume` says how to raise it; a stage's budget pauses
at that stage alone; `--price` gives the cost computed by hand. Also the offline demo's
estimated usage, by stage, in `usage --json` and `status --json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SMALL_TABLE, _write_table
from support.chat_server import ChatServer
from support.real_run import GOAL, cli, events, is_model_check, research_auto, scientist

PER_CALL = sum(ChatServer.USAGE[k] for k in ("prompt_tokens", "completion_tokens"))

pytestmark = pytest.mark.slow


@pytest.fixture
def server():
    server = ChatServer().answer_with(scientist)
    yield server
    server.close()


def start(tmp_path: Path, server: ChatServer, *extra: str, table: str = SMALL_TABLE):
    path = _write_table(tmp_path / "table", table)
    ws = tmp_path / "ws"
    proc = research_auto(ws, path, "some-model", "--base-url", server.base_url, *extra)
    return ws, proc


def status(ws: Path) -> dict:
    return json.loads(cli(ws, "status", "--json").stdout)


def served_tokens(server: ChatServer) -> int:
    """What the server reported for the project's calls (the model check is not one)."""
    return PER_CALL * sum(not is_model_check(r) for r in server.requests)


def test_a_token_budget_pauses_and_a_raise_finishes_the_project(tmp_path, server):
    limit = 120  # a full run of the small table takes 19 calls, 342 tokens
    ws, proc = start(tmp_path, server, "--budget", f"tokens={limit}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user"
    assert "BudgetHold" not in proc.stderr
    info = status(ws)
    pending = info["pending"]
    assert pending["kind"] == "budget"
    assert pending["question"].startswith("The project budget of 120 tokens is spent")
    assert "by stage visit: a#1 108 tokens" in pending["summary"]
    spent = info["usage"]["tokens"]
    assert limit <= spent <= limit + PER_CALL  # one session was running when it tripped
    assert spent == served_tokens(server)
    kinds = [e["type"] for e in events(ws)]
    assert kinds.index("budget.warning") < kinds.index("budget.exceeded")

    proc = cli(ws, "reply", "y", "--budget", "tokens=100000")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    finished = [e["stage"] for e in events(ws) if e["type"] == "stage.finish"]
    assert finished == ["a", "gate", "b"]
    view = json.loads(cli(ws, "usage", "--json", "--by", "stage").stdout)
    assert view["total"]["tokens"] == served_tokens(server) == status(ws)["usage"]["tokens"]
    assert [r["key"] for r in view["rows"]] == ["a", "gate", "b", "lessons"]  # its end's
    assert view["total"]["cost"] == "unknown"  # a local model with no --price
    process = (ws / "PROCESS.md").read_text()
    assert process.count("\nUsage: ") == 3 and "cost unknown" in process


def test_reply_n_ends_failed_and_resume_says_how_to_raise(tmp_path, server):
    ws, proc = start(tmp_path, server, "--budget", "tokens=60")
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user"
    proc = cli(ws, "reply", "n")
    assert proc.stdout.strip().splitlines()[-1] == "failed", proc.stdout + proc.stderr
    info = status(ws)
    assert (info["status"], info["reason"]) == ("failed", "budget")
    proc = cli(ws, "resume", "--skip-model-check")
    assert proc.returncode == 2
    assert "ended at its budget" in proc.stderr and "resume --budget tokens=" in proc.stderr
    proc = cli(ws, "resume", "--skip-model-check", "--budget", "tokens=100000")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr


def test_a_stage_budget_pauses_at_that_stage_and_a_price_gives_the_cost(tmp_path, server):
    table = SMALL_TABLE.replace("[stages.b]\n", "[stages.b]\nbudget = { tokens = 50 }\n", 1)
    ws, proc = start(tmp_path, server, "--price", "in=2,out=10", table=table)
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user", proc.stdout + proc.stderr
    info = status(ws)
    assert info["stage"] == "b"
    assert info["pending"]["details"]["scope"] == "stage b"
    used = info["usage"]
    assert used["cost"] == pytest.approx(
        (used["input_tokens"] * 2 + used["output_tokens"] * 10) / 1e6
    )
    assert used["cost"] == pytest.approx(used["model_calls"] * (11 * 2 + 7 * 10) / 1e6)


def test_the_offline_run_shows_estimated_usage_per_stage(tmp_path):
    ws = tmp_path / "ws"
    proc = cli(ws, "research", GOAL, "--mode", "auto", "--model", "offline")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    view = json.loads(cli(ws, "usage", "--json", "--by", "stage").stdout)
    stages = [e["stage"] for e in events(ws) if e["type"] == "stage.finish"]
    rows = {r["key"]: r for r in view["rows"]}
    assert set(stages) <= set(rows)
    assert all(rows[s]["estimated"] > 0 and rows[s]["tokens"] > 0 for s in stages)
    used = status(ws)["usage"]
    assert used["tokens"] == view["total"]["tokens"] > 0
    assert used["cost"] == 0.0 and used["model_calls"] == view["total"]["model_calls"]


def test_a_replay_costs_what_the_recorded_run_did(tmp_path, server):
    """The recording's run line keeps the price its calls were charged at, so the replay,
    asking no server, writes the same tokens and cost (PROCESS.md too) as the run."""
    first, proc = start(tmp_path, server, "--price", "in=2,out=10", "--record")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    recording = (first / ".lightscientist" / "recordings" / "run-0001.jsonl").read_text()
    assert json.loads(recording.splitlines()[0])["price"] == {
        "in": 2.0,
        "out": 10.0,
        "cached": None,
        "source": "--price",
    }
    served = len(server.requests)
    table = tmp_path / "table" / "table.toml"
    second = tmp_path / "second"
    proc = cli(
        second, "research", GOAL, "--mode", "auto", "--stages", str(table),
        "--model", f"replay:{first}",
    )  # fmt: skip
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    lines = [
        [ln for ln in (ws / "PROCESS.md").read_text().splitlines() if ln.startswith("Usage: ")]
        for ws in (first, second)
    ]
    assert len(lines[0]) == 3 and lines[0] == lines[1]
    assert "$0.00" in lines[0][0]
    assert status(second)["usage"]["cost"] == status(first)["usage"]["cost"] > 0
    assert len(server.requests) == served  # the replay asked the server nothing
