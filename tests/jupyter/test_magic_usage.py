"""`%lightscientist estimate`, `research --dry-run` and the session's `%config` budget and
price, on an in-process `InteractiveShell` with the offline model (real runs, real files)."""

from __future__ import annotations

import pandas as pd
import pytest
from IPython.utils.capture import capture_output
from support.waiting import wait_for

from lightscientist_jupyter import api
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.workspace import Workspace
from tests.jupyter.test_magic import fresh_defaults, ip, ls  # noqa: F401 (fixtures)


def test_estimate_and_dry_run_are_dataframes_and_write_nothing(ip, tmp_path):  # noqa: F811
    frame = ls(ip, f'estimate -w "{tmp_path}" --model openai:gpt-4.1-mini')
    assert isinstance(frame, pd.DataFrame) and frame.attrs["estimate"] is True
    # 14 stages, the worker that draws the project's lessons at its end, and the total
    assert list(frame.index)[-2:] == ["lessons", "total"] and len(frame) == 16
    assert set(frame["basis"]) == {"sizes"} and frame.loc["total", "cost"] > 0
    new = tmp_path / "new"
    dry = ls(ip, f'research "a goal" --dry-run -w "{new}"')
    assert isinstance(dry, pd.DataFrame) and dry.loc["total", "tokens"] > 0
    assert not new.exists() and api.current(new) is None
    as_dict = ls(ip, f'estimate -w "{tmp_path}" --json --price in=1,out=1')
    assert as_dict["estimate"] is True and as_dict["price"]["in"] == 1.0


def test_config_budget_and_price_apply_to_the_runs(ip, tmp_path, fresh_defaults):  # noqa: F811
    ws = tmp_path / "budgeted"
    ip.run_line_magic("config", 'LightScientistMagics.budget = "tokens=4000"')
    ip.run_line_magic("config", 'LightScientistMagics.price = "in=1,out=2"')
    try:
        with capture_output():
            ls(ip, f'research "find x" --mode auto -w "{ws}"')
        run = api.current(ws)
        assert run is not None
        assert run.wait(until="waiting_user", timeout=120) == "waiting_user", run.status()
    finally:
        fresh_defaults.budget = fresh_defaults.price = None
    info = api.open_project(ws).status()
    assert info["pending"]["kind"] == "budget"
    assert info["pending"]["question"].startswith("The project budget of 4,000 tokens is spent")
    used = info["usage"]
    assert used["cost"] == pytest.approx((used["input_tokens"] + 2 * used["output_tokens"]) / 1e6)
    with capture_output():
        ls(ip, f'reply n -w "{ws}"')
    wait_for(lambda: not run.alive, "the run to end", within=60)
    state = load_state(Workspace.at(ws).state_file)
    assert (state.status, state.reason) == ("failed", "budget")
