"""The memory in one SQLite file, searched through its FTS5 full-text index.

`entries` holds each entry; `entries_text` is an FTS5 index over their text (external
content: the text is stored once), kept in step by triggers, with the Porter stemmer so that
`warmup` finds `warmups`. A search ranks by FTS5's BM25 over the terms of the query joined
with OR (`entries.terms`): an entry that holds more of the rarer words ranks first.

Several processes use one file at once (a kernel's run, the command line, the server): WAL
journaling and a busy timeout let a reader go on while one writes. `forget` deletes the row,
rebuilds the index's segments without it (`optimize`) and checkpoints the journal, with
`secure_delete` on, so the text does not stay in the file's free pages.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lightscientist_jupyter.errors import MemoryUnavailable
from lightscientist_jupyter.memory.entries import Entry, Hit, NewEntry, terms
from lightscientist_jupyter.memory.rows import COLUMNS, filters, from_row, values_of

BUSY_MS = 5000
POOL = 64
"""A search ranks this many of the index's best matches (or 8 × k) before its filters."""
_COLUMNS = ", ".join(("id", *COLUMNS))
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  project TEXT NOT NULL,
  key TEXT NOT NULL,
  stage TEXT NOT NULL DEFAULT '',
  visit INTEGER NOT NULL DEFAULT 0,
  snapshot TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  at REAL NOT NULL,
  UNIQUE (project, key)
);
CREATE INDEX IF NOT EXISTS entries_at ON entries (at);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_text USING fts5(
  text, content='entries', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS entries_added AFTER INSERT ON entries BEGIN
  INSERT INTO entries_text (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS entries_removed AFTER DELETE ON entries BEGIN
  INSERT INTO entries_text (entries_text, rowid, text) VALUES ('delete', old.id, old.text);
END;
"""

T = TypeVar("T")


class SqliteMemory:
    """The memory in the SQLite file at `path` (made with its folder, private to the user,
    the first time)."""

    def __init__(self, path: Path):
        self.path = path
        self.where = str(path)
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = not path.exists()
            self._db = sqlite3.connect(path, timeout=BUSY_MS / 1000, check_same_thread=False)
            if fresh:
                os.chmod(path, 0o600)
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA secure_delete = ON")
            with self._db:
                self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise self._unavailable("open", exc) from None

    def _unavailable(self, doing: str, exc: BaseException) -> MemoryUnavailable:
        return MemoryUnavailable(
            f"memory {self.where}: cannot {doing} it ({exc}); fix the file or set "
            "$LIGHTSCIENTIST_MEMORY to another one (or a postgresql:// URL)"
        )

    def _do(self, doing: str, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return work(self._db)
            except sqlite3.Error as exc:
                raise self._unavailable(doing, exc) from None

    # ------------------------------------------------------------------ writing

    def add(self, entry: NewEntry) -> Entry:
        values = values_of(entry)

        def insert(db: sqlite3.Connection) -> Entry:
            with db:  # one transaction: the entry it replaces goes from the index too
                db.execute(
                    "DELETE FROM entries WHERE project = ? AND key = ?", (values[2], values[3])
                )
                cursor = db.execute(
                    f"INSERT INTO entries ({', '.join(COLUMNS)}) "
                    f"VALUES ({', '.join('?' for _ in COLUMNS)})",
                    values,
                )
            return Entry(int(cursor.lastrowid or 0), *values)

        return self._do("write", insert)

    def forget(self, entry_id: int) -> bool:
        def remove(db: sqlite3.Connection) -> bool:
            with db:
                gone = db.execute("DELETE FROM entries WHERE id = ?", (entry_id,)).rowcount
            if gone:
                with db:
                    db.execute("INSERT INTO entries_text (entries_text) VALUES ('optimize')")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return bool(gone)

        return self._do("write", remove)

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
        where, params = filters(kinds, project, exclude_project, mark="?", prefix="e.")
        match = " OR ".join(f'"{w}"' for w in words)
        columns = ", ".join("e." + c for c in _COLUMNS.split(", "))
        # the best-ranked matches first, from the index alone (joining every match to its
        # row to filter it costs as much again); the filters then keep `k` of them, and only
        # when they keep fewer is every match ranked with its row
        best = (
            "SELECT rowid, bm25(entries_text) AS rank FROM entries_text "
            "WHERE entries_text MATCH ? ORDER BY rank LIMIT ?"
        )
        pooled = (
            f"SELECT {columns}, best.rank FROM ({best}) AS best "
            f"JOIN entries e ON e.id = best.rowid WHERE 1 = 1{where} ORDER BY best.rank LIMIT ?"
        )
        every = (
            f"SELECT {columns}, bm25(entries_text) AS rank FROM entries_text "
            "JOIN entries e ON e.id = entries_text.rowid "
            f"WHERE entries_text MATCH ?{where} ORDER BY rank LIMIT ?"
        )
        pool = max(POOL, 8 * k)

        def ranked(db: sqlite3.Connection) -> list[Any]:
            rows = db.execute(pooled, (match, pool, *params, k)).fetchall()
            if len(rows) < k and where:
                rows = db.execute(every, (match, *params, k)).fetchall()
            return rows

        rows = self._do("search", ranked)
        return [Hit(from_row(row[:-1]), -float(row[-1])) for row in rows]

    def entries(
        self, *, kinds: Sequence[str] = (), project: str | None = None, limit: int | None = None
    ) -> list[Entry]:
        where, params = filters(kinds, project, None, mark="?")
        sql = f"SELECT {_COLUMNS} FROM entries WHERE 1 = 1{where} ORDER BY at DESC, id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._do("read", lambda db: db.execute(sql, params).fetchall())
        return [from_row(row) for row in rows]

    def get(self, entry_id: int) -> Entry | None:
        sql = f"SELECT {_COLUMNS} FROM entries WHERE id = ?"
        row = self._do("read", lambda db: db.execute(sql, (entry_id,)).fetchone())
        return from_row(row) if row else None

    def count(self) -> int:
        return int(
            self._do("read", lambda db: db.execute("SELECT count(*) FROM entries").fetchone()[0])
        )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SqliteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
