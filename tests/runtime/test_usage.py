"""Usage accounting and the budget gate at layer 3, through the real `ChatOpenAI` client
against the local chat server: tokens as the server reported them, a retried call counted
once, a call held before it starts and made on resume, the offline model's estimate."""

from __future__ import annotations

import json
import logging

import pytest
from support.runtime import answer, finish, http_error, plain_spec, stage_spec, tool_call

from lightscientist_jupyter.app.usage import UsageRow, UsageView, render
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.metering.model_prices import agent_model_price, price_for
from lightscientist_jupyter.values.prices import FREE, Price, parse_price
from lightscientist_jupyter.values.usage import Usage, dollars, read_ledger

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def test_tokens_come_from_the_server_and_a_retried_call_counts_once(
    chat_server, chat_model, make_runtime, ws
):
    chat_server.play(
        tool_call("write_file", file_path="/a.md", content="a"),
        http_error(503),
        answer("done"),
    )
    charged: list[dict] = []
    meter = UsageMeter(
        ws.state_dir / "usage.jsonl",
        model="some-model",
        price=Price(1.0, 2.0),
        on_charge=charged.append,
    )
    runtime = make_runtime(chat_model, retries=2, retry_initial_delay=0.01, meter=meter)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)

    assert record["status"] == "completed"
    assert len(chat_server.requests) == 3  # a call, a failed attempt and its retry
    usage = Usage.from_dict(record["usage"])
    assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (2, 22, 14)
    assert usage.estimated == 0
    assert usage.cost == pytest.approx((22 * 1.0 + 14 * 2.0) / 1e6)
    lines = read_ledger(ws.state_dir / "usage.jsonl")
    assert [(c["worker"], c["input_tokens"], c["output_tokens"]) for c in lines] == [
        (worker, 11, 7),
        (worker, 11, 7),
    ]
    assert charged == lines


def test_a_held_call_does_not_start_and_a_resume_makes_it(
    chat_server, chat_model, make_runtime, ws, updates
):
    chat_server.play(
        tool_call("write_file", file_path="/a.md", content="a"),
        answer("done"),
    )
    spent: list[dict] = []
    limit = {"calls": 1}
    meter = UsageMeter(
        gate=lambda: "tokens: 18 of 10 spent" if len(spent) >= limit["calls"] else None,
        on_charge=spent.append,
    )
    runtime = make_runtime(chat_model, meter=meter)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)

    assert record["status"] == "running"  # suspended, not failed, not cancelled
    assert record["held"] == "tokens: 18 of 10 spent"
    assert len(chat_server.requests) == 1
    assert (ws.root / "a.md").read_text() == "a"
    assert [u.status for u in updates.of(worker)][-1] == "running"

    limit["calls"] = 10  # the budget was raised
    runtime.resume(worker)
    record = finish(runtime, worker)
    assert record["status"] == "completed", record
    assert record["held"] is None
    assert len(chat_server.requests) == 2  # the held call, made once
    assert Usage.from_dict(record["usage"]).model_calls == 2


def test_a_hold_is_the_graphs_middleware_not_a_callback_error(
    chat_server, chat_model, make_runtime, ws, caplog
):
    """The hold stops the call in the graph's own middleware: LangChain reports no failed
    callback, and its logger is left as the user's kernel had it (no filter of ours)."""
    chat_server.play(answer("done"))
    meter = UsageMeter(gate=lambda: "tokens: 18 of 10 spent")
    runtime = make_runtime(chat_model, meter=meter)
    with caplog.at_level(logging.DEBUG):
        record = finish(runtime, runtime.start(plain_spec()))

    assert record["held"] == "tokens: 18 of 10 spent"
    assert not chat_server.requests
    assert not [r for r in caplog.records if "BudgetHold" in r.getMessage()]
    assert logging.getLogger("langchain_core.callbacks.manager").filters == []


def test_the_offline_model_reports_an_estimate(make_runtime, ws, table):
    meter = UsageMeter(ws.state_dir / "usage.jsonl", model="offline", price=FREE)
    runtime = make_runtime(meter=meter)
    worker = runtime.start(stage_spec(table, ws, "idea.survey"))
    record = finish(runtime, worker, timeout=60)
    usage = Usage.from_dict(record["usage"])
    assert usage.model_calls > 0
    assert usage.estimated == usage.model_calls
    assert usage.input_tokens > 100 and usage.output_tokens > 0
    assert usage.cost == 0.0


def test_a_cost_reads_as_money_and_nothing_charged_is_zero_dollars():
    """The offline model's runs cost nothing: `$0`, not `$0.0000` (issue 41)."""
    assert [dollars(c) for c in (0.0, 0.00012, 0.5, 1.0, 12.345)] == [
        "$0", "$0.0001", "$0.5000", "$1.00", "$12.35"]  # fmt: skip
    assert dollars(None) == "cost unknown" and dollars(None, unknown="unknown") == "unknown"


