"""A real PostgreSQL server for the tests, in a temporary folder (`initdb` + `pg_ctl`).

The server refuses to run as root, so when the tests run as root the data folder belongs to
the `postgres` user (created when missing) and the server runs as that user. It listens on
127.0.0.1 on a free port with password authentication (scram-sha-256), so the tests can give a
wrong password too; each test gets its own database. Without the binaries the tests skip —
except under CI (`CI=true`), where `scripts/setup` installs them and their absence fails.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PASSWORD = "s3cret-" + uuid.uuid4().hex[:8]
START_WAIT_S = 60


def _binary(name: str) -> str | None:
    """On PATH, or where Debian's package keeps it (/usr/lib/postgresql/<version>/bin)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user() -> list[str]:
    """The prefix that runs a command as the user the server may run as."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "postgres"], check=True, timeout=30
        )
    return ["runuser", "-u", "postgres", "--"]


class PostgresServer:
    """One server for the session; `new_database()` gives each test its own database."""

    def __init__(self, base: Path):
        initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
        if initdb is None or pg_ctl is None:
            reason = "PostgreSQL's initdb/pg_ctl are not installed (scripts/setup installs them)"
            if os.environ.get("CI") == "true":
                pytest.fail(f"PostgreSQL tests cannot run under CI: {reason}")
            pytest.skip(reason)
        self.pg_ctl = pg_ctl
        self.base = base
        self.data = base / "data"
        self.port = _free_port()
        self.prefix = _as_server_user()
        base.mkdir(parents=True, exist_ok=True)
        pwfile = base / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.prefix:
            shutil.chown(base, "postgres")
            shutil.chown(pwfile, "postgres")
        subprocess.run(
            [*self.prefix, initdb, "-D", str(self.data), "-U", "postgres", "-A",
             "scram-sha-256", f"--pwfile={pwfile}", "--no-sync", "-E", "UTF8"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        self.start()

    def start(self) -> None:
        """Start the server (again, after `stop`) on its port, and wait until it answers."""
        options = f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*self.prefix, self.pg_ctl, "-D", str(self.data), "-l", str(self.base / "server.log"),
             "-o", options, "-w", "-t", str(START_WAIT_S), "start"],
            check=True, capture_output=True, timeout=START_WAIT_S + 30,
        )  # fmt: skip
        self._wait_ready()

    def url(self, database: str = "postgres", password: str | None = PASSWORD) -> str:
        auth = f"postgres:{password}" if password is not None else "postgres"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh database's URL (password included)."""
        import psycopg

        name = "t" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + START_WAIT_S
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        """Stop the server at once (`-m immediate`: its connections are cut, as in a crash)."""
        subprocess.run(
            [*self.prefix, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )


@contextlib.contextmanager
def server_in_tmp(prefix: str = "ls-postgres-") -> Iterator[PostgresServer]:
    """A server in a folder of its own in /tmp itself (the `postgres` user cannot enter
    pytest's root-only one), stopped and its folder removed at the end."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(base, 0o755)
    try:
        server = PostgresServer(base / "server")
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)
