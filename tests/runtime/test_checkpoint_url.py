"""Checkpoints by URL in layer 3: the URL kept without its password, the choice between the URL
given now, the project's own and `LIGHTSCIENTIST_CHECKPOINTS`, a SQLite file by path, and the one
line a wrong password or an unreachable server gives (a real PostgreSQL server)."""

from __future__ import annotations

import socket

import pytest
from support.postgres import PASSWORD

from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.checkpoints.url import (
    CheckpointsUnavailable,
    choose,
    open_postgres,
    redact,
)


def test_the_password_is_taken_out_wherever_it_is():
    assert redact("postgresql://me:pw@db.lab:5433/runs") == "postgresql://me@db.lab:5433/runs"
    assert redact("postgres://me@db/runs?password=pw&sslmode=require") == (
        "postgres://me@db/runs?sslmode=require"
    )
    assert redact("sqlite:///data/ck.sqlite") == "sqlite:///data/ck.sqlite"


def test_resume_uses_the_projects_url_with_the_environments_password(monkeypatch):
    kept = {"checkpoints": "postgresql://me@db/runs"}
    monkeypatch.delenv(checkpoint_url.ENV, raising=False)
    assert choose("sqlite", None, {}) == "sqlite"
    assert choose("memory", "postgresql://x@y/z", kept) == "memory"  # handed in: stays
    assert choose("sqlite", None, kept) == "postgresql://me@db/runs"
    assert choose("sqlite", "postgresql://me:pw@other/runs", kept) == (
        "postgresql://me:pw@other/runs"
    )
    monkeypatch.setenv(checkpoint_url.ENV, "postgresql://me:pw@db/runs")
    assert choose("sqlite", None, kept) == "postgresql://me:pw@db/runs"
    assert choose("sqlite", None, {}) == "sqlite"  # a SQLite project stays on its file
    monkeypatch.setenv(checkpoint_url.ENV, "postgresql://me:pw@elsewhere/runs")
    assert choose("sqlite", None, kept) == "postgresql://me@db/runs"


def test_a_sqlite_url_names_a_file_from_the_workspace(make_runtime, ws):
    runtime = make_runtime(checkpointer="sqlite:///store/ck.sqlite")
    assert runtime.list() == []
    assert (ws.root / "store" / "ck.sqlite").stat().st_mode & 0o777 == 0o600
    assert not ws.checkpoints_file.exists()


def test_postgres_sets_up_its_tables_and_refuses_a_wrong_password(postgres, pg_url):
    saver = open_postgres(pg_url)
    try:
        assert list(saver.list({"configurable": {"thread_id": "none"}})) == []
    finally:
        saver.conn.close()
    database = pg_url.rsplit("/", 1)[1]
    with pytest.raises(CheckpointsUnavailable) as wrong:
        open_postgres(pg_url.replace(PASSWORD, "guess"))
    assert str(wrong.value) == (
        f"cannot open the PostgreSQL checkpoint database '{database}' on "
        f"127.0.0.1:{postgres.port} as user 'postgres': wrong password (it comes from the URL, "
        "PGPASSWORD or ~/.pgpass)"
    )
    with pytest.raises(CheckpointsUnavailable, match="the database does not exist"):
        open_postgres(postgres.url("nothere"))


def test_an_unreachable_server_is_named_without_the_password():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CheckpointsUnavailable) as caught:
        open_postgres(f"postgresql://me:hunter2@127.0.0.1:{port}/lab")
    assert str(caught.value) == (
        f"cannot open the PostgreSQL checkpoint database 'lab' on 127.0.0.1:{port} as user "
        "'me': the server is unreachable (is PostgreSQL running there?)"
    )


def test_the_password_can_come_from_a_pgpass_file(postgres, pg_url, tmp_path, monkeypatch):
    database = pg_url.rsplit("/", 1)[1]
    without = redact(pg_url)  # as the project keeps it
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.delenv("PGPASSFILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    pgpass = tmp_path / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres.port}:{database}:postgres:{PASSWORD}\n")
    pgpass.chmod(0o600)  # libpq ignores a file others can read
    saver = open_postgres(without)
    try:
        assert list(saver.list({"configurable": {"thread_id": "none"}})) == []
    finally:
        saver.conn.close()
    pgpass.write_text(f"127.0.0.1:{postgres.port}:{database}:postgres:not-it\n")
    with pytest.raises(CheckpointsUnavailable, match="wrong password"):
        open_postgres(without)
