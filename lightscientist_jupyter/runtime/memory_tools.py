"""The workers' `recall` tool: what earlier projects learned, and this project's own record
beyond a task's digest.

A task's header carries a few entries layer 1 recalled for it and a bounded digest of
`PROCESS.md`; `recall(query, k)` lets a worker look further, in two places ranked apart
(their scores do not compare):

- the user's memory (`memory`): lessons, findings and papers of *other* projects — this
  project's own findings are its `PROCESS.md` entries, searched below; none when memory is
  off for the stage or the run;
- this project: every `PROCESS.md` entry (the oldest too, which the digest folds into one
  line) and the text files its finished stages listed as outputs, indexed for the call in an
  in-memory SQLite FTS5 table and ranked by BM25, each hit shown as an excerpt around the
  words it matched.

Every file is read through the guarded path (`beneath`): a link a command left where an
output was is skipped, never followed. What a call found is its `tool.result` event (layer 3;
`memory.recall` is layer 1's, for a task's header).
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from langchain_core.tools import BaseTool, tool

from lightscientist_jupyter import memory
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.errors import MemoryUnavailable
from lightscientist_jupyter.memory.entries import one_line, terms

MAX_K = 10
FILE_CHARS = 60_000
"""How much of one output file is searched (its start)."""
_ENTRY = re.compile(r"(?m)^## ")
_OUTPUTS = re.compile(r"(?m)^Outputs: (.+)$")
_HIT_CHARS = 300


@dataclasses.dataclass(frozen=True)
class RecallScope:
    """A worker's side of `recall`: its project and whether memory is on for its stage."""

    root: Path
    memory_on: bool


def memory_tools(current: Callable[[], RecallScope]) -> list[BaseTool]:
    """The `recall` tool; `current` gives the scope of the worker whose turn is running."""

    @tool
    def recall(query: str, k: int = 5) -> str:
        """Search what earlier projects learned (the user's memory: lessons, findings, papers
        read) and this project's own record beyond your task's digest (every PROCESS.md
        entry, the finished stages' output files). Returns the best `k` of each, with where
        each came from. Use a few specific words (a method, a dataset, a failure)."""
        return recall_text(current(), query, max(1, min(int(k), MAX_K)))

    return [recall]


def recall_text(scope: RecallScope, query: str, k: int) -> str:
    if not terms(query):
        return "Error: the query has no word to search by; use a few specific words."
    lines: list[str] = []
    if scope.memory_on:
        try:
            store = memory.open_store()
            try:
                hits = store.search(query, k, exclude_project=str(scope.root))
            finally:
                store.close()
        except MemoryUnavailable as exc:
            lines.append(f"The user's memory cannot be searched: {exc}")
            hits = []
        lines.append(f"From earlier projects (the user's memory): {len(hits) or 'nothing'}")
        for n, hit in enumerate(hits, start=1):
            e = hit.entry
            lines.append(f"{n}. [{e.kind}] {e.origin()}: {one_line(e.text, _HIT_CHARS)}")
    else:
        lines.append("The user's memory is off for this stage or run; this project only.")
    local = project_hits(scope.root, query, k)
    lines.append(f"From this project: {len(local) or 'nothing'}")
    lines += [f"{n}. {where}: {excerpt}" for n, (where, excerpt) in enumerate(local, start=1)]
    return "\n".join(lines)


def project_hits(root: Path, query: str, k: int) -> list[tuple[str, str]]:
    """`(where, excerpt)` of the project's record that match `query` best."""
    docs = list(_project_docs(Beneath(root)))
    if not docs:
        return []
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(place, body, tokenize='porter unicode61')")
        db.executemany("INSERT INTO docs (place, body) VALUES (?, ?)", docs)
        match = " OR ".join(f'"{w}"' for w in terms(query))
        rows = db.execute(
            "SELECT place, snippet(docs, 1, '«', '»', '…', 40) FROM docs "
            "WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
            (f"body : ({match})", k),
        ).fetchall()
    finally:
        db.close()
    return [(str(place), one_line(str(text), _HIT_CHARS)) for place, text in rows]


def _project_docs(files: Beneath) -> list[tuple[str, str]]:
    """PROCESS.md's entries, one document each, then the output files they list."""
    try:
        process = files.read_text("PROCESS.md", errors="replace")
    except OSError:  # missing, or refused (a link a command left): nothing of it
        return []
    docs: list[tuple[str, str]] = []
    outputs: dict[str, None] = {}
    for entry in _ENTRY.split(process)[1:]:
        title = entry.splitlines()[0].strip() if entry.strip() else "?"
        docs.append((f"PROCESS.md, {title}", entry))
        for listed in _OUTPUTS.findall(entry):
            for path in re.findall(r"`([^`]+)`", listed):
                outputs.setdefault(path, None)
    for path in outputs:
        try:
            data = files.read_bytes(path, limit=FILE_CHARS)
        except (OSError, ValueError):
            continue
        if b"\0" in data[:4096]:
            continue  # not text
        docs.append((path, data.decode("utf-8", "replace")))
    return docs
