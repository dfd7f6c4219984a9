"""A memory entry as it is filed and as it comes back, and the query a text makes.

Pure: no engine here. The stores (`sqlite`, `postgres`) take a `NewEntry`, give back `Entry`
and `Hit` values, and search with the terms `terms` finds in a query, so both engines rank the
same words.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path
from typing import Any

from lightscientist_jupyter.vocab import MemoryKind, MemorySource

MAX_TEXT_CHARS = 4000
"""An entry's text is cut to this (a finding is a 5-10 line summary and its outputs)."""
MAX_TERMS = 24
"""A query's words beyond these are dropped: a long query ranks no better and costs more."""

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
_STOP = frozenset(
    "the and for with from that this what which when where does did not are was were has have "
    "had its into than then them they their there these those how why who will would can could "
    "should about over under more most less each every any all one two use used using our you "
    "your his her she him been being also only such very just stage task project run".split()
)


@dataclasses.dataclass(frozen=True)
class NewEntry:
    """An entry to file: what it says, and where it came from."""

    kind: MemoryKind
    text: str
    project: str
    """The project folder it came from (absolute); '' for one the researcher added outside
    a project."""
    key: str
    """Unique within its project: filing the same key again replaces the entry
    (`finding:experiment.loop#3`, `lesson:done#2`, `paper:doi:10.…`)."""
    stage: str = ""
    visit: int = 0
    snapshot: str = ""
    """The workspace snapshot of the stage event it came from (`lightscientist history`)."""
    source: str = MemorySource.CONTROLLER
    """Who wrote it: `controller` (layer 1), `worker`, `researcher`."""
    at: float = dataclasses.field(default_factory=time.time)


_NO_STAGE: dict[str, str] = {
    MemorySource.WORKER: "its lessons",
    MemorySource.RESEARCHER: "your note",
}
"""What an entry of no stage says of where it came from, by who filed it."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """An entry of the store."""

    id: int
    kind: str
    text: str
    project: str
    key: str
    stage: str
    visit: int
    snapshot: str
    source: str
    at: float

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def project_name(self) -> str:
        """The project folder's last part (`warmup-study`), or `-` for none."""
        return Path(self.project).name if self.project else "-"

    def origin(self) -> str:
        """Where it came from, in a few words: `warmup-study, experiment.loop#2`,
        `warmup-study, its lessons`, `-, your note`."""
        if self.stage:
            where = f"{self.stage}#{self.visit}"
        else:
            where = _NO_STAGE.get(self.source, self.source)
        return f"{self.project_name}, {where}"


@dataclasses.dataclass(frozen=True)
class Hit:
    """An entry a search found, with its rank (higher is better; only the order means
    anything, and only within one search)."""

    entry: Entry
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.entry.to_dict(), "score": round(self.score, 4)}


def terms(query: str) -> list[str]:
    """The words of `query` a search ranks by: lower-cased, three letters or more, common
    words left out, each once, at most `MAX_TERMS`."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if word not in _STOP:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def one_line(text: str, limit: int) -> str:
    """`text` on one line (its whitespace runs made one space), cut to `limit` with `…`: an
    entry as an event, a task header or a tool's answer shows it."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cut(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text` stripped and cut to `limit` characters (the cut said)."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 12].rstrip() + " … (cut)"
