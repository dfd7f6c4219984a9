"""Checkpoints by URL: `sqlite:///PATH` (the workspace's file by default) or `postgresql://…`.

`--checkpoints URL` (or `LIGHTSCIENTIST_CHECKPOINTS`) picks where worker and supervisor sessions
keep their LangGraph checkpoints. A project keeps the URL it was started with in its settings,
without the password, so `resume` — on this host or another one that sees the workspace —
finds the same database; the password comes from the URL given again, `PGPASSWORD` or
`~/.pgpass` (libpq reads both). PostgreSQL runs through `langgraph-checkpoint-postgres` (the
`postgres` extra) on a small connection pool; its tables are set up on first use.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from lightscientist_jupyter.database_url import reason as _reason
from lightscientist_jupyter.database_url import redact as redact
from lightscientist_jupyter.database_url import where as where
from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.runtime.checkpoints.saver_guard import guarded
from lightscientist_jupyter.workspace import Workspace, creatable_problem

ENV = "LIGHTSCIENTIST_CHECKPOINTS"
SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 10
POOL_SIZE = 4
EXTRA_HINT = "pip install 'lightscientist-jupyter[postgres]'"


class CheckpointsUnavailable(RuntimeLayerError):
    """The checkpoint database named by a URL cannot be opened (unreachable, refused, bad URL)."""


def is_postgres(url: str) -> bool:
    return url.startswith(SCHEMES)


def check(url: str) -> str:
    """The URL itself when it is one we open; raises naming what to write instead."""
    if url in ("sqlite", "memory") or is_postgres(url) or url.startswith("sqlite:///"):
        return url
    raise CheckpointsUnavailable(
        f"unknown checkpoints URL '{redact(url)}'; use sqlite:///PATH (the default: the "
        "workspace's .lightscientist/checkpoints.sqlite) or postgresql://USER@HOST:PORT/DATABASE"
    )


def check_new(workspace: Workspace, given: str | None) -> None:
    """The checkpoints a new project in `workspace` would use, checked before anything is
    written (`CheckpointsUnavailable` naming the option and what to change): a URL we open,
    and for `sqlite:///PATH` a database that can be made there or opened as it is. A
    PostgreSQL server is tried by `settings`."""
    url = given or os.environ.get(ENV) or ""
    if not url or url == "sqlite":
        return
    check(url)
    if not url.startswith("sqlite:///"):
        return
    path = Path(os.path.normpath(sqlite_path(workspace, url)))
    own = (workspace.root, *workspace.root.parents, workspace.state_dir, workspace.process_md)
    problem = f"{path} is a folder or a file of the project" if path in own else None
    problem = problem or sqlite_problem(path)
    if problem:
        option = "--checkpoints" if given else ENV
        raise CheckpointsUnavailable(
            f"{option} {redact(url)}: {problem}; give another sqlite:///PATH, in a folder you "
            "can write (a relative PATH is from the workspace)"
        )


def sqlite_problem(path: Path) -> str | None:
    """Why a SQLite checkpoint database could not be opened at `path` (or made there), found
    without writing anything — not even the WAL files a read-only open would add; or None."""
    if not path.exists():
        return creatable_problem(path)
    if path.is_dir():
        return f"{path} is a folder"
    if not path.is_file():
        return f"{path} is not a regular file"
    if not os.access(path, os.R_OK | os.W_OK):
        return f"{path} cannot be read and written"
    import sqlite3
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        return f"{path} cannot be opened ({exc})"
    try:
        found = [str(row[0]) for row in conn.execute("PRAGMA quick_check(2)")]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    finally:
        conn.close()
    if found == ["ok"]:
        return None
    lines = [" ".join(line.split()) for text in found for line in text.splitlines()]
    detail = "; ".join(line for line in lines if line and not line.startswith("***"))
    return f"{path} is not a sound SQLite database ({detail or 'its check failed'})"


def settings(given: str | None) -> dict[str, Any]:
    """What a new project keeps: `checkpoints` (redacted) when not the default SQLite file.

    A PostgreSQL URL is tried first, so a wrong one fails before any file is written."""
    url = given or os.environ.get(ENV) or ""
    if not url or url == "sqlite":
        return {}
    check(url)
    if is_postgres(url):
        _connect(url).close()
    return {"checkpoints": redact(url)}


def choose(checkpointer: Any, given: str | None, stored: dict[str, Any]) -> Any:
    """The checkpointer of this run: a saver or 'memory' handed in (tests) stays; else the URL
    given now, else the project's own (with the password of `LIGHTSCIENTIST_CHECKPOINTS` when
    that names the same database), else the workspace's SQLite file."""
    if checkpointer != "sqlite":
        return checkpointer
    if given:
        return check(given)
    kept = stored.get("checkpoints")
    if not isinstance(kept, str) or not kept:
        return "sqlite"
    env = os.environ.get(ENV) or ""
    return env if env and redact(env) == kept else check(kept)


