"""The literature cache, `.lightscientist/literature/`: every record a tool returned.

`queries.jsonl` has one line per question asked of a source (the source, the question, the
ids of the records it answered, the time); `records.jsonl` one line per record returned (the
record, its source, the retrieval time). Both are append-only. A question already in the
cache is answered from it, so a resumed or replayed run asks no source twice, and every
citation can be traced to the record it came from.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import NO_LINKS, append_text, read_text
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature.records import Paper, merge


def question_key(source: str, kind: str, args: dict[str, Any]) -> str:
    return json.dumps([source, kind, args], sort_keys=True)


class Cache:
    def __init__(self, folder: Path):
        self.folder = folder
        self._lock = threading.Lock()
        self._answers: dict[str, list[str]] = {}
        self._records: dict[str, dict[str, Any]] = {}
        """`source|record id` -> the line of its last retrieval (record, source, retrieved_at)."""
        self._seen: tuple[int, int] = (-1, -1)

    def _load(self) -> None:
        """Read the files again when they grew (another worker of the stage wrote them)."""
        seen = (_size(self.folder / "records.jsonl"), _size(self.folder / "queries.jsonl"))
        if seen == self._seen:
            return
        self._seen = seen
        self._answers, self._records = {}, {}
        for line in _lines(self.folder / "records.jsonl"):
            if isinstance(line.get("record"), dict):
                self._records[f"{line.get('source')}|{line['record'].get('id')}"] = line
        for line in _lines(self.folder / "queries.jsonl"):
            if isinstance(line.get("key"), str) and isinstance(line.get("ids"), list):
                self._answers[line["key"]] = [str(i) for i in line["ids"]]

    def answer(self, key: str) -> list[Paper] | None:
        """The records a question already asked was answered with, or None."""
        with self._lock:
            self._load()
            ids = self._answers.get(key)
            if ids is None:
                return None
            source = json.loads(key)[0]
            lines = [self._records.get(f"{source}|{i}") for i in ids]
            return [Paper.from_dict(line["record"]) for line in lines if line]

    def store(self, key: str, source: str, papers: list[Paper]) -> None:
        """Keep a source's answer to a question (and each record it returned)."""
        now = time.time()
        with self._lock:
            self._load()
            lines = []
            for paper in papers:
                line = {"record": paper.to_dict(), "source": source, "retrieved_at": now}
                lines.append(json.dumps(line) + "\n")
                self._records[f"{source}|{paper.id}"] = line
            if lines:
                append_text(self.folder / "records.jsonl", "".join(lines))
            self._seen = (_size(self.folder / "records.jsonl"), self._seen[1])
            ids = [p.id for p in papers]
            append_text(
                self.folder / "queries.jsonl",
                json.dumps({"key": key, "source": source, "ids": ids, "at": now}) + "\n",
            )
            self._answers[key] = ids
            self._seen = (self._seen[0], _size(self.folder / "queries.jsonl"))

    def find(self, ident: str) -> tuple[Paper, dict[str, Any]] | None:
        """The cached record `ident` names (every cached record of that work merged, in
        retrieval order), with the cache line of its first retrieval (source, time)."""
        with self._lock:
            self._load()
            lines = [
                line
                for line in self._records.values()
                if Paper.from_dict(line["record"]).matches(ident) or line["record"]["id"] == ident
            ]
        if not lines:
            return None
        papers = [Paper.from_dict(line["record"]) for line in lines]
        return merge(papers)[0], lines[0]

    def find_paper(self, paper: Paper) -> tuple[Paper, dict[str, Any]] | None:
        """A cached record of the same work as `paper`."""
        keys = paper.keys()
        with self._lock:
            self._load()
            for line in reversed(list(self._records.values())):
                cached = Paper.from_dict(line["record"])
                if cached.keys() & keys:
                    return cached, line
        return None


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = read_text(path)
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return []
    except PathRefused as exc:  # a link where the cache should be: a line for the worker
        raise LiteratureError(f"the literature cache cannot be read: {exc}") from None
    out = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue  # a line cut by a crash: the rest of the cache still counts
        if isinstance(line, dict):
            out.append(line)
    return out


def _size(path: Path) -> int:
    try:
        st = NO_LINKS.lstat(path)
    except OSError:
        return -1
    return -1 if st is None else st.st_size
