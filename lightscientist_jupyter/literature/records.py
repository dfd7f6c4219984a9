"""Short paper records, merged across sources, and the BibTeX entry a citation writes.

A `Paper` is what every source's adapter returns: bibliographic facts, ids, an abstract cut
to `ABSTRACT_CHARS`, a citation count and a URL, with the source it came from. `merge` folds
records that are the same work (same DOI, same arXiv id, or the same normalised title) into
one, keeping the first record's fields and filling its gaps from the others.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

ABSTRACT_CHARS = 600
"""Abstracts are cut to this many characters (a tool result stays short)."""

_ARXIV = re.compile(
    r"(?:arxiv[:/]\s*|abs/)?(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?", re.I
)
_DOI = re.compile(r"(10\.\d{4,9}/\S+)", re.I)


def clean_doi(text: str | None) -> str:
    """A DOI without `https://doi.org/` or `doi:`, lower-cased; '' when there is none."""
    match = _DOI.search(text or "")
    return match.group(1).rstrip(".,;").lower() if match else ""


def clean_arxiv(text: str | None) -> str:
    """An arXiv id without a version (`1706.02677`); '' when there is none."""
    match = _ARXIV.search(text or "")
    return match.group(1) if match else ""


def normalise_title(title: str) -> str:
    """Lower-case letters and digits only, single spaces: how titles are compared."""
    text = unicodedata.normalize("NFKD", title)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    return " ".join(re.findall(r"[a-z0-9]+", text))


@dataclasses.dataclass
class Paper:
    """One work as a source described it."""

    title: str
    authors: list[str] = dataclasses.field(default_factory=list)
    year: int | None = None
    venue: str = ""
    doi: str = ""
    arxiv: str = ""
    openalex: str = ""
    s2: str = ""
    abstract: str = ""
    citations: int | None = None
    url: str = ""
    source: str = ""
    """Where the record came from: openalex, arxiv, s2, crossref or library."""
    sources: list[str] = dataclasses.field(default_factory=list)
    """Every source that returned this work (after `merge`)."""

    def __post_init__(self) -> None:
        self.doi = clean_doi(self.doi)
        self.arxiv = clean_arxiv(self.arxiv)
        self.title = " ".join(self.title.split())
        if len(self.abstract) > ABSTRACT_CHARS:
            self.abstract = self.abstract[: ABSTRACT_CHARS - 1].rstrip() + "…"
        if not self.sources and self.source:
            self.sources = [self.source]

    @property
    def id(self) -> str:
        """The id a worker passes to `get_paper` and `cite`: DOI, else arXiv, else a source's."""
        if self.doi:
            return self.doi
        if self.arxiv:
            return f"arXiv:{self.arxiv}"
        if self.openalex:
            return self.openalex
        if self.s2:
            return f"S2:{self.s2}"
        return f"title:{normalise_title(self.title)}"

    def keys(self) -> set[str]:
        """What identifies the work: `doi:…`, `arxiv:…`, `title:…` (for deduplication)."""
        found = {f"title:{normalise_title(self.title)}"} if self.title else set()
        if self.doi:
            found.add(f"doi:{self.doi}")
        if self.arxiv:
            found.add(f"arxiv:{self.arxiv}")
        if self.openalex:
            found.add(f"openalex:{self.openalex.lower()}")
        if self.s2:
            found.add(f"s2:{self.s2.lower()}")
        return found

    def matches(self, ident: str) -> bool:
        """Whether `ident` (a DOI, an arXiv id, an OpenAlex or Semantic Scholar id) names it."""
        return bool(id_keys(ident) & self.keys())

    def fill(self, other: Paper) -> None:
        """Take from `other` every field this record lacks."""
        for field in dataclasses.fields(self):
            if field.name in ("source", "sources"):
                continue
            if not getattr(self, field.name) and getattr(other, field.name):
                setattr(self, field.name, getattr(other, field.name))
        for source in other.sources:
            if source not in self.sources:
                self.sources.append(source)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, **dataclasses.asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Paper:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def short(self) -> dict[str, Any]:
        """What a tool result shows of it."""
        authors = self.authors[:5] + (["et al."] if len(self.authors) > 5 else [])
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "authors": authors,
            "year": self.year,
            "venue": self.venue,
            "doi": self.doi or None,
            "arxiv": self.arxiv or None,
            "citations": self.citations,
            "url": self.url,
            "sources": self.sources,
        }
        if self.abstract:
            out["abstract"] = self.abstract
        return {k: v for k, v in out.items() if v not in (None, "", [])}


