"""Local stand-ins for the literature APIs, answering in each one's real response format.

`LiteratureServer` is a small HTTP server (127.0.0.1, a random port, its own thread) that
serves OpenAlex's works JSON (`/works`, `/works/<id>`), arXiv's Atom feed (`/query`), Semantic
Scholar's Graph JSON (`/graph/v1/paper/search`, `/graph/v1/paper/<id>`) and Crossref's JSON
(`/works`, `/works/<doi>` under `/crossref`), from a list of `Work`s. Each request is counted
and kept (path, query, headers); `fail` scripts statuses to answer first (`[429]` is one 429
then success, `[500] * 99` keeps failing) and `malformed` makes every answer a broken body.

Hostile answers, for the bounds and the shape checks: `body` replaces every answer with fixed
bytes (a wrong-shaped one); `trickle` sends an answer one byte every that many seconds (until
the server closes); `stream` sends that many bytes of filler instead, made as they are sent
(the server never holds them), with its length declared or not (`declare`).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from xml.sax.saxutils import escape


@dataclasses.dataclass
class Work:
    title: str
    authors: list[str]
    year: int
    venue: str = ""
    doi: str = ""
    arxiv: str = ""
    abstract: str = ""
    citations: int = 0
    openalex: str = "W1"
    s2: str = "a" * 40

    def matches(self, query: str) -> bool:
        words = [w for w in query.lower().replace("all:", "").split() if len(w) > 2]
        title = "".join(c if c.isalnum() else " " for c in self.title.lower()).split()
        return any(w in title for w in words)


def openalex_work(w: Work) -> dict[str, Any]:
    words = w.abstract.split()
    index: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        index.setdefault(word, []).append(i)
    return {
        "id": f"https://openalex.org/{w.openalex}",
        "doi": f"https://doi.org/{w.doi}" if w.doi else None,
        "title": w.title,
        "display_name": w.title,
        "publication_year": w.year,
        "ids": {
            "openalex": f"https://openalex.org/{w.openalex}",
            **({"doi": f"https://doi.org/{w.doi}"} if w.doi else {}),
        },  # fmt: skip
        "authorships": [
            {"author_position": "first", "author": {"display_name": a}} for a in w.authors
        ],  # fmt: skip
        "primary_location": {
            "landing_page_url": f"https://doi.org/{w.doi}",
            "source": {"display_name": w.venue},
        },  # fmt: skip
        "cited_by_count": w.citations,
        "abstract_inverted_index": index or None,
    }


def atom_feed(works: list[Work]) -> str:
    entries = "".join(
        f"""<entry><id>http://arxiv.org/abs/{w.arxiv}v1</id>
