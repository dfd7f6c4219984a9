"""History and replay on PostgreSQL checkpoints behave as they do on the workspace's SQLite
file: a rewound project resumes to `done` with every earlier session still in the database, a
fork of it runs beside the original on the same database in sessions of its own, and a
recorded run replays without its server into the same stages, PROCESS.md and outputs.

The server is real (`support.postgres`); the models are the offline one and the replay of the
session's recording (`support.real_run`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.postgres import PASSWORD
from support.real_run import nothing_listens

from tests.test_checkpoint_urls import clean_env, cli, pg_threads
from tests.test_record_replay import outputs, process_entries, replay, stages_of
from tests.test_research import last_line


def records(ws: Path) -> dict[str, dict]:
    """The workspace's worker records (the archived ones too), by thread."""
    paths = (ws / ".lightscientist").rglob("worker.json")
    found = [json.loads(p.read_text()) for p in paths]
    return {r["thread_id"]: r for r in found}


def no_sqlite_and_no_password(ws: Path) -> None:
    assert not list(ws.rglob("checkpoints.sqlite*"))
    for path in ws.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_rewind_and_fork_on_postgres_keep_every_session_and_share_none(tmp_path, pg_url):
    original, forked = tmp_path / "project", tmp_path / "fork"
    env = clean_env(PGPASSWORD=PASSWORD)
    done = cli(original, "research", "x", "--mode", "auto", "--checkpoints", pg_url)
    assert done.returncode == 0 and last_line(done) == "done", done.stderr
    first_run = records(original)
    assert first_run.keys() <= pg_threads(pg_url)

    proc = cli(original, "fork", "idea.gate", str(forked), env=env)
    assert proc.returncode == 0, proc.stderr
    proc = cli(original, "rewind", "experiment.setup", env=env)
    assert proc.returncode == 0, proc.stderr
    for ws in (original, forked):
        proc = cli(ws, "resume", env=env)  # the kept URL, the password from PGPASSWORD
        assert proc.returncode == 0 and last_line(proc) == "done", (ws, proc.stderr)

    in_postgres = pg_threads(pg_url)
    resumed, of_fork = records(original), records(forked)
    assert first_run.keys() <= in_postgres  # rewound over, never dropped
    assert resumed.keys() <= in_postgres
    workers = {t for t, r in first_run.items() if r["role"] == "worker"}
    assert workers <= resumed.keys()  # kept, or archived naming their threads
    new_branch = resumed.keys() - first_run.keys()  # its workers, and the supervisor's thread
    assert {resumed[t]["stage"] for t in new_branch} >= {"experiment.setup", "paper.review"}
    assert of_fork and of_fork.keys() <= in_postgres
    assert not of_fork.keys() & resumed.keys()  # the fork continues no session of the original
    stages = {r["stage"] for r in of_fork.values() if r["role"] == "worker"}
    assert "paper.review" in stages and not stages & {"idea.survey", "idea.generate"}
    for ws in (original, forked):
        no_sqlite_and_no_password(ws)


def test_a_replay_on_postgres_reproduces_the_run(real_recording, pg_url):
    first = real_recording["first"]
    assert nothing_listens(real_recording["url"])
    second, proc = replay(real_recording, "on-postgres", f"replay:{first}", pg_url=pg_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert last_line(proc) == "done"
    assert stages_of(second) == stages_of(first)
    assert process_entries(second) == process_entries(first)
    assert outputs(second) == outputs(first)
    assert records(second).keys() <= pg_threads(pg_url)
    no_sqlite_and_no_password(second)
