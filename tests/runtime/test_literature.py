"""The literature tools against local servers speaking each API's real response format.

Each source is a real HTTP server on 127.0.0.1 (tests/support/literature_servers.py); the
tools are the ones a worker is bound with, so what is asserted is what a worker reads.
"""

from __future__ import annotations

import gc
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import SMALL_TABLE
from support.chat_server import tool_call
from support.literature_servers import ENV, LiteratureServer, Work, crossref_item
from support.runtime import finish, plain_spec

from lightscientist_jupyter.app import literature
from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.literature import Literature
from lightscientist_jupyter.literature.bibtex import parse_bibtex
from lightscientist_jupyter.runtime.literature_tools import literature_tools

GOYAL = Work(
    "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour",
    ["Priya Goyal", "Piotr Dollár", "Kaiming He"],
    2017,
    doi="10.48550/arXiv.1706.02677",
    arxiv="1706.02677",
    abstract="Deep learning thrives with large neural networks and large datasets.",
    citations=3100,
    openalex="W2622263826",
    s2="0" * 40,
)
RADAM = Work(
    "On the Variance of the Adaptive Learning Rate and Beyond",
    ["Liyuan Liu", "Jiawei Han"],
    2020,
    venue="International Conference on Learning Representations",
    doi="10.5555/radam.2020",
    arxiv="1908.03265",
    citations=1800,
    openalex="W2970971581",
    s2="1" * 40,
)


@pytest.fixture
def servers(monkeypatch):
    started = {kind: LiteratureServer(kind, [GOYAL, RADAM]) for kind in ENV}
    for kind, server in started.items():
        monkeypatch.setenv(ENV[kind], server.url)
    monkeypatch.setenv("LIGHTSCIENTIST_LITERATURE_PACE", "0")
    monkeypatch.delenv("S2_API_KEY", raising=False)
    monkeypatch.delenv("LIGHTSCIENTIST_LIBRARY", raising=False)
    yield started
    for server in started.values():
        server.close()


def tools_of(root: Path, stage: str = "t1") -> dict:
    return {t.name: t for t in literature_tools(root, stage)}


def search(tools: dict, **args) -> dict:
    return json.loads(tools["search_literature"].invoke(args))


def test_sources_are_merged_and_a_question_is_asked_once(servers, tmp_path):
    tools = tools_of(tmp_path)
    found = search(tools, query="large minibatch training", sources=["openalex", "arxiv"])
    assert [r["title"] for r in found["results"]] == [GOYAL.title]
    record = found["results"][0]
    assert record["sources"] == ["openalex", "arxiv"]
    assert record["doi"] == "10.48550/arxiv.1706.02677" and record["arxiv"] == "1706.02677"
    assert record["citations"] == 3100 and record["year"] == 2017
    assert record["abstract"].startswith("Deep learning thrives")
    assert servers["arxiv"].requests[0]["query"]["search_query"] == "all:large minibatch training"
    # the same question again, and from a new process (a resumed run): no source is asked
    search(tools, query="large  minibatch training", sources=["openalex", "arxiv"])
    search(
        tools_of(tmp_path, "t2"), query="large minibatch training", sources=["openalex", "arxiv"]
    )
    assert (len(servers["openalex"].requests), len(servers["arxiv"].requests)) == (1, 1)
    lines = (tmp_path / ".lightscientist" / "literature" / "records.jsonl").read_text()
    assert [json.loads(line)["source"] for line in lines.splitlines()] == ["openalex", "arxiv"]


def test_a_429_is_retried_and_then_answers(servers, tmp_path):
    servers["openalex"].fail = [429]
    found = search(tools_of(tmp_path), query="adaptive variance", sources=["openalex"])
    assert [r["title"] for r in found["results"]] == [RADAM.title]
    assert "unavailable" not in found
    assert len(servers["openalex"].requests) == 2


