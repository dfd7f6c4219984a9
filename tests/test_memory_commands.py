"""The user's memory from the command line (a real subprocess) and the Python API: what is
listed, found, filed, forgotten and exported, the exit codes, and the one line a store that
cannot be opened is. Each test has a memory of its own (`own_memory`)."""

from __future__ import annotations

import json
import time

import pytest
from test_cli import cli, stdout_lines

from lightscientist_jupyter import api
from lightscientist_jupyter.app import memory as memories
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.errors import BadInput, MemoryUnavailable
from lightscientist_jupyter.memory import NewEntry, open_store
from lightscientist_jupyter.vocab import MemoryKind
from lightscientist_jupyter.workspace import Workspace

LONG = (
    "Warmup over the first 500 steps kept the small MLP from diverging at lr 0.1; without "
    "it two of three seeds blew up."
)


def when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


@pytest.fixture
def filed(tmp_path) -> list[int]:
    """What layer 1 files: a finding and a lesson of a project `warmup-study`, older first."""
    project = str(tmp_path / "warmup-study")
    with open_store() as store:
        finding = store.add(
            NewEntry(
                MemoryKind.FINDING,
                "experiment.loop: final_loss 0.41 with warmup against 0.97 without",
                project,
                "finding:experiment.loop#2",
                stage="experiment.loop",
                visit=2,
                at=1_700_000_000.0,
            )
        )
        lesson = store.add(
            NewEntry(MemoryKind.LESSON, LONG, project, "lesson:done#1", stage="done", visit=1)
        )
    assert finding is not None and lesson is not None
    return [finding.id, lesson.id]


