"""The literature tools against local servers speaking each API's real response format.

Each source is a real HTTP server on 127.0.0.1 (tests/support/literature_servers.py); the
tools are the ones a worker is bound with, so what is asserted is what a worker reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.chat_server import tool_call
from support.literature_servers import ENV, LiteratureServer, Work
from support.runtime import finish, plain_spec

from lightscientist_jupyter.runtime.literature import literature_tools

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
