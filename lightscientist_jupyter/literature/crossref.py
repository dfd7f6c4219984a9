"""Crossref's REST API (api.crossref.org/works): JSON. Base URL: LIGHTSCIENTIST_CROSSREF_URL."""

from __future__ import annotations

import re
from typing import Any

from lightscientist_jupyter.literature.http import Bounds, Fetcher, NotFound
from lightscientist_jupyter.literature.records import Paper, id_keys
from lightscientist_jupyter.literature.shapes import TEXT, WHOLE
from lightscientist_jupyter.literature.sources import (
    base_url,
    checked,
    contact,
    json_body,
    malformed,
)

ITEM = {
    "DOI": TEXT,
    "title": [TEXT],
    "author": [{"given": TEXT, "family": TEXT}],
    "container-title": [TEXT],
    "issued": {"date-parts": [[WHOLE]]},
    "abstract": TEXT,
    "is-referenced-by-count": WHOLE,
    "URL": TEXT,
}
"""The fields of a work a record is made from (`shapes`)."""


class Crossref:
    name = "crossref"

    def fetcher(self, pace: float, bounds: Bounds) -> Fetcher:
        return Fetcher(self.name, interval=0.5 * pace, backoff=pace, bounds=bounds)

    def _get(self, fetch: Fetcher, path: str, params: dict[str, Any]) -> Any:
        mail = contact()
        url = base_url("LIGHTSCIENTIST_CROSSREF_URL", "https://api.crossref.org") + path
        data = json_body(
            self.name, fetch.get(url, {**params, **({"mailto": mail} if mail else {})})
        )
        if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
            raise malformed(self.name, "no 'message' object")
        return data["message"]

    def search(
        self, fetch: Fetcher, query: str, limit: int, year_from: int | None, year_to: int | None
    ) -> list[Paper]:
        params: dict[str, Any] = {"query": query, "rows": limit}
        years = [f"from-pub-date:{year_from}"] if year_from else []
        years += [f"until-pub-date:{year_to}"] if year_to else []
        if years:
            params["filter"] = ",".join(years)
        items = self._get(fetch, "/works", params).get("items")
        if not isinstance(items, list):
            raise malformed(self.name, "no 'items' list")
        checked(self.name, items, [ITEM], "'items'")
        return [work(i) for i in items if i and i.get("title")]

    def get(self, fetch: Fetcher, ident: str) -> Paper | None:
        doi = next((k[4:] for k in id_keys(ident) if k.startswith("doi:")), "")
        if not doi:
            return None
        try:
            item = self._get(fetch, f"/works/{doi}", {})
        except NotFound:
            return None
        if not item.get("title"):
            raise malformed(self.name, "no work object")
        checked(self.name, item, ITEM, "the work")
        return work(item)


def work(item: dict[str, Any]) -> Paper:
    """A record from one Crossref work (of the shape `ITEM`)."""
    parts = ((item.get("issued") or {}).get("date-parts") or [[None]])[0] or [None]
    titles = item.get("title") or [""]
    venues = item.get("container-title") or [""]
    return Paper(
        title=str(titles[0] or ""),
        authors=[
            " ".join(p for p in (a.get("given"), a.get("family")) if p)
            for a in item.get("author") or []
            if a
        ],
        year=parts[0],
        venue=str(venues[0] or ""),
        doi=str(item.get("DOI") or ""),
        abstract=re.sub(r"<[^>]+>", "", str(item.get("abstract") or "")).strip(),
        citations=item.get("is-referenced-by-count"),
        url=str(item.get("URL") or ""),
        source="crossref",
    )
