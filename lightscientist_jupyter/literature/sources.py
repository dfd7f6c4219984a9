"""The common shape of a literature source, and helpers its adapters share."""

from __future__ import annotations

import json
import os
from typing import Any, Protocol

from lightscientist_jupyter.literature import shapes
from lightscientist_jupyter.literature.http import Bounds, Fetcher, SourceError
from lightscientist_jupyter.literature.records import Paper


class Source(Protocol):
    """One adapter: `search` and `get` over a `Fetcher` made for it (`fetcher`)."""

    name: str

    def fetcher(self, pace: float, bounds: Bounds) -> Fetcher: ...

    def search(
        self, fetch: Fetcher, query: str, limit: int, year_from: int | None, year_to: int | None
    ) -> list[Paper]: ...

    def get(self, fetch: Fetcher, ident: str) -> Paper | None: ...


def base_url(variable: str, default: str) -> str:
    """The source's base URL: the environment variable when set (a mirror, a test server)."""
    return (os.environ.get(variable) or default).rstrip("/")


def contact() -> str:
    """The contact address sent to OpenAlex and Crossref when set (`LIGHTSCIENTIST_MAILTO`)."""
    return os.environ.get("LIGHTSCIENTIST_MAILTO", "").strip()


def json_body(name: str, body: bytes) -> Any:
    """The JSON of an answer, or a `SourceError` saying the answer was malformed."""
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{name} answered a malformed body (not JSON: {exc})") from None


def in_years(paper: Paper, year_from: int | None, year_to: int | None) -> bool:
    if paper.year is None:
        return year_from is None and year_to is None
    return (year_from is None or paper.year >= year_from) and (
        year_to is None or paper.year <= year_to
    )


def malformed(name: str, what: str) -> SourceError:
    return SourceError(f"{name} answered a malformed body ({what})")


def checked(name: str, value: Any, shape: shapes.Shape, where: str) -> None:
    """Raise `malformed` naming the first field of `value` that does not fit `shape`."""
    found = shapes.problem(value, shape, where)
    if found:
        raise malformed(name, found)