def test_a_failing_source_opens_its_breaker_and_the_others_answer(servers, tmp_path):
    servers["s2"].fail = [500] * 99
    tools = tools_of(tmp_path)
    for query in ("adaptive variance", "variance adaptive rate"):
        found = search(tools, query=query, sources=["s2", "crossref"])
        assert [r["title"] for r in found["results"]] == [RADAM.title]
        assert found["unavailable"] == ["s2 failed after 4 tries: HTTP 500"]
    asked = len(servers["s2"].requests)
    assert asked == 8
    found = search(tools, query="learning rate", sources=["s2", "crossref"])
    assert found["unavailable"] == [
        "s2 is not asked again in this stage: its last 2 requests failed (circuit breaker open)"
    ]
    assert len(servers["s2"].requests) == asked and found["results"]
    # a new stage asks the source again
    servers["s2"].fail = []
    found = search(tools_of(tmp_path, "t2"), query="learning rate", sources=["s2"])
    assert found["results"][0]["title"] == RADAM.title and "unavailable" not in found


def test_a_malformed_body_is_named_and_the_others_still_answer(servers, tmp_path):
    servers["crossref"].malformed = True
    servers["arxiv"].malformed = True
    found = search(tools_of(tmp_path), query="adaptive variance",
                   sources=["crossref", "arxiv", "openalex"])  # fmt: skip
    assert found["unavailable"][0].startswith("crossref answered a malformed body (not JSON")
    assert found["unavailable"][1].startswith("arxiv answered a malformed body (not Atom XML")
    assert [r["title"] for r in found["results"]] == [RADAM.title]


def test_an_empty_result_says_so(servers, tmp_path):
    found = search(tools_of(tmp_path), query="zebra migration", sources=["openalex", "s2"])
    assert found == {"results": [], "note": "no record matched; try other words or other sources"}


def test_a_bad_request_is_one_line_the_worker_can_act_on(servers, tmp_path):
    tools = tools_of(tmp_path)
    assert tools["search_literature"].invoke({"query": "x", "sources": ["scholar"]}) == (
        "Error: unknown source(s) scholar; choose from library, openalex, arxiv, s2, crossref"
    )
    assert (
        tools["cite"]
        .invoke({"id": "10.9999/nothing"})
        .startswith("Error: no source knows '10.9999/nothing'")
    )


def test_cite_writes_the_entry_with_its_doi_once(servers, tmp_path):
    tools = tools_of(tmp_path)
    paper = json.loads(tools["get_paper"].invoke({"id": "https://doi.org/10.5555/radam.2020"}))
    assert paper["title"] == RADAM.title and paper["sources"] == ["openalex"]
    cited = json.loads(tools["cite"].invoke({"id": "10.5555/radam.2020"}))
    assert cited == {"key": "liu2020variance", "cite_as": "[@liu2020variance]",
                     "file": "paper/references.bib", "added": True}  # fmt: skip
    again = json.loads(tools["cite"].invoke({"id": "arXiv:1908.03265"}))
    assert again["key"] == "liu2020variance" and again["added"] is False
    bib = (tmp_path / "paper" / "references.bib").read_text()
    assert bib.count("@") == 1 and "doi = {10.5555/radam.2020}" in bib
    assert (
        "author = {Liyuan Liu and Jiawei Han}" in bib and "lsrecord = {10.5555/radam.2020}" in bib
    )
    assert len(servers["openalex"].requests) == 1  # the second cite came from the cache


def test_the_semantic_scholar_key_goes_only_into_its_header(servers, tmp_path, monkeypatch):
    monkeypatch.setenv("S2_API_KEY", "s2-secret-key-123")
    tools = tools_of(tmp_path)
    text = tools["search_literature"].invoke({"query": "adaptive variance", "sources": ["s2"]})
    assert servers["s2"].requests[0]["headers"]["x-api-key"] == "s2-secret-key-123"
    servers["s2"].fail = [403]
    failed = tools["search_literature"].invoke({"query": "minibatch", "sources": ["s2"]})
    assert "s2 answered HTTP 403" in failed
    stored = "".join(p.read_text() for p in (tmp_path / ".lightscientist").rglob("*.jsonl"))
    assert all("s2-secret-key-123" not in t for t in (text, failed, stored))


SEARCH_AND_CITE = (
    tool_call("search_literature", query="adaptive variance", sources=["openalex", "arxiv"]),
    tool_call("cite", id="10.5555/radam.2020"),
    tool_call(
        "complete_stage",
        summary="Found and cited RAdam.",
        outputs=["paper/references.bib"],
        next_stage="custom.next",
    ),  # fmt: skip
)


