"""What the two SQL engines share: an entry's columns, the values filed for it, the entry a
row holds, and the filters of a search or a listing.

The stores (`sqlite`, `postgres`) differ in their full-text index and its ranking, not in
what an entry's row is: both file the values `values_of` makes of a `NewEntry` (its text
redacted as events are, then cut), so a secret or a long text is stored alike whichever
engine holds the memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lightscientist_jupyter.memory.entries import Entry, NewEntry, cut
from lightscientist_jupyter.redact import redact

COLUMNS = ("kind", "text", "project", "key", "stage", "visit", "snapshot", "source", "at")
"""An entry's columns in both engines' tables, after its `id`, in `Entry`'s order."""

Row = tuple[str, str, str, str, str, int, str, str, float]
"""What a store files for an entry: its `COLUMNS`' values."""


def values_of(entry: NewEntry) -> Row:
    """The values a store files for `entry`, in `COLUMNS`' order: its text redacted (as
    events are), cut to `entries.MAX_TEXT_CHARS` and without NUL characters (PostgreSQL's
    text holds none)."""
    return (
        str(entry.kind),
        cut(redact(entry.text.replace("\x00", ""))),
        entry.project,
        entry.key,
        entry.stage,
        int(entry.visit),
        entry.snapshot,
        entry.source,
        float(entry.at),
    )


def from_row(values: Sequence[Any]) -> Entry:
    """The entry a table's row holds: its `id`, then `COLUMNS`."""
    entry_id, kind, text, project, key, stage, visit, snapshot, source, at = values
    return Entry(
        int(entry_id), kind, text, project, key, stage, int(visit), snapshot, source, float(at)
    )


def filters(
    kinds: Sequence[str],
    project: str | None,
    exclude: str | None,
    *,
    mark: str,
    prefix: str = "",
) -> tuple[str, list[Any]]:
    """The `AND …` conditions keeping `kinds` (none: every kind), the entries of `project`
    and not those of `exclude`, and their parameters; `mark` is the engine's placeholder
    (`?`, `%s`), `prefix` the table's alias with its dot."""
    where = ""
    params: list[Any] = []
    if kinds:
        where += f" AND {prefix}kind IN ({', '.join(mark for _ in kinds)})"
        params += [str(k) for k in kinds]
    if project is not None:
        where += f" AND {prefix}project = {mark}"
        params.append(project)
    if exclude is not None:
        where += f" AND {prefix}project <> {mark}"
        params.append(exclude)
    return where, params
