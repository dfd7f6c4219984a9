"""Memory across projects, end to end: two offline projects in two folders under one user.

The first files its findings and, at its end, the lessons its lessons worker drew; the
second's tasks recall them (`memory.recall` with hits from the first, a lesson of the first in
a worker's task), its survey worker calls `recall`; the command line lists, searches and
forgets entries. The same runs against a real PostgreSQL server when the memory is a
`postgresql://` URL. The projects run as a user runs them: `lightscientist research --mode
auto --wait` in its own process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.slow import whole_project

GOAL = "Does learning-rate warmup help a small MLP train?"

pytestmark = pytest.mark.slow


def cli(*args: str, cwd: Path, memory: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": ""}
    if memory is not None:
        env["LIGHTSCIENTIST_MEMORY"] = str(memory)
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=cwd,
    )


def research(ws: Path, memory: Path | None = None) -> None:
    args = ("research", GOAL, "--workspace", str(ws), "--mode", "auto", "--wait")
    done = cli(*args, cwd=ws.parent, memory=memory)
    assert done.returncode == 0 and done.stdout.strip().endswith("done"), done.stderr[-3000:]


def events(ws: Path) -> list[dict[str, Any]]:
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def listed(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    out = cli("memory", *args, "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
@whole_project
def first_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A first project run once for the file, into a SQLite memory of its own: (its
    workspace, that memory). A test starts from a copy of the memory (`remember_first`)."""
    base = tmp_path_factory.mktemp("first")
    memory = base / "memory" / "memory.sqlite3"
    memory.parent.mkdir()
    research(base / "first", memory)
    return base / "first", memory


def remember_first(first_project: tuple[Path, Path], own_memory: Path) -> Path:
    """The first project's memory copied into the test's own (its SQLite files, -wal and
    -shm too if the run left any); returns the first project's workspace."""
    first, memory = first_project
    for path in memory.parent.glob(memory.name + "*"):
        shutil.copy2(path, own_memory.parent / path.name.replace(memory.name, own_memory.name))
    return first


def two_projects_share_what_the_first_learned(tmp_path: Path, first: Path | None = None) -> None:
    """`first`: a project already run into the test's memory; else one is run here."""
    second = tmp_path / "second"
    if first is None:
        first = tmp_path / "first"
        research(first)
    lessons = [e for e in listed(tmp_path) if e["kind"] == "lesson"]
    assert lessons and {e["project"] for e in lessons} == {str(first)}
    assert any("Reviewers of a learning-rate warmup paper sent" in e["text"] for e in lessons)
    findings = [e for e in listed(tmp_path) if e["kind"] == "finding"]
    assert {e["stage"] for e in findings} >= {"idea.survey", "experiment.loop", "paper.review"}
    assert all(e["snapshot"] for e in findings)
    assert any(e["kind"] == "paper" for e in listed(tmp_path))

    research(second)
    log = events(second)
    recalls = [e for e in log if e["type"] == "memory.recall" and e["data"]["for"] == "task"]
    assert recalls and all(h["project"] == str(first) for e in recalls for h in e["data"]["hits"])
    assert any(h["kind"] == "lesson" for e in recalls for h in e["data"]["hits"])
    tasks = [
        p.read_text(encoding="utf-8")
        for p in (second / ".lightscientist" / "workers").glob("*/task.md")
    ]
    lesson = lessons[0]["text"].split("\n")[0][:80]
    assert any("## Recalled from memory" in t and lesson in " ".join(t.split()) for t in tasks)
    recall = next(
        e for e in log if e["type"] == "tool.result" and e["data"].get("tool") == "recall"
    )
    assert recall["stage"] == "idea.survey"
    assert "From earlier projects (the user's memory): 3" in recall["data"]["result"]
    survey = (second / "PROCESS.md").read_text(encoding="utf-8")
    assert "of earlier projects on warmup from the user's memory (recall)" in survey

    found = listed(tmp_path, "search", "warmup")
    assert found and all("warmup" in e["text"].lower() for e in found)
    gone = found[0]["id"]
    forgot = cli("memory", "forget", str(gone), cwd=tmp_path)
    assert forgot.returncode == 0, forgot.stderr
    assert gone not in {e["id"] for e in listed(tmp_path)}
    again = cli("memory", "forget", str(gone), cwd=tmp_path)
    assert again.returncode == 1 and str(gone) in again.stderr


def test_two_offline_projects_share_what_the_first_learned(tmp_path, first_project, own_memory):
    first = remember_first(first_project, own_memory)
    two_projects_share_what_the_first_learned(tmp_path, first)


def test_the_same_with_a_team_memory_on_postgresql(tmp_path, pg_url, monkeypatch):
    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", pg_url)
    two_projects_share_what_the_first_learned(tmp_path)


def test_no_memory_runs_neither_recall_nor_file(tmp_path, first_project, own_memory):
    remember_first(first_project, own_memory)
    before = listed(tmp_path)
    assert before  # what the first project filed
    ws = tmp_path / "second"
    done = cli(
        "research",
        GOAL,
        "--workspace",
        str(ws),
        "--mode",
        "auto",
        "--wait",
        "--no-memory",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert listed(tmp_path) == before
    kinds = {e["type"] for e in events(ws)}
    assert not kinds & {"memory.recall", "memory.filed"}
    assert "lessons" not in {e.get("stage") for e in events(ws)}