def test_a_real_client_worker_searches_and_cites(
    servers, chat_server, chat_model, make_runtime, ws
):
    chat_server.play(*SEARCH_AND_CITE)
    runtime = make_runtime(chat_model, retries=0)
    record = finish(runtime, runtime.start(plain_spec("Survey warmup; cite what you use.")))
    assert record["status"] == "completed", record
    offered = {t["function"]["name"] for t in chat_server.requests[0]["tools"]}
    assert {"search_literature", "get_paper", "cite"} <= offered
    found = json.loads(chat_server.requests[1]["messages"][-1]["content"])
    assert found["results"][0]["title"] == RADAM.title
    assert found["results"][0]["sources"] == ["openalex", "arxiv"]
    cited = json.loads(chat_server.requests[2]["messages"][-1]["content"])
    assert cited["cite_as"] == "[@liu2020variance]"
    bib = (ws.root / "paper" / "references.bib").read_text()
    assert "@inproceedings{liu2020variance," in bib and "doi = {10.5555/radam.2020}" in bib
    asked = (len(servers["openalex"].requests), len(servers["arxiv"].requests))
    assert asked == (1, 1)

    # a resumed run (a new runtime on the same workspace) asks no source again
    runtime.close()
    chat_server.play(*SEARCH_AND_CITE)
    again = make_runtime(chat_model, retries=0)
    record = finish(again, again.start(plain_spec("Survey warmup again.")))
    assert record["status"] == "completed", record
    assert (len(servers["openalex"].requests), len(servers["arxiv"].requests)) == asked
    assert bib == (ws.root / "paper" / "references.bib").read_text()


# ----------------------------------------------------------------------------- bounds and shapes