def sqlite_path(workspace: Workspace, url: str) -> Path:
    """The SQLite file of `sqlite` or `sqlite:///PATH` (relative paths: from the workspace)."""
    if url == "sqlite":
        return workspace.checkpoints_file
    if not url.startswith("sqlite:///"):
        check(url)
        raise CheckpointsUnavailable(f"unknown checkpointer '{url}'; use 'sqlite' or 'memory'")
    path = Path(url[len("sqlite:///") :])
    return path if path.is_absolute() else workspace.root / path


def label(workspace: Workspace, checkpointer: Any) -> str:
    """How a stopped run's line names its checkpoint database (see `choose`): the file, or
    the PostgreSQL database and server, never the password."""
    if isinstance(checkpointer, str) and is_postgres(checkpointer):
        return f"the checkpoint {where(checkpointer)}"
    if isinstance(checkpointer, str) and checkpointer.startswith("sqlite"):
        return f"the checkpoint database {sqlite_path(workspace, checkpointer)}"
    return "the checkpoint database"


def _modules() -> Any:
    try:
        import psycopg
        import psycopg_pool
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        raise CheckpointsUnavailable(
            f"PostgreSQL checkpoints need the postgres extra: {EXTRA_HINT}"
        ) from None
    # The pool logs each failed reconnection as a warning, again and again while the server
    # is down, and Python prints them to stderr when no handler takes them; a run reports the
    # outage itself, in one line (see `saver_guard`). Handlers the user set still get them.
    logging.getLogger("psycopg").addHandler(_QUIET)
    return psycopg, psycopg_pool, PostgresSaver


_QUIET = logging.NullHandler()


def _connect(url: str) -> Any:
    """One connection, to find out early whether the database can be had at all."""
    psycopg, _, _ = _modules()
    try:
        return psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)
    except psycopg.Error as exc:
        raise CheckpointsUnavailable(
            f"cannot open the PostgreSQL checkpoint {where(url)}: {_reason(exc, url)}"
        ) from None


def open_postgres(url: str) -> BaseCheckpointSaver[Any]:
    """A `PostgresSaver` on a connection pool, its tables set up (raises one clear line)."""
    psycopg, psycopg_pool, postgres_saver = _modules()
    from psycopg.rows import dict_row

    _connect(url).close()
    pool = psycopg_pool.ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_SIZE,
        timeout=CONNECT_TIMEOUT_S * 3,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": CONNECT_TIMEOUT_S,
        },
        open=False,
        name="lightscientist-checkpoints",
    )
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_S * 3)
        # its waiting callers fail at once, and its reconnecting ends, when the server is gone
        saver = guarded(postgres_saver, pool, on_gone=pool.close)
        saver.setup()
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        pool.close()
        raise CheckpointsUnavailable(
            f"cannot set up the PostgreSQL checkpoint {where(url)}: {_reason(exc, url)}"
        ) from None
    opened: BaseCheckpointSaver[Any] = saver  # (its class came from a lazy import, untyped)
    return opened


def drop_threads(url: str, thread_ids: list[str]) -> int:
    """Delete these sessions' checkpoints from a PostgreSQL database (`resume --fresh-sessions`:
    the SQLite file is moved aside instead); returns how many of them had any."""
    _, _, postgres_saver = _modules()
    dropped = 0
    with _connect(url) as conn:
        saver = postgres_saver(conn)
        for thread_id in thread_ids:
            if saver.get_tuple({"configurable": {"thread_id": thread_id}}) is not None:
                dropped += 1
            saver.delete_thread(thread_id)
    return dropped
