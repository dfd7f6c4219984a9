"""The memory in a PostgreSQL database, searched through its full-text search: a team's
shared memory (`$LIGHTSCIENTIST_MEMORY=postgresql://…`, the `postgres` extra).

One table, `lightscientist_memory`, holds the entries with the columns of the SQLite store's
and a generated `tsvector` column (the `english` configuration: its Snowball stemmer makes
`warmups` find `warmup`) under a GIN index; it is made on the first open. A search matches the
terms of the query joined with OR (`entries.terms`, each a quoted lexeme of a parameter of
`to_tsquery`, so no word of a query is ever SQL or tsquery syntax) and ranks by
`ts_rank_cd`: the more of the query's words an entry holds, and the closer together, the
higher, its length discounted (normalization 1). Unlike SQLite's BM25 it keeps no statistics
of the corpus, so a rare word weighs no more than a common one.

One connection in autocommit, each operation one statement, behind a lock: the store is
shared by a kernel's threads as the SQLite one is. A kernel keeps its store for hours, so a
call that finds its connection dropped (the server restarted, an idle connection cut) is made
once more on a new one: no statement of the store does harm made twice (a key is filed once,
a row deleted once). Every engine error becomes `MemoryUnavailable`, naming the database,
server and user (`database_url.where`), never the password.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from lightscientist_jupyter import database_url
from lightscientist_jupyter.errors import MemoryUnavailable
from lightscientist_jupyter.memory.entries import Entry, Hit, NewEntry, terms
from lightscientist_jupyter.memory.rows import COLUMNS, filters, from_row, values_of

TABLE = "lightscientist_memory"
CONNECT_TIMEOUT_S = 10
_COLUMNS = ", ".join(("id", *COLUMNS))
_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  project TEXT NOT NULL,
  key TEXT NOT NULL,
  stage TEXT NOT NULL DEFAULT '',
  visit INTEGER NOT NULL DEFAULT 0,
  snapshot TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  at DOUBLE PRECISION NOT NULL,
  words TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
  UNIQUE (project, key)
)""",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_words ON {TABLE} USING GIN (words)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_at ON {TABLE} (at)",
)
_SCHEMA_LOCK = 0x4C534D454D  # 'LSMEM': two first opens at once make the table once

T = TypeVar("T")


class PostgresMemory:
    """The memory in the PostgreSQL database at `url` (its table made the first time).

    `forget` deletes the row: from then on no search, listing or `get` of anyone's finds it,
    and the GIN index holds it no more. "For good" stops at what the server keeps on its own:
    the deleted row's bytes stay in the table's pages until (auto)vacuum reuses them, and in
    the server's write-ahead log and backups, which its administrator keeps.
    """

    def __init__(self, url: str):
        self.url = url
        self.where = database_url.redact(url)
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._do("open", _make_schema)

    def _unavailable(self, doing: str, exc: psycopg.Error) -> MemoryUnavailable:
        return MemoryUnavailable(
            f"memory: cannot {doing} the PostgreSQL {database_url.where(self.url)}: "
            f"{database_url.reason(exc, self.url)}; fix that, or set $LIGHTSCIENTIST_MEMORY "
            "to another store (a file, or another postgresql:// URL)"
        )

    def _do(self, doing: str, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        with self._lock:
            try:
                try:
                    return work(self._connection())
                except psycopg.OperationalError:
                    if self._conn is None or not self._conn.broken:
                        raise
                    return work(self._connection())  # dropped (a restart): once more, anew
            except psycopg.Error as exc:
                raise self._unavailable(doing, exc) from None

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
            )
        return self._conn

    # ------------------------------------------------------------------ writing

    def add(self, entry: NewEntry) -> Entry:
        values = values_of(entry)
        replaced = ", ".join(f"{c} = EXCLUDED.{c}" for c in COLUMNS if c not in ("project", "key"))
        sql = (
            f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) "
            f"VALUES ({', '.join('%s' for _ in COLUMNS)}) "
            f"ON CONFLICT (project, key) DO UPDATE SET {replaced} RETURNING id"
        )
        added = self._do("write", lambda conn: conn.execute(sql, values).fetchone())
        assert added is not None  # an insert or an update returns its row's id
        return Entry(int(added[0]), *values)

    def forget(self, entry_id: int) -> bool:
        sql = f"DELETE FROM {TABLE} WHERE id = %s"
        return self._do("write", lambda conn: conn.execute(sql, (entry_id,)).rowcount > 0)

    # ------------------------------------------------------------------ reading

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        kinds: Sequence[str] = (),
        project: str | None = None,
        exclude_project: str | None = None,
    ) -> list[Hit]:
        words = terms(query)
        if not words or k <= 0:
            return []
        where, params = filters(kinds, project, exclude_project, mark="%s")
        # (a query of PostgreSQL's stop words alone, as `yourselves`, is empty: none matches)
        sql = (
            f"SELECT {_COLUMNS}, ts_rank_cd(words, q, 1) AS rank "
            f"FROM {TABLE}, to_tsquery('english', %s) AS q "
            f"WHERE words @@ q{where} ORDER BY rank DESC, id DESC LIMIT %s"
        )
        # quoted, a word of letters and digits (all `terms` keeps) is one lexeme of the tsquery
        match = " | ".join(f"'{w}'" for w in words if w.isalnum())
        rows = self._do("search", lambda conn: conn.execute(sql, (match, *params, k)).fetchall())
        return [Hit(from_row(row[:-1]), float(row[-1])) for row in rows]

    def entries(
        self, *, kinds: Sequence[str] = (), project: str | None = None, limit: int | None = None
    ) -> list[Entry]:
        where, params = filters(kinds, project, None, mark="%s")
        sql = f"SELECT {_COLUMNS} FROM {TABLE} WHERE TRUE{where} ORDER BY at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(max(int(limit), 0))
        rows = self._do("read", lambda conn: conn.execute(sql, params).fetchall())
        return [from_row(row) for row in rows]

    def get(self, entry_id: int) -> Entry | None:
        sql = f"SELECT {_COLUMNS} FROM {TABLE} WHERE id = %s"
        row = self._do("read", lambda conn: conn.execute(sql, (entry_id,)).fetchone())
        return from_row(row) if row else None

    def count(self) -> int:
        sql = f"SELECT count(*) FROM {TABLE}"
        found = self._do("read", lambda conn: conn.execute(sql).fetchone())
        return int(found[0]) if found else 0

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> PostgresMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_schema(conn: psycopg.Connection[Any]) -> None:
    """The table and its indexes, unless the table is there already (a user who may read
    and write it need not be allowed to create anything)."""
    found = conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()
    if found and found[0] is not None:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        for statement in _SCHEMA:
            conn.execute(statement)
