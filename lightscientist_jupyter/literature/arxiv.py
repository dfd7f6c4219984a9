"""arXiv's API (export.arxiv.org/api/query): Atom XML. Base URL: LIGHTSCIENTIST_ARXIV_URL.

arXiv asks clients to wait three seconds between requests; the fetcher does. Every entry of
an answer must have an arXiv abstract URL as its `<id>` and a `<title>` (else the answer is
refused as malformed), except arXiv's own error entry, which holds no record."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from lightscientist_jupyter.literature.http import Bounds, Fetcher
from lightscientist_jupyter.literature.records import Paper, clean_arxiv, id_keys
from lightscientist_jupyter.literature.sources import base_url, in_years, malformed

_NS = {"a": "http://www.w3.org/2005/Atom", "x": "http://arxiv.org/schemas/atom"}


class Arxiv:
    name = "arxiv"

    def fetcher(self, pace: float, bounds: Bounds) -> Fetcher:
        return Fetcher(self.name, interval=3.0 * pace, backoff=pace, bounds=bounds)

    def _query(self, fetch: Fetcher, params: dict[str, str | int]) -> list[Paper]:
        url = base_url("LIGHTSCIENTIST_ARXIV_URL", "https://export.arxiv.org/api") + "/query"
        body = fetch.get(url, params)
        try:
            root = ET.fromstring(body)
        except ET.ParseError as exc:
            raise malformed(self.name, f"not Atom XML: {exc}") from None
        if root.tag != f"{{{_NS['a']}}}feed":
            raise malformed(self.name, "not an Atom feed")
        papers = []
        for n, element in enumerate(root.findall("a:entry", _NS), 1):
            paper = entry(element)
            if paper.title.lower() == "error" and not paper.arxiv:
                continue  # arXiv's own answer to a query it cannot run: no record
            if not paper.arxiv:
                raise malformed(self.name, f"entry {n}'s <id> is not an arXiv abstract URL")
            if not paper.title:
                raise malformed(self.name, f"entry {n} has no <title>")
            papers.append(paper)
        return papers

    def search(
        self, fetch: Fetcher, query: str, limit: int, year_from: int | None, year_to: int | None
    ) -> list[Paper]:
        found = self._query(
            fetch, {"search_query": f"all:{query}", "start": 0, "max_results": limit}
        )
        return [p for p in found if in_years(p, year_from, year_to)]

    def get(self, fetch: Fetcher, ident: str) -> Paper | None:
        arxiv = next((k[6:] for k in id_keys(ident) if k.startswith("arxiv:")), "")
        if not arxiv:
            return None
        found = self._query(fetch, {"id_list": arxiv, "max_results": 1})
        return found[0] if found else None


def entry(e: ET.Element) -> Paper:
    """A record from one Atom entry."""

    def text(path: str) -> str:
        node = e.find(path, _NS)
        return " ".join((node.text or "").split()) if node is not None else ""

    published = text("a:published")
    return Paper(
        title=text("a:title"),
        authors=[" ".join((n.text or "").split()) for n in e.findall("a:author/a:name", _NS)],
        year=int(published[:4]) if published[:4].isdigit() else None,
        venue=text("x:journal_ref"),
        doi=text("x:doi"),
        arxiv=clean_arxiv(text("a:id")),
        abstract=text("a:summary"),
        url=text("a:id"),
        source="arxiv",
    )
