"""What the literature tools do: search, get a paper, cite — through the cache.

`Literature` is one per workspace and process. Its fetchers (rate limit, retries, breaker)
are kept per stage task, so a source whose breaker opened is not asked again in that stage
and a new stage asks it afresh. Every answer a source gives is cached before it is returned.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.errors import LiteratureError
from lightscientist_jupyter.literature import config as settings
from lightscientist_jupyter.literature.arxiv import Arxiv
from lightscientist_jupyter.literature.bibtex import parse_bibtex
from lightscientist_jupyter.literature.cache import Cache, question_key
from lightscientist_jupyter.literature.crossref import Crossref
from lightscientist_jupyter.literature.http import Fetcher, SourceError
from lightscientist_jupyter.literature.library import Library
from lightscientist_jupyter.literature.openalex import OpenAlex
from lightscientist_jupyter.literature.records import Paper, bibtex_entry, cite_key, merge
from lightscientist_jupyter.literature.semantic_scholar import SemanticScholar
from lightscientist_jupyter.literature.sources import Source

MAX_LIMIT = 25
ADAPTERS: dict[str, Source] = {
    s.name: s for s in (OpenAlex(), Arxiv(), SemanticScholar(), Crossref())
}


def pace() -> float:
    """`LIGHTSCIENTIST_LITERATURE_PACE` scales every wait (1 by default; 0 in tests)."""
    try:
        return max(0.0, float(os.environ.get("LIGHTSCIENTIST_LITERATURE_PACE", "1")))
    except ValueError:
        return 1.0


class Literature:
    def __init__(self, root: Path, fallback_library: Path | None = None):
        self.root = root
        self.config = settings.LiteratureConfig.load(root, fallback_library)
        self.cache = Cache(settings.folder(root))
        self._library: Library | None = None
        self._cite_lock = threading.Lock()

    @property
    def library(self) -> Library | None:
        if self._library is None and self.config.library:
            self._library = Library(list(self.config.library), self.root)
        return self._library

    def fetcher(self, stage: str, source: str) -> Fetcher:
        key = (str(self.root), stage, source)
        with _FETCHERS_LOCK:
            if key not in _FETCHERS:
                _FETCHERS[key] = ADAPTERS[source].fetcher(pace(), self.config.bounds)
            return _FETCHERS[key]

    # ------------------------------------------------------------------ search

    def search(
        self,
        query: str,
        limit: int = 10,
        year_from: int | None = None,
        year_to: int | None = None,
        sources: list[str] | None = None,
        *,
        stage: str = "",
    ) -> dict[str, Any]:
        """Merged records of every source asked, and a note per source that failed."""
        if not query.strip():
            raise LiteratureError("search_literature needs a non-empty query")
        limit = max(1, min(MAX_LIMIT, int(limit)))
        wanted = list(sources or self.config.sources())
        known = ("library", *ADAPTERS)
        unknown = [s for s in wanted if s not in known]
        if unknown:
            raise LiteratureError(
                f"unknown source(s) {', '.join(unknown)}; choose from {', '.join(known)}"
            )
        found: list[Paper] = []
        notes: list[str] = []
        args = {"query": " ".join(query.split()), "limit": limit, "from": year_from, "to": year_to}
        for source in wanted:
            try:
                found += self._ask(source, "search", args, stage)
            except (SourceError, LiteratureError) as exc:
                notes.append(str(exc))
        records = merge(found)[:limit]
        result: dict[str, Any] = {"results": [p.short() for p in records]}
        if notes:
            result["unavailable"] = notes
        if not records:
            result["note"] = "no record matched; try other words or other sources"
        return result

    def _ask(self, source: str, kind: str, args: dict[str, Any], stage: str) -> list[Paper]:
        key = question_key(source, kind, args)
        cached = self.cache.answer(key)
        if cached is not None:
            return cached
        if source == "library":
            if self.library is None:
                raise LiteratureError("library: no local library is configured")
            if kind == "search":
                papers = self.library.search(args["query"], args["limit"], args["from"], args["to"])
            else:
                papers = [p for p in [self.library.get(args["id"])] if p]
        else:
            adapter, fetch = ADAPTERS[source], self.fetcher(stage, source)
            if kind == "search":
                papers = adapter.search(
                    fetch, args["query"], args["limit"], args["from"], args["to"]
                )
            else:
                papers = [p for p in [adapter.get(fetch, args["id"])] if p]
        self.cache.store(key, source, papers)
        return papers

    # ------------------------------------------------------------------ one paper

    def get_paper(self, ident: str, *, stage: str = "") -> Paper:
        """The record `ident` names: from the cache, the library, then the sources."""
        ident = ident.strip()
        if not ident:
            raise LiteratureError("get_paper needs an id (a DOI, an arXiv id, an OpenAlex id)")
        hit = self.cache.find(ident)
        if hit is not None:
            return hit[0]
        found: list[Paper] = []
        notes = []
        order = ["library"] if self.config.library else []
        for source in [*order, *ADAPTERS]:
            try:
                found += self._ask(source, "get", {"id": ident}, stage)
            except (SourceError, LiteratureError) as exc:
                notes.append(str(exc))
            if found:
                break
        if not found:
            why = f" ({'; '.join(notes)})" if notes else ""
            raise LiteratureError(f"no source knows '{ident}'{why}")
        return merge(found)[0]

    def cite(self, ident: str, *, stage: str = "") -> tuple[str, bool]:
        """Add the record to the references file; `(key, added)` (False: it was there). The
        file is read and replaced through no link (workers write it too): a link there is a
        LiteratureError naming it."""
        paper = self.get_paper(ident, stage=stage)
        with self._cite_lock:
            try:
                return self._add_reference(paper)
            except PathRefused as exc:
                raise LiteratureError(f"cannot cite into {exc}") from None

    def _add_reference(self, paper: Paper) -> tuple[str, bool]:
        files, path = Beneath(self.root), self.references_path
        try:
            text = files.read_text(path)
        except FileNotFoundError:
            text = ""
        entries = parse_bibtex(text, str(path))
        for key, fields in entries:
            same = Paper(
                fields.get("title", ""), doi=fields.get("doi", ""), arxiv=fields.get("eprint", "")
            )
            if same.keys() & paper.keys():
                return key, False
        key = cite_key(paper, [k for k, _ in entries])
        glue = (
            "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        )
        files.write_text_atomic(path, text + glue + bibtex_entry(paper, key))
        return key, True

    @property
    def references_path(self) -> Path:
        return self.root / self.config.references


_FETCHERS: dict[tuple[str, str, str], Fetcher] = {}
"""(workspace, stage task, source) -> its fetcher: the breaker holds for the whole stage, across
its workers' sessions."""
_FETCHERS_LOCK = threading.Lock()
