"""The session's `%config` checkpoints, ray and library reach the runs `%lightscientist research`
starts, on an in-process `InteractiveShell` with the offline model and a real PostgreSQL server
(`support.postgres`): the URL is kept in state.json without its password, every session's
checkpoints are in that database, and the survey cites the library's entry."""

from __future__ import annotations

import json

import pytest
from IPython.utils.capture import capture_output
from support.postgres import PASSWORD
from support.waiting import wait_for

from lightscientist_jupyter import api
from lightscientist_jupyter.controller.loader import default_table_path
from lightscientist_jupyter.runtime.checkpoints.url import redact
from lightscientist_jupyter.workspace import Workspace
from tests.jupyter.test_magic import fresh_defaults, ip, ls  # noqa: F401 (fixtures)
from tests.test_literature_cli import MINE

pytestmark = pytest.mark.slow

RAY = "http://127.0.0.1:8265"  # kept for the run's jobs (the survey submits none)


def survey_table(folder):
    skills = default_table_path().parent / "skills"
    path = folder / "survey.toml"
    path.write_text(
        f'start = "idea.survey"\n\n[stages."idea.survey"]\nskill = "{skills}/idea.survey.md"\n'
        'outputs = ["idea/survey.md"]\nnext = "done"\nallowed = ["done"]\n',
        encoding="utf-8",
    )
    return path


def test_config_checkpoints_ray_and_library_reach_the_run(
    ip,  # noqa: F811
    fresh_defaults,  # noqa: F811
    tmp_path,
    pg_url,
    monkeypatch,
):
    for name in ("LIGHTSCIENTIST_CHECKPOINTS", "RAY_ADDRESS", "PGPASSWORD"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "mine.bib").write_text(MINE, encoding="utf-8")
    ws = tmp_path / "configured"
    ip.run_line_magic("config", f'LightScientistMagics.checkpoints = "{pg_url}"')
    ip.run_line_magic("config", f'LightScientistMagics.ray = "{RAY}"')
    ip.run_line_magic("config", f'LightScientistMagics.library = ["{tmp_path / "mine.bib"}"]')
    try:
        with capture_output():
            ls(ip, f'research "Does warmup help?" --mode auto --stages "{survey_table(tmp_path)}" '
                   f'-w "{ws}"')  # fmt: skip
        run = api.current(ws)
        assert run is not None
        assert run.wait(timeout=120) == "done", run.status()
        wait_for(lambda: not run.alive, "the run's thread to end", within=30)
    finally:
        fresh_defaults.checkpoints = fresh_defaults.ray = None
        fresh_defaults.library = []

    state_file = Workspace.at(ws).state_file
    settings = json.loads(state_file.read_text())["settings"]
    assert settings["checkpoints"] == redact(pg_url) and settings["ray"] == RAY
    assert PASSWORD not in state_file.read_text()
    assert not Workspace.at(ws).checkpoints_file.exists()  # no SQLite file: PostgreSQL's
    import psycopg

    with psycopg.connect(pg_url) as conn:
        threads = {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    records = [
        json.loads(p.read_text()) for p in Workspace.at(ws).workers_dir.glob("*/worker.json")
    ]
    assert records and {r["thread_id"] for r in records} <= threads

    survey = (ws / "idea" / "survey.md").read_text(encoding="utf-8")
    assert '"Learning Rate Warmup in Practice"' in survey and "[@smith2019learning]" in survey
