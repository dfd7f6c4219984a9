"""The user's memory: what earlier projects learned, kept across projects and recalled by later
ones.

A project's own memory is its `PROCESS.md`; this is the user's (or a team's): one store of
entries — `lesson` (what worked, what failed and why), `finding` (a stage's result with its
numbers), `paper` (a work read) — each with the project folder, stage, visit, snapshot and
time it came from. The store is a real engine: SQLite with its FTS5 full-text index by default
(`sqlite`), PostgreSQL's full-text search for a `postgresql://` location (`postgres`, a team's
shared memory); both rank lexically (BM25, `ts_rank_cd`). Where it is comes from
`$LIGHTSCIENTIST_MEMORY` (`location`).

A leaf: layer 1 files findings and lessons and recalls a stage's entries for its task header,
the workers' `recall` tool searches it, the shells list, search, add and forget. It imports no
layer.
"""

from lightscientist_jupyter.memory.entries import Entry, Hit, NewEntry
from lightscientist_jupyter.memory.store import MemoryStore, location, open_store

__all__ = ["Entry", "Hit", "MemoryStore", "NewEntry", "location", "open_store"]