def answer_within(seconds: float, call) -> tuple[Any, float]:
    """`call()`'s result and how long it took; fails if it is not back within `seconds` (its
    thread is left to the server's closing)."""
    box: list[Any] = []
    began = time.monotonic()
    thread = threading.Thread(target=lambda: box.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert box, f"no answer within {seconds} s"
    return box[0], time.monotonic() - began


DEADLINE_NOTE = (
    "openalex did not answer within 3 s, the literature deadline ([literature] deadline or "
    "LIGHTSCIENTIST_LITERATURE_DEADLINE)"
)


def test_a_server_that_trickles_a_byte_every_two_seconds_is_given_up_at_the_deadline(
    servers, tmp_path, monkeypatch
):
    monkeypatch.setenv("LIGHTSCIENTIST_LITERATURE_DEADLINE", "3")
    servers["openalex"].trickle = 2.0
    tools = tools_of(tmp_path)
    found, took = answer_within(
        8, lambda: search(tools, query="adaptive variance", sources=["openalex", "crossref"])
    )
    assert 3 <= took < 4
    assert found["unavailable"] == [DEADLINE_NOTE]
    assert [r["title"] for r in found["results"]] == [RADAM.title]  # crossref still answered
    assert len(servers["openalex"].requests) == 1  # no retry past the deadline


def test_the_table_sets_the_deadline_of_a_workspace(servers, tmp_path, write_table):
    table = load_table(
        write_table(tmp_path / "t", SMALL_TABLE + "\n[literature]\ndeadline = 1.5\n")
    )
    literature.configure(tmp_path / "ws", table)
    servers["openalex"].trickle = 2.0
    found, took = answer_within(
        6, lambda: search(tools_of(tmp_path / "ws"), query="adaptive", sources=["openalex"])
    )
    assert found["unavailable"] == [DEADLINE_NOTE.replace("within 3 s", "within 1.5 s")]
    assert 1.5 <= took < 2.5


def peak_rss_mb(during) -> float:
    """The process's peak resident memory while `during()` runs, in MB above what it held
    before (Linux: /proc/self/clear_refs resets the peak, VmHWM)."""

    def status(key: str) -> float:
        text = Path("/proc/self/status").read_text()
        return int(re.search(rf"^{key}:\s+(\d+) kB", text, re.M).group(1)) / 1024  # type: ignore[union-attr]

    gc.collect()
    before = status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from now
    during()
    return status("VmHWM") - before


def test_a_cited_title_with_latex_special_characters_is_escaped_for_bibtex(tmp_path):
    library = tmp_path / "library.bib"
    library.write_text(
        "@article{x,\n  title = {Warmup \\& Restarts: 100\\% of \\#1 in C_2},\n"
        "  author = {Doe, Jane},\n  journal = {J. Opt_Lett},\n  year = {2020}\n}\n",
        encoding="utf-8",
    )
    root = tmp_path / "ws"
    root.mkdir()
    hub = Literature(root, library)
    hub.cite(hub.search("warmup restarts", sources=["library"])["results"][0]["id"])
    bib = (root / "paper" / "references.bib").read_text(encoding="utf-8")
    assert "title = {Warmup \\& Restarts: 100\\% of \\#1 in C\\_2}" in bib
    assert "journal = {J. Opt\\_Lett}" in bib
    ((_, fields),) = parse_bibtex(bib)  # read back as the text it was
    assert fields["title"] == "Warmup & Restarts: 100% of #1 in C_2"


@pytest.mark.parametrize("declare", [False, True], ids=["streamed", "length declared"])
def test_a_300_mb_answer_is_refused_as_it_streams_in_and_never_held(servers, tmp_path, declare):
    servers["s2"].stream, servers["s2"].declare = 300_000_000, declare
    tools = tools_of(tmp_path)
    box: list[dict] = []
    rise = peak_rss_mb(
        lambda: box.append(search(tools, query="adaptive", sources=["s2", "crossref"]))
    )
    found = box[0]
    assert found["unavailable"] == [
        "s2 answered more than 16 MB, the literature size cap ([literature] max_bytes or "
        "LIGHTSCIENTIST_LITERATURE_MAX_BYTES); the rest was not read"
    ]
    assert [r["title"] for r in found["results"]] == [RADAM.title]
    assert rise < 80, f"the process grew by {rise:.0f} MB while refusing the answer"


def test_the_table_sets_the_size_cap(servers, tmp_path, write_table):
    table = load_table(
        write_table(tmp_path / "t", SMALL_TABLE + "\n[literature]\nmax_bytes = 2048\n")
    )
    literature.configure(tmp_path / "ws", table)
    servers["openalex"].stream = 10_000
    found = search(tools_of(tmp_path / "ws"), query="adaptive", sources=["openalex"])
    assert found["unavailable"] == [
        "openalex answered more than 2,048 bytes, the literature size cap ([literature] "
        "max_bytes or LIGHTSCIENTIST_LITERATURE_MAX_BYTES); the rest was not read"
    ]


WRONG_SHAPES = {
    "openalex": (
        {"results": [{"title": "A paper", "authorships": "Liu and Han"}]},
        "'results' item 1's 'authorships' is text, not a list",
    ),
    "crossref": (
        {"message": {"items": [{"title": "A paper", "DOI": "10.5555/a"}]}},
        "'items' item 1's 'title' is text, not a list",
    ),
    "s2": (
        {"data": [{"title": "A paper", "year": "2020", "authors": [{"name": "Liu"}]}]},
        "'data' item 1's 'year' is text, not a whole number",
    ),
    "arxiv": (
        '<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>urn:uuid:7</id>'
        "<title>A paper</title></entry></feed>",
        "entry 1's <id> is not an arXiv abstract URL",
    ),
}


@pytest.mark.parametrize("source", list(WRONG_SHAPES))
def test_a_wrong_shaped_answer_is_an_error_naming_the_source_and_the_field(
    servers, tmp_path, source
):
    body, what = WRONG_SHAPES[source]
    servers[source].body = (body if isinstance(body, str) else json.dumps(body)).encode()
    found = search(tools_of(tmp_path), query="a paper", sources=[source])
    assert found["unavailable"] == [f"{source} answered a malformed body ({what})"]
    assert found["results"] == []
    assert not (tmp_path / ".lightscientist" / "literature" / "records.jsonl").exists()


def test_a_wrong_shaped_work_is_refused_by_get_paper_too(servers, tmp_path):
    item = crossref_item(RADAM) | {"author": [{"given": "Liyuan", "family": ["Liu"]}]}
    servers["crossref"].body = json.dumps({"status": "ok", "message": item}).encode()
    for kind in ("openalex", "arxiv", "s2"):
        servers[kind].fail = [404] * 9
    text = tools_of(tmp_path)["get_paper"].invoke({"id": "10.5555/radam.2020"})
    assert text.startswith("Error: no source knows '10.5555/radam.2020'")
    assert (
        "crossref answered a malformed body (the work's 'author' item 1's 'family' is a list, "
        "not text)" in text
    )