def id_keys(ident: str) -> set[str]:
    """The dedupe keys an id a worker typed can stand for."""
    ident = ident.strip()
    low = ident.lower()
    keys = set()
    if clean_doi(ident) and not low.startswith("arxiv"):
        keys.add(f"doi:{clean_doi(ident)}")
        if "10.48550/arxiv." in low:  # arXiv's own DOIs
            keys.add(f"arxiv:{clean_arxiv(low.split('arxiv.', 1)[1])}")
    elif clean_arxiv(ident) and (low.startswith("arxiv") or re.fullmatch(r"[\d.v]+", low)):
        keys.add(f"arxiv:{clean_arxiv(ident)}")
    if low.startswith("title:"):
        keys.add(f"title:{normalise_title(ident[6:])}")
    if low.startswith("s2:"):
        keys.add(f"s2:{low[3:]}")
    if re.fullmatch(r"(https://openalex\.org/)?w\d+", low):
        keys.add(f"openalex:{low.rsplit('/', 1)[-1]}")
    if re.fullmatch(r"[0-9a-f]{40}", low):
        keys.add(f"s2:{low}")
    return keys


def merge(records: Iterable[Paper]) -> list[Paper]:
    """One record per work, in the order works first appear (see the module's docstring)."""
    merged: list[Paper] = []
    index: dict[str, Paper] = {}
    for record in records:
        record = dataclasses.replace(record, sources=list(record.sources))
        same = next((index[k] for k in record.keys() if k in index), None)
        if same is None:
            merged.append(record)
            same = record
        else:
            same.fill(record)
        for key in same.keys():
            index[key] = same
    return merged


def cite_key(paper: Paper, taken: Iterable[str] = ()) -> str:
    """`surname` + `year` + first long title word (`goyal2017accurate`), unique among `taken`."""
    first = paper.authors[0] if paper.authors else "anon"
    surname = first.split(",")[0] if "," in first else (first.split() or ["anon"])[-1]
    words = [w for w in normalise_title(paper.title).split() if len(w) > 3] or ["work"]
    base = normalise_title(surname).replace(" ", "") + str(paper.year or "") + words[0]
    base = base or "ref"
    taken = set(taken)
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
    return key


_TEXT_FIELDS = frozenset({"title", "author", "journal", "booktitle"})
"""The fields LaTeX typesets as text, where its special characters are escaped (an `&` in a
title would stop pdflatex); identifiers and addresses stay as they are."""


def _braced(name: str, text: str) -> str:
    text = text.replace("{", "(").replace("}", ")")
    if name in _TEXT_FIELDS:
        text = re.sub(r"(?<!\\)([&%#_$])", r"\\\1", text)
    return "{" + text + "}"


def bibtex_entry(paper: Paper, key: str) -> str:
    """The BibTeX entry `cite` writes: facts only (no abstract), with the record's id."""
    kind = "article" if paper.venue and not paper.arxiv else "misc"
    if paper.venue and re.search(
        r"conference|proceedings|neurips|icml|iclr|aaai", paper.venue, re.I
    ):
        kind = "inproceedings"
    fields = [("title", paper.title), ("author", " and ".join(paper.authors))]
    if paper.year:
        fields.append(("year", str(paper.year)))
    if paper.venue:
        fields.append(("booktitle" if kind == "inproceedings" else "journal", paper.venue))
    if paper.doi:
        fields.append(("doi", paper.doi))
    if paper.arxiv:
        fields += [("eprint", paper.arxiv), ("archiveprefix", "arXiv")]
    if paper.url:
        fields.append(("url", paper.url))
    fields.append(("lsrecord", paper.id))
    body = ",\n".join(f"  {name} = {_braced(name, value)}" for name, value in fields if value)
    return f"@{kind}{{{key},\n{body}\n}}\n"
