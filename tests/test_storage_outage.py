"""The checkpoint database goes away in the middle of a run (issue 30, point 8), for real: a
PostgreSQL server stopped with `pg_ctl stop -m immediate` while a worker of the experiment
loop runs, and the disk of a SQLite checkpoint file filled up meanwhile (a tmpfs in a private
mount namespace). The run ends `stopped` — never `failed` — at once, with one line naming the
database and the stage, and nothing else on stderr (no pool warnings, no traceback); `resume`
once the database is back carries the project to `done`. The storage fault classification
itself is checked on real errors: a damaged SQLite file, a refused PostgreSQL connection.
"""

from __future__ import annotations

import errno
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.postgres import PASSWORD
from support.waiting import wait_for

from lightscientist_jupyter._faults import CHECKPOINTS, storage_fault
from tests.test_checkpoint_urls import clean_env, cli
from tests.test_disk_faults import in_mount_namespace, read

PYTHON = sys.executable
IN_THE_LOOP = r'"tool\.call".*"stage":"experiment\.loop"'
"""An event of a worker of `experiment.loop` calling a tool: the run is in the midst of work."""


def in_the_loop(log: Path) -> bool:
    return log.exists() and re.search(IN_THE_LOOP, log.read_text()) is not None


@pytest.mark.slow
def test_a_database_outage_stops_the_run_naming_it_and_resume_goes_on(tmp_path, own_postgres):
    url = own_postgres.new_database()
    database = url.rsplit("/", 1)[1]
    ws = tmp_path / "project"
    run = subprocess.Popen(
        [PYTHON, "-m", "lightscientist_jupyter", "research", "x", "--mode", "auto"]
        + ["--checkpoints", url, "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        wait_for(
            lambda: in_the_loop(ws / ".lightscientist" / "events.jsonl"), "the loop", within=180
        )
        own_postgres.stop()
        out, err = run.communicate(timeout=120)  # (it took 570 s to end `failed` before)
    finally:
        run.kill()
        run.wait()

    assert run.returncode == 1, (out, err)
    assert err.count("\n") == 1, err  # one line: no pool warning, no traceback
    state = json.loads((ws / ".lightscientist" / "state.json").read_text())
    assert state["status"] == "stopped", state
    where = f"the checkpoint database '{database}' on 127.0.0.1:{own_postgres.port}"
    assert err.startswith(f"lightscientist research: {where} as user 'postgres' went away ("), err
    assert err.endswith(
        f") at stage {state['stage']}: run `lightscientist resume` when it is back\n"
    ), err
    assert state["reason"] == err.strip().removeprefix("lightscientist research: ")
    assert PASSWORD not in err + out

    own_postgres.start()
    resumed = cli(ws, "resume", env=clean_env(PGPASSWORD=PASSWORD))
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1] == "done"
    assert "Traceback" not in resumed.stderr
    after = json.loads((ws / ".lightscientist" / "state.json").read_text())
    assert after["status"] == "done"
    assert after["history"][: len(state["history"])] == state["history"]


SQLITE_DISK_FULL = f"""
set -u
cd "$1"; mkdir ck; mount -t tmpfs -o size=64m tmpfs ck
{PYTHON} -m lightscientist_jupyter research x --mode auto --workspace ws \
    --checkpoints "sqlite:///$1/ck/checkpoints.sqlite" > out1 2> err1 &
run=$!
for i in $(seq 3600); do
    grep -q '{IN_THE_LOOP}' ws/.lightscientist/events.jsonl 2> /dev/null && break
    sleep 0.05
done
cat /dev/zero > ck/filler 2> /dev/null   # the checkpoints' disk is full; the workspace's is not
wait $run; echo $? > rc1
cp ws/.lightscientist/state.json state1.json
rm ck/filler
{PYTHON} -m lightscientist_jupyter resume --workspace ws > out2 2> err2; echo $? > rc2
cp ws/.lightscientist/state.json state2.json
"""


@pytest.mark.slow
def test_a_full_disk_under_the_sqlite_checkpoints_stops_the_run_naming_that_file(tmp_path):
    in_mount_namespace(SQLITE_DISK_FULL, str(tmp_path))
    err = read(tmp_path / "err1")
    assert read(tmp_path / "rc1").strip() == "1", err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    first = json.loads(read(tmp_path / "state1.json"))
    assert first["status"] == "stopped", first
    assert err == (
        f"lightscientist research: disk full while writing the checkpoint database "
        f"{tmp_path}/ck/checkpoints.sqlite at stage {first['stage']}: free space and run "
        "`lightscientist resume`\n"
    )
    assert read(tmp_path / "rc2").strip() == "0", read(tmp_path / "err2")
    assert read(tmp_path / "out2").strip().splitlines()[-1] == "done"
    assert json.loads(read(tmp_path / "state2.json"))["status"] == "done"


# ------------------------------------------------------------------ the classification


def test_a_damaged_sqlite_file_is_a_storage_fault(tmp_path):
    path = tmp_path / "checkpoints.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 50)
    conn.close()
    with open(path, "r+b") as fh:  # the pages after the header, overwritten
        fh.seek(4096)
        fh.write(b"\xff" * 8192)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        sqlite3.connect(path).execute("SELECT count(*) FROM t").fetchall()
    fault = storage_fault(caught.value)
    assert fault is not None and fault.kind == "damaged" and fault.where == CHECKPOINTS
    assert str(fault).startswith("the checkpoint database is damaged (")
    assert str(fault).endswith(
        ": run `lightscientist resume --fresh-sessions` (the stage starts again)"
    )


def test_a_refused_database_connection_is_a_storage_fault_and_a_bug_is_not():
    import psycopg

    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect("postgresql://me@127.0.0.1:9/db", connect_timeout=5)
    fault = storage_fault(caught.value)
    assert fault is not None and fault.kind == "gone"
    assert fault.line("idea.survey").startswith("the checkpoint database went away (")
    assert fault.line("idea.survey").endswith(
        " at stage idea.survey: run `lightscientist resume` when it is back"
    )
    assert storage_fault(OSError(errno.ENOSPC, "No space left", "/w/x")) is not None
    assert storage_fault(OSError(errno.ENOENT, "No such file", "/w/x")) is None
    assert storage_fault(ValueError("a bug")) is None
