"""`lightscientist estimate` and `research --dry-run`: per stage of the table, model calls,
tokens and cost, labelled as an estimate — from a recorded run of the same table when there
is one (the suite's real-model recording, whose tokens the server reported), otherwise from
the skill and task sizes; nothing written; bad input exits 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.real_run import GOAL, cli

from lightscientist_jupyter import api
from lightscientist_jupyter.app.estimate import estimate
from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.runtime.metering.model_prices import price_for


def test_without_a_recording_every_stage_is_estimated_from_its_sizes(tmp_path):
    table = load_table()
    est = estimate(tmp_path / "nothing-here", model="openai:gpt-4.1-mini")
    assert [r.stage for r in est.rows] == [*table.ids(), "lessons"] and est.stages == 14
    assert {r.basis for r in est.rows} == {"sizes"} and est.recording is None
    *stages, lessons = est.rows
    assert all(r.model_calls >= 5 and r.input_tokens > r.output_tokens > 0 for r in stages)
    assert lessons.model_calls == 2 and lessons.input_tokens > lessons.output_tokens > 0
    price = price_for("openai:gpt-4.1-mini")
    assert price is not None
    total = est.total
    assert total.cost == pytest.approx(price.cost(total.input_tokens, total.output_tokens))
    # a bigger skill is a bigger estimate
    assert estimate(tmp_path, goal="g" * 40_000).total.input_tokens > total.input_tokens
    local = estimate(tmp_path, model="some-model", base_url="http://127.0.0.1:9/v1")
    assert local.total.cost is None and local.total.tokens == total.tokens
    assert estimate(tmp_path).total.cost == 0.0  # the offline model


def test_research_dry_run_prints_the_estimate_and_writes_nothing(tmp_path):
    ws = tmp_path / "new project"
    proc = cli(ws, "research", GOAL, "--dry-run", "--model", "openai:gpt-4.1-mini")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Estimate (not a measurement) of a run of ")
    assert "(14 stages, then its lessons) with model openai:gpt-4.1-mini" in lines[0]
    assert any(line.startswith("total ") and "$" in line for line in lines)
    assert "from the skill and task sizes" in proc.stdout
    assert not ws.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--price", "in=1"], "lacks out="),
        (["--budget", "dollars=3"], None),  # not an estimate option: argparse says so
        (["--stages", "missing.toml"], "file not found"),
        (["--from", "nowhere"], "--from nowhere: no recording there"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, error):
    proc = cli(tmp_path, "estimate", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    if error:
        assert error in proc.stderr


@pytest.mark.slow
def test_a_recorded_run_of_the_same_table_gives_the_tokens_it_spent(real_recording):
    first = real_recording["first"]
    proc = cli(first, "estimate", "--json", "--price", "in=2,out=10")
    assert proc.returncode == 0, proc.stderr
    est = json.loads(proc.stdout)
    assert est["estimate"] is True and est["stages"] == 3
    assert est["recorded_model"] == "openai-chat:some-model"
    assert est["recording"] == str(first / ".lightscientist" / "recordings")
    spent = json.loads(cli(first, "usage", "--json", "--by", "stage").stdout)
    rows = {r["stage"]: r for r in est["rows"]}
    assert {s: r["basis"] for s, r in rows.items()} == dict.fromkeys(
        ["a", "gate", "b", "lessons"], "recorded"
    )
    for row in spent["rows"]:  # the server reported these tokens: the estimate has them exactly
        assert (rows[row["key"]]["model_calls"], rows[row["key"]]["tokens"]) == (
            row["model_calls"],
            row["tokens"],
        )
    total = est["total"]
    assert total["tokens"] == spent["total"]["tokens"]
    assert total["cost"] == pytest.approx(
        (total["input_tokens"] * 2 + total["output_tokens"] * 10) / 1e6
    )
    # from another folder, --from names the recording; the API gives the same as a DataFrame
    frame = api.estimate(
        Path("/nonexistent"), stages=str(real_recording["table"]), source=str(first)
    )
    assert frame.attrs["estimate"] and list(frame.index) == ["a", "gate", "b", "lessons", "total"]
    assert frame.loc["total", "tokens"] == total["tokens"]
    # a recording of another table is refused
    proc = cli(first, "estimate", "--stages", str(load_table().path), "--from", str(first))
    assert proc.returncode == 2 and "is a run of another table" in proc.stderr