def test_prices():
    assert parse_price("in=0.4, out=1.6") == Price(0.4, 1.6)
    assert parse_price("in=1,out=2,cached=0.1").cost(1_000_000, 1_000_000, 500_000) == (
        pytest.approx(0.5 + 0.05 + 2.0)
    )
    with pytest.raises(BadInput, match="--price part 'inp=1' must be in=USD"):
        parse_price("inp=1,out=2")
    with pytest.raises(BadInput, match="lacks out="):
        parse_price("in=1")
    assert price_for("offline") == FREE
    assert price_for("some-model", base_url="http://127.0.0.1:1/v1") is None  # unknown
    assert price_for("nosuch:model") is None
    known = price_for("openai:gpt-4.1-mini")
    assert known is not None and known.source == "genai-prices"
    assert known.cost(1_000_000, 1_000_000) == pytest.approx(0.4 + 1.6)


def test_a_replay_is_priced_as_its_recording_says(tmp_path):
    def recording(name: str, header: dict) -> str:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "run-0001.jsonl").write_text(json.dumps({"kind": "run", **header}) + "\n")
        return str(folder)

    known = price_for("openai:gpt-4.1-mini")
    assert known is not None
    library = recording("library", {"model": "openai-chat:gpt-4.1-mini", "price": known.to_dict()})
    assert price_for(f"replay:{library},lenient") == known
    assert price_for(f"replay:{recording('local', {'model': 'x', 'price': None})}") is None
    priced = recording("priced", {"model": "x", "price": Price(1.0, 2.0).to_dict()})
    assert price_for(f"replay:{priced}") == Price(1.0, 2.0)
    # a recording older than prices: the offline model's costs nothing, any other's is unknown
    assert price_for(f"replay:{recording('old', {'model': 'lightscientist-offline'})}") == FREE
    assert price_for(f"replay:{recording('older', {'model': 'openai-chat:x'})}") is None
    assert price_for("replay:/nonexistent/folder") is None


def test_a_turn_of_an_agent_that_reports_no_usage_is_not_reported_never_zero(tmp_path):
    ledger = tmp_path / "usage.jsonl"
    meter = UsageMeter(ledger, model="offline")
    who = {"worker": "w2", "stage": "b", "task_id": "b#1"}
    meter.charge_reported(who, Usage(input_tokens=120, output_tokens=30), "codex", 1.5)
    meter.charge_reported(who, None, "codex", 2.0)
    first, second = read_ledger(ledger)
    assert (first["model"], first["tokens"], first["unreported"], first["cost_usd"]) == (
        "codex",
        150,
        0,
        None,
    )
    assert (second["tokens"], second["unreported"], second["cost_usd"]) == (0, 1, None)
    both = Usage.from_dict(first).plus(Usage.from_dict(second))
    assert (both.model_calls, both.unreported, both.cost) == (2, 1, None)
    assert worker_line(Usage.from_dict(second)) == "w2 1 usage not reported"
    assert worker_line(both) == "w2 2 120 30 3.5 unknown (1 call(s): usage not reported)"


@pytest.mark.unit
def test_an_agents_turn_is_priced_by_the_model_it_names_when_the_table_knows_it(tmp_path):
    ledger = tmp_path / "usage.jsonl"
    meter = UsageMeter(ledger, model="offline")
    who = {"worker": "w2", "stage": "b", "task_id": "b#1"}
    million = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    meter.charge_reported(who, million, "codex", 1.0, model="gpt-4.1-mini")
    meter.charge_reported(who, million, "codex", 1.0, model="gpt-4.1-mini/high")  # an effort
    meter.charge_reported(who, million, "claude", 1.0, model="default")  # an alias: unknown
    meter.charge_reported(who, None, "codex", 1.0, model="gpt-4.1-mini")  # nothing reported
    lines = read_ledger(ledger)
    assert [(x["model"], x["cost_usd"]) for x in lines] == [
        ("codex/gpt-4.1-mini", pytest.approx(2.0)),
        ("codex/gpt-4.1-mini/high", pytest.approx(2.0)),
        ("claude/default", None),
        ("codex/gpt-4.1-mini", None),
    ]
    assert agent_model_price("gpt-4.1-mini") == price_for("openai:gpt-4.1-mini")
    assert agent_model_price("sonnet") is None


def worker_line(usage: Usage) -> str:
    """The `usage --by worker` line of worker w2 with `usage`, its spaces single."""
    view = UsageView("worker", (UsageRow("w2", usage),), usage, {})
    return " ".join(render(view)[1].split())
