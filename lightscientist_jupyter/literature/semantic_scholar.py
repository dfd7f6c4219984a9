"""Semantic Scholar's Graph API: JSON. Base URL: LIGHTSCIENTIST_S2_URL; key: S2_API_KEY.

The key goes only into the request's `x-api-key` header, never into a record or an error."""

from __future__ import annotations

import os
from typing import Any

from lightscientist_jupyter.literature.http import Bounds, Fetcher, NotFound
from lightscientist_jupyter.literature.records import Paper, id_keys
from lightscientist_jupyter.literature.shapes import TEXT, WHOLE
from lightscientist_jupyter.literature.sources import base_url, checked, json_body, malformed

FIELDS = "title,authors,year,venue,externalIds,abstract,citationCount,url"
PAPER = {
    "paperId": TEXT,
    "title": TEXT,
    "authors": [{"name": TEXT}],
    "year": WHOLE,
    "venue": TEXT,
    "externalIds": {"DOI": TEXT, "ArXiv": TEXT},
    "abstract": TEXT,
    "citationCount": WHOLE,
    "url": TEXT,
}
"""The fields of a paper a record is made from (`shapes`)."""


class SemanticScholar:
    name = "s2"

    def fetcher(self, pace: float, bounds: Bounds) -> Fetcher:
        key = os.environ.get("S2_API_KEY", "").strip()
        # without a key the shared pool allows about one request a second
        return Fetcher(
            self.name,
            interval=(1.0 if key else 1.5) * pace,
            backoff=pace,
            headers={"x-api-key": key} if key else None,
            bounds=bounds,
        )

    def _url(self) -> str:
        return base_url("LIGHTSCIENTIST_S2_URL", "https://api.semanticscholar.org") + "/graph/v1"

    def search(
        self, fetch: Fetcher, query: str, limit: int, year_from: int | None, year_to: int | None
    ) -> list[Paper]:
        params: dict[str, Any] = {"query": query, "limit": limit, "fields": FIELDS}
        if year_from or year_to:
            params["year"] = f"{year_from or ''}-{year_to or ''}"
        data = json_body(self.name, fetch.get(self._url() + "/paper/search", params))
        items = data.get("data", []) if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise malformed(self.name, "no 'data' list")
        checked(self.name, items, [PAPER], "'data'")
        return [paper(i) for i in items if i and i.get("title")]

    def get(self, fetch: Fetcher, ident: str) -> Paper | None:
        keys = id_keys(ident)
        path = next(
            (
                f"{kind.upper()}:{k.split(':', 1)[1]}" if kind != "s2" else k[3:]
                for k in sorted(keys)
                for kind in [k.split(":", 1)[0]]
                if kind in ("doi", "arxiv", "s2")
            ),
            "",
        )
        if not path:
            return None
        try:
            data = json_body(
                self.name, fetch.get(f"{self._url()}/paper/{path}", {"fields": FIELDS})
            )
        except NotFound:
            return None
        if not isinstance(data, dict) or not data.get("title"):
            raise malformed(self.name, "no paper object")
        checked(self.name, data, PAPER, "the paper")
        return paper(data)


def paper(item: dict[str, Any]) -> Paper:
    """A record from one Semantic Scholar paper (of the shape `PAPER`)."""
    ids = item.get("externalIds") or {}
    return Paper(
        title=str(item.get("title") or ""),
        authors=[str(a.get("name") or "") for a in item.get("authors") or [] if a],
        year=item.get("year"),
        venue=str(item.get("venue") or ""),
        doi=str(ids.get("DOI") or ""),
        arxiv=str(ids.get("ArXiv") or ""),
        s2=str(item.get("paperId") or ""),
        abstract=str(item.get("abstract") or ""),
        citations=item.get("citationCount"),
        url=str(item.get("url") or ""),
        source="s2",
    )
