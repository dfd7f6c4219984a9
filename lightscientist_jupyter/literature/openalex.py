"""OpenAlex (api.openalex.org): the works endpoint, JSON. Base URL: LIGHTSCIENTIST_OPENALEX_URL."""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.literature.http import Bounds, Fetcher, NotFound
from lightscientist_jupyter.literature.records import Paper, clean_doi, id_keys
from lightscientist_jupyter.literature.shapes import TEXT, WHOLE
from lightscientist_jupyter.literature.sources import (
    base_url,
    checked,
    contact,
    json_body,
    malformed,
)

WORK = {
    "id": TEXT,
    "doi": TEXT,
    "title": TEXT,
    "display_name": TEXT,
    "publication_year": WHOLE,
    "ids": {"doi": TEXT, "arxiv": TEXT},
    "authorships": [{"author": {"display_name": TEXT}}],
    "primary_location": {"landing_page_url": TEXT, "source": {"display_name": TEXT}},
    "cited_by_count": WHOLE,
    "abstract_inverted_index": {},
}
"""The fields of a work a record is made from (`shapes`)."""


class OpenAlex:
    name = "openalex"

    def fetcher(self, pace: float, bounds: Bounds) -> Fetcher:
        return Fetcher(self.name, interval=0.2 * pace, backoff=pace, bounds=bounds)

    def _params(self, extra: dict[str, Any]) -> dict[str, Any]:
        mail = contact()
        return {**extra, **({"mailto": mail} if mail else {})}

    def search(
        self, fetch: Fetcher, query: str, limit: int, year_from: int | None, year_to: int | None
    ) -> list[Paper]:
        params: dict[str, Any] = {"search": query, "per-page": limit}
        years = []
        if year_from:
            years.append(f"from_publication_date:{year_from}-01-01")
        if year_to:
            years.append(f"to_publication_date:{year_to}-12-31")
        if years:
            params["filter"] = ",".join(years)
        url = base_url("LIGHTSCIENTIST_OPENALEX_URL", "https://api.openalex.org") + "/works"
        data = json_body(self.name, fetch.get(url, self._params(params)))
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise malformed(self.name, "no 'results' list")
        checked(self.name, results, [WORK], "'results'")
        return [work(r) for r in results if r and r.get("title")]

    def get(self, fetch: Fetcher, ident: str) -> Paper | None:
        keys = id_keys(ident)
        doi = next((k[4:] for k in keys if k.startswith("doi:")), "")
        oa = next((k[9:] for k in keys if k.startswith("openalex:")), "")
        if not (doi or oa):
            return None
        path = oa.upper() if oa else f"doi:{doi}"
        url = base_url("LIGHTSCIENTIST_OPENALEX_URL", "https://api.openalex.org") + "/works/"
        try:
            data = json_body(self.name, fetch.get(url + path, self._params({})))
        except NotFound:
            return None
        if not isinstance(data, dict) or not data.get("title"):
            raise malformed(self.name, "no work object")
        checked(self.name, data, WORK, "the work")
        return work(data)


def work(item: dict[str, Any]) -> Paper:
    """A record from one OpenAlex work object."""
    location = item.get("primary_location") or {}
    venue = (location.get("source") or {}).get("display_name") or ""
    ids = item.get("ids") or {}
    return Paper(
        title=str(item.get("title") or item.get("display_name") or ""),
        authors=[
            str((a.get("author") or {}).get("display_name") or "")
            for a in item.get("authorships") or []
            if a
        ],
        year=item.get("publication_year"),
        venue=str(venue),
        doi=clean_doi(item.get("doi") or ids.get("doi")),
        arxiv=str(ids.get("arxiv") or ""),
        openalex=str(item.get("id") or "").rsplit("/", 1)[-1],
        abstract=abstract_text(item.get("abstract_inverted_index")),
        citations=item.get("cited_by_count"),
        url=str(location.get("landing_page_url") or item.get("id") or ""),
        source="openalex",
    )


def abstract_text(index: Any) -> str:
    """OpenAlex's abstract, rebuilt from its inverted index (word -> positions)."""
    if not isinstance(index, dict):
        return ""
    words: dict[int, str] = {}
    for word, positions in index.items():
        for p in positions if isinstance(positions, list) else []:
            if isinstance(p, int):
                words[p] = str(word)
    return " ".join(words[p] for p in sorted(words))
