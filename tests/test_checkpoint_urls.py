"""Checkpoints by URL, from the command line: a project on PostgreSQL checkpoints killed in the
middle of its experiment loop resumes from a copy of its folder in another directory (the other
host) and ends `done`; a wrong password, an unreachable server and an unknown URL are one clear
line each, before any file is written.

The server is real (`support.postgres`); the model is the offline one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.postgres import PASSWORD
from support.waiting import sigkill_in_experiment_loop

from lightscientist_jupyter.runtime.checkpoints.url import redact


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus any PostgreSQL or LightScientist setting of the caller's (the
    suite's memory kept: `$LIGHTSCIENTIST_MEMORY` unset is the runner's own)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "LIGHTSCIENTIST_"))}
    memory = os.environ["LIGHTSCIENTIST_MEMORY"]
    return {**env, "LIGHTSCIENTIST_MODEL": "", "LIGHTSCIENTIST_MEMORY": memory, **extra}


def cli(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=240, env=env or clean_env()
    )


def killed_mid_loop(ws: Path, pg_url: str) -> None:
    """`research --mode auto` on PostgreSQL checkpoints in `ws`, SIGKILLed in its experiment
    loop (see `sigkill_in_experiment_loop`)."""
    sigkill_in_experiment_loop(
        [sys.executable, "-m", "lightscientist_jupyter", "research", "x", "--mode", "auto",
         "--checkpoints", pg_url, "--workspace", str(ws)],
        ws / ".lightscientist" / "events.jsonl",
        env=clean_env(),
    )  # fmt: skip


@pytest.mark.slow
def test_a_killed_project_resumes_on_another_host_from_postgres(tmp_path, pg_url):
    first = tmp_path / "host-a" / "project"
    first.mkdir(parents=True)
    killed_mid_loop(first, pg_url)
    state = json.loads((first / ".lightscientist" / "state.json").read_text())
    assert state["stage"] == "experiment.loop" and state["status"] == "running"
    assert state["settings"]["checkpoints"] == redact(pg_url)
    assert PASSWORD not in state["settings"]["checkpoints"]

    other = tmp_path / "host-b" / "project"  # the shared folder, as the other host sees it
    shutil.copytree(first, other)
    proc = cli(other, "resume", env=clean_env(PGPASSWORD=PASSWORD))

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    keys = re.findall(r"<!-- entry: (\S+) -->", (other / "PROCESS.md").read_text())
    assert len(keys) == len(set(keys)) and "paper.review#1" in keys
    assert not (other / ".lightscientist" / "checkpoints.sqlite").exists()
    for path in other.rglob("*"):  # the password never reached a file of the workspace
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path

    import psycopg

    with psycopg.connect(pg_url) as conn:
        threads = {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    records = [
        json.loads(p.read_text())
        for p in (other / ".lightscientist" / "workers").glob("*/worker.json")
    ]
    kept = {r["thread_id"] for r in records if r["status"] != "cancelled"}
    assert any(r["stage"] == "experiment.loop" for r in records)
    assert kept and kept <= threads  # every session's checkpoints are in the database


@pytest.mark.slow
def test_a_wrong_password_is_one_line_naming_the_database(tmp_path, pg_url, postgres):
    ws = tmp_path / "project"
    database = pg_url.rsplit("/", 1)[1]
    proc = cli(ws, "research", "x", "--checkpoints", pg_url.replace(PASSWORD, "not-it"))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"lightscientist research: error: cannot open the PostgreSQL checkpoint database "
        f"'{database}' on 127.0.0.1:{postgres.port} as user 'postgres': wrong password (it "
        "comes from the URL, PGPASSWORD or ~/.pgpass)\n"
    )
    assert "not-it" not in proc.stderr
    assert not (ws / ".lightscientist" / "state.json").exists()

    without = pg_url.replace(f":{PASSWORD}@", "@")  # and none anywhere: libpq asks for one
    proc = cli(ws, "research", "x", "--checkpoints", without)
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "a password is needed: give it in the URL, PGPASSWORD or ~/.pgpass\n"
    ), proc.stderr


@pytest.mark.slow
def test_an_unreachable_server_and_an_unknown_url_are_named(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ws = tmp_path / "project"
    url = f"postgresql://me:hunter2@127.0.0.1:{port}/lab"
    proc = cli(ws, "research", "x", env=clean_env(LIGHTSCIENTIST_CHECKPOINTS=url))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"lightscientist research: error: cannot open the PostgreSQL checkpoint database 'lab' "
        f"on 127.0.0.1:{port} as user 'me': the server is unreachable (is PostgreSQL running "
        "there?)\n"
    )
    proc = cli(ws, "research", "x", "--checkpoints", "mysql://me:hunter2@db/lab")
    assert proc.returncode == 2
    assert proc.stderr == (
        "lightscientist research: error: unknown checkpoints URL 'mysql://me@db/lab'; "
        "use sqlite:///PATH (the default: the workspace's .lightscientist/checkpoints.sqlite) "
        "or postgresql://USER@HOST:PORT/DATABASE\n"
    )
    assert not (ws / ".lightscientist" / "state.json").exists()


def threads_in_sqlite(ws: Path) -> set[str]:
    import contextlib
    import sqlite3

    path = ws / ".lightscientist" / "checkpoints.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}


def worker_threads(ws: Path, stages: tuple[str, ...]) -> set[str]:
    records = [json.loads(p.read_text()) for p in (ws / ".lightscientist").glob("workers/*/*.json")]
    return {
        r["thread_id"]
        for r in records
        if r["role"] == "worker" and r.get("stage", "").startswith(stages)
    }


@pytest.mark.slow
def test_a_url_given_to_resume_is_kept_for_the_next_resume(tmp_path, pg_url):
    ws = tmp_path / "project"
    first = cli(ws, "research", "x", "--mode", "auto", "--until", "idea.survey")
    assert first.returncode == 0 and first.stdout.strip().splitlines()[-1] == "paused", first.stderr
    assert (
        "checkpoints"
        not in json.loads((ws / ".lightscientist" / "state.json").read_text())["settings"]
    )  # the workspace's SQLite file

    moved = cli(ws, "resume", "--checkpoints", pg_url, "--until", "idea.generate")
    assert moved.returncode == 0 and moved.stdout.strip().splitlines()[-1] == "paused", moved.stderr
    state_text = (ws / ".lightscientist" / "state.json").read_text()
    assert json.loads(state_text)["settings"]["checkpoints"] == redact(pg_url)
    assert PASSWORD not in state_text

    plain = cli(ws, "resume", env=clean_env(PGPASSWORD=PASSWORD))  # no URL: the kept one
    assert plain.returncode == 0 and plain.stdout.strip().splitlines()[-1] == "done", plain.stderr
    import psycopg

    with psycopg.connect(pg_url) as conn:
        in_postgres = {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    later = worker_threads(ws, ("experiment.", "paper."))  # run by the plain resume
    assert later and later <= in_postgres and not later & threads_in_sqlite(ws)
    assert worker_threads(ws, ("idea.survey",)) <= threads_in_sqlite(ws)


def pg_threads(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}


@pytest.mark.slow
def test_fresh_sessions_drop_the_stage_sessions_from_postgres(tmp_path, pg_url, postgres):
    ws = tmp_path / "project"
    ws.mkdir()
    killed_mid_loop(ws, pg_url)
    records = [json.loads(p.read_text()) for p in (ws / ".lightscientist").glob("workers/*/*.json")]
    unfinished = {r["thread_id"] for r in records if r["status"] not in ("completed", "cancelled")}
    finished = {r["thread_id"] for r in records if r["status"] == "completed"}
    before = pg_threads(pg_url)
    # (a session killed before its first checkpoint — a worker just started, the supervisor
    # on the thread its renewal just began — has none yet: how many there are is timing)
    assert unfinished and finished and finished <= before

    proc = cli(ws, "resume", "--fresh-sessions", env=clean_env(PGPASSWORD=PASSWORD))
    assert proc.returncode == 0, proc.stderr
    database = pg_url.rsplit("/", 1)[1]
    assert (
        f"dropped {len(unfinished & before)} session(s) of the current stage from the PostgreSQL "
        f"checkpoint database '{database}' on 127.0.0.1:{postgres.port} as user 'postgres'\n"
    ) in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "done" and PASSWORD not in proc.stdout
    after = pg_threads(pg_url)
    assert not unfinished & after  # the killed stage's sessions are gone
    assert finished <= after  # the finished stages' sessions stay (history, replay)
    assert not (ws / ".lightscientist" / "checkpoints.sqlite").exists()
    assert not list((ws / ".lightscientist").glob("checkpoints.damaged-*"))
