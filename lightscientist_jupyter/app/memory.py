"""The user's memory for the front doors: `lightscientist memory` and its actions (`search`,
`add`, `forget`, `export`), `remember` (the magic's word for `memory add`), `api.memory`.

Each action opens the store `$LIGHTSCIENTIST_MEMORY` names (`memory.open_store`), does one
thing and closes it, so a notebook's `%env` change takes effect at the next command. A store
that cannot be opened raises `MemoryUnavailable`, one line naming it (the command line exits
1); an entry to forget that is not there is an outcome that is not `ok`.

An entry the researcher files belongs to a project: the folder `--workspace` names, else the
door's folder (the current one, or a notebook's `%config LightScientistMagics.workspace`)
when it holds a project, else none ('').
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any

from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.memory import Entry, Hit, MemoryStore, NewEntry, open_store
from lightscientist_jupyter.vocab import MemoryKind, MemorySource
from lightscientist_jupyter.workspace import Workspace

SEARCH_K = 10
"""How many entries `memory search` shows unless told (`-k`)."""
COLUMNS = tuple(f.name for f in dataclasses.fields(Entry))
"""An entry's fields, the columns of `api.memory`'s frame (a search's adds `score`)."""
TEXT_CHARS = 60
"""An entry's text is cut to this in the command line's list (`export` keeps it whole)."""


@dataclasses.dataclass(frozen=True)
class MemoryRequest:
    """`memory [ACTION]`: its fields are the argparse destinations of `arguments.memory` (an
    action's own arguments are absent from the others' namespaces, hence the defaults)."""

    action: str | None = None
    """`search`, `add`, `forget`, `export`; None lists the entries."""
    query: str = ""
    text: str = ""
    id: int | None = None
    """The entry to forget."""
    kind: str | None = None
    """The list and `search`: only this kind (the API's); `add`: the new entry's (None: a
    lesson)."""
    k: int = SEARCH_K
    json: bool = False
    workspace: str | None = None
    """`add`: the project the entry belongs to."""


@dataclasses.dataclass(frozen=True)
class RememberRequest:
    """`remember TEXT`: `memory add` by another name."""

    text: str = ""
    kind: str | None = None
    workspace: str | None = None


@dataclasses.dataclass(frozen=True)
class MemoryOutcome:
    """What a memory action did: one line, and the entries it read."""

    message: str
    ok: bool = True
    entries: tuple[Entry, ...] = ()
    """Listed or exported (newest first), or the one filed or forgotten."""
    hits: tuple[Hit, ...] = ()
    """Found by a search, the best first."""

    def records(self) -> list[dict[str, Any]]:
        """The hits (each with its `score`) or else the entries, as plain dicts."""
        if self.hits:
            return [hit.to_dict() for hit in self.hits]
        return [entry.to_dict() for entry in self.entries]


# ------------------------------------------------------------------------- the actions


@contextlib.contextmanager
def _store() -> Iterator[MemoryStore]:
    store = open_store()
    try:
        yield store
    finally:
        store.close()


def _kind(given: str | None) -> MemoryKind | None:
    if given is None:
        return None
    try:
        return MemoryKind(given)
    except ValueError:
        known = ", ".join(str(k) for k in MemoryKind)
        raise BadInput(f"'{given}' is no kind of memory entry; one of {known}") from None


def _list(request: MemoryRequest, session_workspace: str | None) -> MemoryOutcome:
    kind = _kind(request.kind)
    with _store() as store:
        entries = tuple(store.entries(kinds=[kind] if kind else ()))
        where = store.where
    if not entries:
        return MemoryOutcome(
            f"the memory {where} is empty (`lightscientist memory add TEXT` files a lesson)"
        )
    return MemoryOutcome(f"{_count(len(entries))} in the memory {where}", entries=entries)


def _search(request: MemoryRequest, session_workspace: str | None) -> MemoryOutcome:
    if not request.query.strip():
        raise BadInput("memory search needs a QUERY: the words to look for")
    if request.k < 1:
        raise BadInput(f"-k must be 1 or more, not {request.k}")
    kind = _kind(request.kind)
    with _store() as store:
        hits = tuple(store.search(request.query, request.k, kinds=[kind] if kind else ()))
        where = store.where
    if not hits:
        return MemoryOutcome(f"no entry of the memory {where} matches '{request.query}'")
    return MemoryOutcome(f"{_count(len(hits))} of the memory {where} match", hits=hits)


def _add(request: MemoryRequest, session_workspace: str | None) -> MemoryOutcome:
    return remember(
        RememberRequest(request.text, request.kind, request.workspace), session_workspace
    )


def _forget(request: MemoryRequest, session_workspace: str | None) -> MemoryOutcome:
    if request.id is None:
        raise BadInput(
            "memory forget needs the ID of an entry (`lightscientist memory` lists them)"
        )
    with _store() as store:
        entry = store.get(request.id)
        gone = entry is not None and store.forget(request.id)
        where = store.where
    if entry is None or not gone:
        return MemoryOutcome(
            f"the memory {where} holds no entry {request.id} "
            "(`lightscientist memory` lists the entries and their ids)",
            ok=False,
        )
    return MemoryOutcome(
        f"forgot {entry.kind} {entry.id}: {shortened(entry.text)}",
        entries=(entry,),
    )


def _export(request: MemoryRequest, session_workspace: str | None) -> MemoryOutcome:
    with _store() as store:
        entries = tuple(store.entries())
        where = store.where
    return MemoryOutcome(
        f"{_count(len(entries))} exported from the memory {where}", entries=entries
    )


Action = Callable[[MemoryRequest, str | None], MemoryOutcome]

ACTIONS: dict[str | None, Action] = {
    None: _list,
    "search": _search,
    "add": _add,
    "forget": _forget,
    "export": _export,
}
"""What `memory ACTION` does (None: no action, the list)."""


def perform(request: MemoryRequest, session_workspace: str | None = None) -> MemoryOutcome:
    """Carry out `memory [ACTION]`; `session_workspace` is the door's folder (a notebook's
    `%config LightScientistMagics.workspace`), whose project an entry filed without
    `--workspace` belongs to."""
    action = ACTIONS.get(request.action)
    if action is None:
        known = ", ".join(a for a in ACTIONS if a)
        raise BadInput(f"memory has no action '{request.action}'; one of {known}")
    return action(request, session_workspace)


def remember(request: RememberRequest, session_workspace: str | None = None) -> MemoryOutcome:
    """File the researcher's `text` (a lesson unless another kind is given), with its project
    (`project_of`)."""
    text = request.text.strip()
    if not text:
        raise BadInput("there is nothing to remember: give the TEXT of the entry")
    kind = _kind(request.kind) or MemoryKind.LESSON
    project = project_of(request.workspace, session_workspace)
    at = time.time()
    researcher = str(MemorySource.RESEARCHER)
    new = NewEntry(kind, text, project, f"{researcher}:{at:.6f}", source=researcher, at=at)
    with _store() as store:
        entry = store.add(new)
        where = store.where
    if entry is None:  # the same key in the same microsecond: a second click, say
        return MemoryOutcome(f"not filed: the memory {where} was just given this entry", ok=False)
    whose = f"project {entry.project_name}" if entry.project else "no project"
    return MemoryOutcome(
        f"filed {entry.kind} {entry.id} in the memory {where} ({whose})", entries=(entry,)
    )


def project_of(workspace: str | None, folder: str | None = None) -> str:
    """The project folder an entry filed from here belongs to: `workspace` (given on the
    line) made absolute, else `folder` (the door's default, the current folder) when it
    holds a project, else ''."""
    if workspace:
        return str(Workspace.at(workspace).root)
    here = Workspace.at(folder or ".")
    return str(here.root) if here.exists() else ""


# ------------------------------------------------------------------------- text


def shortened(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` on one line, its control characters escaped, cut to `limit` characters."""
    line = printable(" ".join(text.split()))
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def when(at: float) -> str:
    """A Unix time as the list shows it: local date and time to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def entry_lines(entries: tuple[Entry, ...] | list[Entry]) -> list[str]:
    """The entries as the command line lists them: id, kind, project, stage#visit, when and
    the text shortened, under a header."""
    rows = [("id", "kind", "project", "stage", "when", "text")]
    rows += [
        (
            str(e.id),
            e.kind,
            printable(e.project_name),
            f"{e.stage}#{e.visit}" if e.stage else "-",
            when(e.at),
            shortened(e.text),
        )
        for e in entries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for number, *middle, text in rows:
        cells = [number.rjust(widths[0])]
        cells += [cell.ljust(width) for cell, width in zip(middle, widths[1:], strict=True)]
        lines.append("  ".join([*cells, text]).rstrip())
    return lines


def _count(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"
