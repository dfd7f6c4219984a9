"""The defaults set in JupyterLab's Settings Editor reach a notebook's runs
(`app.lab_defaults`): the server keeps them where the kernels read them, checked, and they
sit below the session's own `%config` values."""

from __future__ import annotations

import json

import pytest

from lightscientist_jupyter.app import lab_defaults
from lightscientist_jupyter.app.ops.run_options import RunOptions, SessionDefaults
from lightscientist_jupyter.jupyter.server.defaults import save_defaults
from lightscientist_jupyter.jupyter.server.paths import Refused


@pytest.fixture
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter-config"))
    return tmp_path / "jupyter-config"


def test_the_server_keeps_the_defaults_where_a_kernel_reads_them(config_dir, tmp_path):
    answer = save_defaults(tmp_path, {"model": "offline", "mode": "auto", "budget": "tokens=5000"})
    kept = config_dir / "lightscientist" / "defaults.json"
    assert answer["path"] == str(kept)
    assert json.loads(kept.read_text()) == {
        "model": "offline",
        "mode": "auto",
        "budget": "tokens=5000",
    }
    assert lab_defaults.load() == {"model": "offline", "mode": "auto", "budget": "tokens=5000"}
    save_defaults(tmp_path, {"model": "", "mode": "", "budget": ""})  # cleared in the editor
    assert json.loads(kept.read_text()) == {}


@pytest.mark.parametrize(
    "body, said",
    [
        ({"mode": "sometimes"}, "Default mode: auto or manual, not 'sometimes'"),
        ({"budget": "lots"}, "Default budget: 'lots' must look like key=number"),
        ({"budget": "usd=-1"}, "Default budget: budget usd='-1' must be a positive number"),
        ({"model": "my model"}, "Default model: offline, provider:model or a model name"),
        ([], "the defaults must be a JSON object"),
    ],
)
def test_a_value_to_fix_is_refused_naming_the_setting_and_nothing_is_kept(
    config_dir, tmp_path, body, said
):
    save_defaults(tmp_path, {"model": "offline"})
    with pytest.raises(Refused) as refused:
        save_defaults(tmp_path, body)
    assert refused.value.status == 400 and refused.value.message.startswith(said)
    assert lab_defaults.load() == {"model": "offline", "mode": "", "budget": ""}


def test_a_file_that_cannot_be_read_gives_no_defaults(config_dir):
    target = config_dir / "lightscientist" / "defaults.json"
    target.parent.mkdir(parents=True)
    target.write_text("{not json")
    assert lab_defaults.load() == {}
    target.write_text(json.dumps({"mode": "often"}))
    assert lab_defaults.load() == {}


def test_the_sessions_own_values_win_over_the_settings_editors():
    lab = {"model": "offline", "mode": "auto", "budget": "tokens=5000"}
    below = SessionDefaults().over(lab, explicit=set())
    assert (below.model, below.mode, below.budget) == ("offline", "auto", "tokens=5000")
    mine = SessionDefaults(model="openai:gpt-4.1-mini", mode="manual", budget="usd=1")
    kept = mine.over(lab, explicit={"model", "mode", "budget"})
    assert (kept.model, kept.mode, kept.budget) == ("openai:gpt-4.1-mini", "manual", "usd=1")
    # a run's own option wins over both
    run = RunOptions(budget="usd=2").with_defaults(below)
    assert (run.budget, run.model) == ("usd=2", "offline")