<published>{w.year}-06-08T17:00:00Z</published><title>{escape(w.title)}</title>
<summary>{escape(w.abstract)}</summary>
{"".join(f"<author><name>{escape(a)}</name></author>" for a in w.authors)}
{f"<arxiv:doi>{w.doi}</arxiv:doi>" if w.doi else ""}
<link href="http://arxiv.org/abs/{w.arxiv}v1" rel="alternate" type="text/html"/></entry>"""
        for w in works
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom"><title>arXiv Query</title>'
        f"<opensearch:totalResults>{len(works)}</opensearch:totalResults>{entries}</feed>"
    )


def s2_paper(w: Work) -> dict[str, Any]:
    return {
        "paperId": w.s2,
        "title": w.title,
        "authors": [{"authorId": str(i), "name": a} for i, a in enumerate(w.authors)],
        "year": w.year,
        "venue": w.venue,
        "externalIds": {k: v for k, v in (("DOI", w.doi), ("ArXiv", w.arxiv)) if v},
        "abstract": w.abstract or None,
        "citationCount": w.citations,
        "url": f"https://www.semanticscholar.org/paper/{w.s2}",
    }


def crossref_item(w: Work) -> dict[str, Any]:
    return {
        "DOI": w.doi,
        "title": [w.title],
        "author": [
            {"given": a.rsplit(" ", 1)[0], "family": a.rsplit(" ", 1)[-1], "sequence": "first"}
            for a in w.authors
        ],  # fmt: skip
        "container-title": [w.venue] if w.venue else [],
        "issued": {"date-parts": [[w.year, 6, 8]]},
        "is-referenced-by-count": w.citations,
        "URL": f"https://doi.org/{w.doi}",
        "type": "proceedings-article",
    }


class LiteratureServer:
    """One API's stand-in (`kind`: openalex, arxiv, s2 or crossref); see the module docstring."""

    def __init__(self, kind: str, works: list[Work]):
        self.kind = kind
        self.works = works
        self.fail: list[int] = []
        self.malformed = False
        self.body: bytes | None = None
        self.trickle = 0.0
        self.stream = 0
        self.declare = False
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                server._answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self._closed.set()  # a trickle or a stream still being sent stops
        self.httpd.shutdown()
        self.httpd.server_close()

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        parsed = urllib.parse.urlparse(h.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(parsed.query).items()}
        with self._lock:
            self.requests.append(
                {
                    "path": parsed.path,
                    "query": query,
                    "headers": {k.lower(): v for k, v in h.headers.items()},
                }
            )
            status = self.fail.pop(0) if self.fail else 200
        if status != 200:
            body, kind = b'{"error": "scripted failure"}', "application/json"
            h.send_response(status)
            if status == 429:
                h.send_header("Retry-After", "0")
        elif self.stream:
            self._send_stream(h)
            return
        else:
            text, kind = self._body(parsed.path, query)
            body = b'{"results": [' if self.malformed else text.encode("utf-8")
            body = self.body if self.body is not None else body
            h.send_response(200 if text or self.body is not None else 404)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if not self.trickle:
            h.wfile.write(body)
            return
        try:
            for i in range(len(body)):
                if self._closed.wait(self.trickle):
                    return
                h.wfile.write(body[i : i + 1])
                h.wfile.flush()
        except OSError:  # the client gave up and hung up
            pass

    def _send_stream(self, h: BaseHTTPRequestHandler) -> None:
        """`stream` bytes of JSON whitespace, a chunk at a time, until sent, refused or
        closed (HTTP/1.0: without a declared length the body ends when the server closes)."""
        h.send_response(200)
        h.send_header("Content-Type", JSON)
        if self.declare:
            h.send_header("Content-Length", str(self.stream))
        h.end_headers()
        chunk, sent = b" " * 65536, 0
        try:
            while sent < self.stream and not self._closed.is_set():
                h.wfile.write(chunk[: self.stream - sent])
                sent += len(chunk)
        except OSError:  # the client refused the rest and hung up
            pass

    def _body(self, path: str, q: dict[str, str]) -> tuple[str, str]:
        found = [w for w in self.works if w.matches(q.get("search") or q.get("query") or
                                                     q.get("search_query") or "")]  # fmt: skip
        # the id after /works/ or /paper/ (a DOI has a slash of its own)
        last = urllib.parse.unquote(path.split("/works/", 1)[-1].split("/paper/", 1)[-1])
        if self.kind == "arxiv":
            if q.get("id_list"):
                found = [w for w in self.works if w.arxiv == q["id_list"]]
            return atom_feed(found), "application/atom+xml"
        if self.kind == "openalex":
            if path == "/works":
                works = [openalex_work(w) for w in found]
                return json.dumps({"meta": {"count": len(found)}, "results": works}), JSON
            one = [w for w in self.works if last in (w.openalex, f"doi:{w.doi}")]
            return (json.dumps(openalex_work(one[0])) if one else ""), JSON
        if self.kind == "s2":
            if path.endswith("/search"):
                papers = [s2_paper(w) for w in found]
                return json.dumps({"total": len(found), "offset": 0, "data": papers}), JSON
            one = [w for w in self.works if last in (w.s2, f"DOI:{w.doi}", f"ARXIV:{w.arxiv}")]
            return (json.dumps(s2_paper(one[0])) if one else ""), JSON
        if path == "/works":
            items = {"total-results": len(found), "items": [crossref_item(w) for w in found]}
            return json.dumps({"status": "ok", "message-type": "work-list", "message": items}), JSON
        one = [w for w in self.works if w.doi and path.endswith(w.doi)]
        body = {"status": "ok", "message": crossref_item(one[0])} if one else None
        return (json.dumps(body) if body else ""), JSON


JSON = "application/json"
ENV = {
    "openalex": "LIGHTSCIENTIST_OPENALEX_URL",
    "arxiv": "LIGHTSCIENTIST_ARXIV_URL",
    "s2": "LIGHTSCIENTIST_S2_URL",
    "crossref": "LIGHTSCIENTIST_CROSSREF_URL",
}
