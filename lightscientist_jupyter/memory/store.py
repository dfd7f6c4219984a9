"""Where the user's memory is, and the seam both engines fill.

`$LIGHTSCIENTIST_MEMORY` names it: a `postgresql://` URL (a team's shared memory, the
`postgres` extra), or a file path for SQLite; unset, `memory.sqlite3` under the user's data
folder (`$XDG_DATA_HOME/lightscientist`, by default `~/.local/share/lightscientist`). It is
read each time a store is opened, so a notebook's `%env` takes effect for the next run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from lightscientist_jupyter.errors import MemoryUnavailable
from lightscientist_jupyter.memory.entries import Entry, Hit, NewEntry

ENV = "LIGHTSCIENTIST_MEMORY"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class MemoryStore(Protocol):
    """A memory store. Every method raises `MemoryUnavailable` (naming the store) when the
    engine cannot do it; none raises anything else for a store that works."""

    where: str
    """The store as a user names it: the file, or the URL without its password."""

    def add(self, entry: NewEntry) -> Entry:
        """File `entry` (its text redacted like events). One its project already holds under
        its key is replaced: a stage visit finished again after a rewind, or in a folder
        made anew for another project, is filed as it ended last."""
        ...

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        kinds: Sequence[str] = (),
        project: str | None = None,
        exclude_project: str | None = None,
    ) -> list[Hit]:
        """The `k` entries that match `query` best (BM25); none for a query with no word to
        search by. `project` keeps one project's entries, `exclude_project` leaves one out."""
        ...

    def entries(
        self, *, kinds: Sequence[str] = (), project: str | None = None, limit: int | None = None
    ) -> list[Entry]:
        """Entries, the newest first."""
        ...

    def get(self, entry_id: int) -> Entry | None: ...

    def forget(self, entry_id: int) -> bool:
        """Remove an entry for good: from the index too, and from the engine's free pages
        where it can say so; False when there is no such entry."""
        ...

    def count(self) -> int: ...

    def close(self) -> None: ...


def location(environ: dict[str, str] | None = None) -> str:
    """Where the memory is: `$LIGHTSCIENTIST_MEMORY`, else the default file."""
    env = os.environ if environ is None else environ
    given = (env.get(ENV) or "").strip()
    if given:
        return given if given.startswith(POSTGRES_SCHEMES) else str(Path(given).expanduser())
    data = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "lightscientist", "memory.sqlite3")


def open_store(where: str | None = None) -> MemoryStore:
    """The store at `where` (default: `location()`), opened (and made, the first time)."""
    where = where or location()
    if where.startswith(POSTGRES_SCHEMES):
        try:
            from lightscientist_jupyter.memory.postgres import PostgresMemory
        except ImportError as exc:
            raise MemoryUnavailable(
                f"{ENV} names a PostgreSQL server, but its driver is missing ({exc.name}): "
                "pip install 'lightscientist-jupyter[postgres]'"
            ) from None
        return PostgresMemory(where)
    from lightscientist_jupyter.memory.sqlite import SqliteMemory

    return SqliteMemory(Path(where))