def test_an_empty_memory_says_so_and_how_to_fill_it(tmp_path, own_memory):
    listed = cli("memory", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == (
        f"the memory {own_memory} is empty (`lightscientist memory add TEXT` files a lesson)\n"
    )
    assert json.loads(cli("memory", "--json", cwd=tmp_path).stdout) == []
    assert cli("memory", "export", cwd=tmp_path).stdout == ""


def test_the_list_is_the_newest_first_its_text_shortened(tmp_path, filed):
    records = json.loads(cli("memory", "--json", cwd=tmp_path).stdout)
    lesson_at, finding_at = (r["at"] for r in records)
    listed = cli("memory", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert stdout_lines(listed) == [
        "id  kind     project       stage              when              text",
        f" 2  lesson   warmup-study  done#1             {when(lesson_at)}  "
        "Warmup over the first 500 steps kept the small MLP from div…",
        f" 1  finding  warmup-study  experiment.loop#2  {when(finding_at)}  "
        "experiment.loop: final_loss 0.41 with warmup against 0.97 w…",
    ]
    assert [(r["id"], r["kind"], r["text"]) for r in records] == [
        (2, "lesson", LONG),  # the JSON keeps the whole text
        (1, "finding", "experiment.loop: final_loss 0.41 with warmup against 0.97 without"),
    ]
    assert records[0]["project"] == str(tmp_path / "warmup-study")


def test_search_ranks_the_matches_and_keeps_a_kind(tmp_path, filed):
    found = cli("memory", "search", "warmup", "diverging", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    lines = stdout_lines(found)
    assert lines[0].split() == ["id", "kind", "project", "stage", "when", "text"]
    assert [line.split()[:2] for line in lines[1:]] == [["2", "lesson"], ["1", "finding"]]
    best = cli("memory", "search", "warmup diverging", "-k", "1", "--json", cwd=tmp_path)
    one = json.loads(best.stdout)
    assert [(r["id"], type(r["score"])) for r in one] == [(2, float)]
    findings = cli("memory", "--json", "search", "warmup", "--kind", "finding", cwd=tmp_path)
    assert [r["id"] for r in json.loads(findings.stdout)] == [1]
    nothing = cli("memory", "search", "transformer", cwd=tmp_path)
    assert nothing.returncode == 0
    assert nothing.stdout.startswith("no entry of the memory ")
    assert nothing.stdout.endswith(" matches 'transformer'\n")


def test_add_files_a_lesson_with_the_project_it_was_filed_from(tmp_path, workspace, small_table):
    ResearchController.create(workspace, "find x", mode="manual", table=small_table)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = cli("memory", "add", "Seeds", "matter", "more", "than", "width", cwd=elsewhere)
    assert outside.returncode == 0, outside.stderr
    assert outside.stdout.startswith("filed lesson 1 in the memory ")
    assert outside.stdout.endswith(" (no project)\n")
    inside = cli("remember", "Check the data split first", cwd=workspace.root)
    assert inside.stdout.endswith(" (project ws)\n"), inside.stdout
    named = cli(
        "memory", "add", "paper X reports 0.4", "--kind", "finding", "-w", "ws", cwd=tmp_path
    )
    assert named.stdout.startswith("filed finding 3 ") and named.stdout.endswith("(project ws)\n")

    records = [json.loads(line) for line in stdout_lines(cli("memory", "export", cwd=tmp_path))]
    assert [(r["id"], r["kind"], r["text"], r["project"], r["source"]) for r in records] == [
        (3, "finding", "paper X reports 0.4", str(workspace.root), "researcher"),
        (2, "lesson", "Check the data split first", str(workspace.root), "researcher"),
        (1, "lesson", "Seeds matter more than width", "", "researcher"),
    ]
    assert all(r["key"].startswith("researcher:") for r in records)
    assert len({r["key"] for r in records}) == 3


def test_forget_removes_an_entry_and_names_one_that_is_not_there(tmp_path, filed, own_memory):
    gone = cli("memory", "forget", "1", cwd=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout == (
        "forgot finding 1: experiment.loop: final_loss 0.41 with warmup against 0.97 w…\n"
    )
    again = cli("memory", "forget", "1", cwd=tmp_path)
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr == (
        f"lightscientist memory: the memory {own_memory} holds no entry 1 "
        "(`lightscientist memory` lists the entries and their ids)\n"
    )
    assert [r["id"] for r in json.loads(cli("memory", "--json", cwd=tmp_path).stdout)] == [2]
    assert "experiment.loop" not in own_memory.read_bytes().decode("latin-1")


def test_a_memory_that_cannot_be_opened_is_one_line_and_exit_1(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", str(blocker / "memory.sqlite3"))
    for args in (("memory",), ("memory", "search", "warmup"), ("remember", "x")):
        result = cli(*args, cwd=tmp_path)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith(f"lightscientist {args[0]}: memory {blocker / 'memory.sqlite3'}: ")
        assert line.endswith("set $LIGHTSCIENTIST_MEMORY to another one (or a postgresql:// URL)")


@pytest.mark.parametrize(
    "args, error",
    [
        (("memory", "forget", "seven"), "argument ID: invalid int value: 'seven'"),
        (("memory", "add"), "the following arguments are required: TEXT"),
        (("memory", "add", "x", "--kind", "hunch"), "argument --kind: invalid choice: 'hunch'"),
        (("memory", "search", "x", "-k", "0"), "-k must be 1 or more, not 0"),
        (("remember", "  "), "there is nothing to remember: give the TEXT of the entry"),
    ],
)
def test_bad_input_exits_2(tmp_path, args, error):
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert error in result.stderr and "Traceback" not in result.stderr


# ------------------------------------------------------------------------- the API


def test_the_api_lists_and_searches_as_frames(filed, tmp_path):
    every = api.memory()
    assert list(every.columns) == list(memories.COLUMNS)
    assert list(every["id"]) == [2, 1] and list(every["kind"]) == ["lesson", "finding"]
    assert str(every["at"].dtype).startswith("datetime64")
    assert every["at"][1].timestamp() == 1_700_000_000.0
    found = api.memory("final loss", k=3)
    assert list(found.columns) == [*memories.COLUMNS, "score"]
    assert list(found["id"]) == [1] and found["stage"][0] == "experiment.loop"
    assert list(api.memory(kind="lesson")["id"]) == [2]
    assert api.memory("transformer").empty
    with pytest.raises(BadInput, match="'hunch' is no kind of memory entry; one of lesson, "):
        api.memory(kind="hunch")


def test_the_api_files_and_forgets_through_the_declared_operations(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no project here: the entry belongs to none
    filed = api.perform("remember", text="Look at the loss curve before the metric")
    assert filed.ok and filed.message.endswith("(no project)")
    forgot = api.perform("memory", action="forget", id=1)
    assert (
        forgot.ok and forgot.message == "forgot lesson 1: Look at the loss curve before the metric"
    )
    missing = api.perform("memory", action="forget", id=1)
    assert not missing.ok and "holds no entry 1" in missing.message
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", str(blocker / "memory.sqlite3"))
    with pytest.raises(MemoryUnavailable, match=r"^memory .*: cannot open it"):
        api.memory()


def test_the_session_workspace_is_where_an_entry_is_filed_from(tmp_path, workspace, small_table):
    ResearchController.create(workspace, "find x", mode="manual", table=small_table)
    assert memories.project_of(None, str(workspace.root)) == str(workspace.root)
    assert memories.project_of(None, str(tmp_path)) == ""  # no project there
    assert memories.project_of("elsewhere", None) == str(Workspace.at("elsewhere").root)
