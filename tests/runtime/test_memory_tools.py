"""The workers' `recall` tool: other projects' entries from the user's memory, and this
project's record beyond the digest (every PROCESS.md entry, the outputs they list), each with
where it came from; a link planted at an output is not followed; memory off leaves the
project's own record."""

from __future__ import annotations

import os
from pathlib import Path

from lightscientist_jupyter import memory
from lightscientist_jupyter.memory import NewEntry
from lightscientist_jupyter.runtime.memory_tools import RecallScope, memory_tools, recall_text

PROCESS = """# Research process

**Goal:** Does warmup help?

## idea.survey · 2026-12-01 10:00:00 UTC
<!-- entry: idea.survey#1 -->
Surveyed cosine schedules and plateau detection.

Outputs: `idea/survey.md`

## experiment.loop · 2026-12-01 11:00:00 UTC
<!-- entry: experiment.loop#1 -->
Ran 18 runs; 6 diverged at lr 0.5 without warmup.

Outputs: `experiment/log.md`, `secret.md`
"""


def project(root: Path) -> Path:
    (root / "idea").mkdir(parents=True)
    (root / "experiment").mkdir()
    (root / "PROCESS.md").write_text(PROCESS, encoding="utf-8")
    (root / "idea" / "survey.md").write_text("Cosine annealing needs no warmup here.\n")
    (root / "experiment" / "log.md").write_text("run 7: divergence at step 12 (lr 0.5)\n")
    return root


def scope(root: Path, *, memory_on: bool = True) -> RecallScope:
    return RecallScope(root, memory_on)


def file(text: str, project: str) -> None:
    store = memory.open_store()
    try:
        store.add(NewEntry("lesson", text, project, f"k{hash(text)}"))
    finally:
        store.close()


def test_recall_finds_other_projects_entries_and_this_projects_record(tmp_path):
    root = project(tmp_path / "here")
    file("Warmup removed the divergence at lr 0.5 for a small MLP.", str(tmp_path / "earlier"))
    file("Divergence at lr 0.5 in this project (already in its PROCESS.md).", str(root))
    text = recall_text(scope(root), "divergence lr 0.5", 3)
    lines = text.splitlines()
    assert lines[0] == "From earlier projects (the user's memory): 1"
    assert lines[1] == (
        "1. [lesson] earlier, controller: Warmup removed the divergence at lr 0.5 for a small MLP."
    )
    assert lines[2] == "From this project: 2"
    places = [line.split(":", 1)[0] for line in lines[3:]]
    assert places == ["1. experiment/log.md", "2. PROCESS.md, experiment.loop · 2026-12-01 11"]
    assert "«divergence»" in lines[3]


def test_an_old_entry_beyond_the_digest_is_found(tmp_path):
    root = project(tmp_path / "here")
    text = recall_text(scope(root), "cosine plateau", 2)
    assert "1. PROCESS.md, idea.survey" in text or "1. idea/survey.md" in text
    assert "2. " in text


def test_a_link_planted_at_an_output_is_not_followed(tmp_path):
    root = project(tmp_path / "here")
    outside = tmp_path / "outside.md"
    outside.write_text("divergence secret from outside the project\n", encoding="utf-8")
    os.symlink(outside, root / "secret.md")
    text = recall_text(scope(root), "secret outside divergence", 5)
    assert "secret from outside" not in text


def test_memory_off_searches_this_project_only(tmp_path):
    root = project(tmp_path / "here")
    file("Warmup removed the divergence at lr 0.5.", str(tmp_path / "earlier"))
    text = recall_text(scope(root, memory_on=False), "divergence", 3)
    assert (
        text.splitlines()[0] == "The user's memory is off for this stage or run; this project only."
    )
    assert "Warmup removed" not in text and "experiment/log.md" in text


def test_a_query_without_words_is_refused_in_a_line(tmp_path):
    root = project(tmp_path / "here")
    assert recall_text(scope(root), "a of ?!", 3).startswith("Error: the query has no word")


def test_the_tool_caps_k_and_reads_its_scope_at_each_call(tmp_path):
    root = project(tmp_path / "here")
    (tool,) = memory_tools(lambda: scope(root))
    assert tool.name == "recall"
    out = tool.invoke({"query": "divergence", "k": 500})
    assert "From this project: 2" in out
