"""Layer 1 and the user's memory: a finished stage is filed as a finding naming its snapshot, a
rejected gate as a lesson with the reason; the next project's task recalls them (lessons
first), keeps what it recalled with the task, and says so in one event; `--no-memory`, a
stage's `memory = false` and a store that cannot be opened each leave the run going."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import SMALL_TABLE

from lightscientist_jupyter import memory
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.supervisor import prompts
from lightscientist_jupyter.workspace import Workspace

GOAL = "Does learning-rate warmup help a small MLP train?"


def start(root: Path, table, recorder=None, goal: str = GOAL) -> ResearchController:
    return ResearchController.create(
        Workspace.at(root), goal, mode="manual", table=table, bus=recorder.bus if recorder else None
    )


def entries() -> list[memory.Entry]:
    store = memory.open_store()
    try:
        return store.entries()
    finally:
        store.close()


def test_a_finished_stage_is_filed_as_a_finding_naming_its_snapshot(
    tmp_path, small_table, recorder, produce
):
    c = start(tmp_path / "first", small_table, recorder)
    produce(c)
    c.finish_stage("Surveyed 7 works on warmup.\nWarmup length mattered most.", ["out/a.md"])
    (finding,) = entries()
    assert finding.kind == "finding" and finding.key == "finding:a#1"
    assert (finding.project, finding.stage, finding.visit) == (str(tmp_path / "first"), "a", 1)
    assert finding.text.splitlines() == [
        f"a — goal: {GOAL}",
        "Surveyed 7 works on warmup.",
        "Warmup length mattered most.",
        "Outputs: out/a.md",
    ]
    snapshots = [s.id for s in c.history.log()]
    assert finding.snapshot and any(s.startswith(finding.snapshot) for s in snapshots)
    (filed,) = [e for e in recorder.events if e.type == "memory.filed"]
    assert filed.data["entries"][0]["key"] == "finding:a#1"


def test_a_rejected_gate_is_a_lesson_with_the_reason(tmp_path, small_table, produce, advance):
    c = start(tmp_path / "p", small_table)
    advance(c)  # a → the gate
    produce(c)
    c.finish_stage("Brief: linear warmup over 5 epochs.", ["out/brief.md"])
    c.reply(False, "the baseline has no learning-rate sweep")
    lesson = next(e for e in entries() if e.kind == "lesson")
    assert lesson.key == "lesson:gate#1" and lesson.stage == "gate"
    assert "rejected" in lesson.text and "the baseline has no learning-rate sweep" in lesson.text


def test_the_next_project_recalls_the_first_ones_lessons_first(
    tmp_path, small_table, recorder, produce, advance
):
    first = start(tmp_path / "first", small_table)
    advance(first)
    first.file_lessons(["Warmup over 5 epochs removed the divergence at lr 0.5."], why="done")
    second = start(tmp_path / "second", small_table, recorder)
    task = second.task()
    assert [e.kind for e in task.recalled] == ["lesson", "finding"]
    assert task.recalled[0].text == "Warmup over 5 epochs removed the divergence at lr 0.5."
    assert task.recalled[0].project == str(tmp_path / "first")
    (said,) = [e for e in recorder.events if e.type == "memory.recall"]
    assert said.task_id == "a#1" and said.data["for"] == "task"
    assert [h["project"] for h in said.data["hits"]] == [str(tmp_path / "first")] * 2
    # the worker's first message carries them, under its own heading, before PROCESS.md
    message = prompts.worker_message(task, skill="/skills/a.md", digest="# Research process")
    block = message.split("## Recalled from memory", 1)[1].split("## PROCESS.md", 1)[0]
    assert "- lesson (first, its lessons): Warmup over 5 epochs removed the divergence" in block
    # asked again (a resumed stage), the task says the same, and no event is added
    first.file_lessons(["Another lesson about warmup and MLP learning rate."], why="later")
    reopened = ResearchController.open(Workspace.at(tmp_path / "second"), bus=recorder.bus)
    assert reopened.task().recalled == task.recalled
    assert [e.type for e in recorder.events].count("memory.recall") == 1


def test_own_entries_are_never_recalled_for_the_same_project(tmp_path, small_table, advance):
    c = start(tmp_path / "p", small_table)
    advance(c)
    assert entries() and c.task().recalled == ()


def test_lessons_are_filed_once_per_occasion(tmp_path, small_table):
    c = start(tmp_path / "p", small_table)
    assert c.lessons_due("done")
    assert [e.key for e in c.file_lessons(["one", "", "two"], why="done")] == [
        "lesson:done#1",
        "lesson:done#2",
    ]
    assert not c.lessons_due("done")
    assert c.file_lessons(["one", "two"], why="done") == []
    assert len(entries()) == 2


def test_no_memory_for_the_run_files_and_recalls_nothing(tmp_path, small_table, advance):
    first = start(tmp_path / "first", small_table)
    first.memory_on = False
    advance(first)
    assert entries() == [] and not first.lessons_due("done")
    start(tmp_path / "other", small_table).file_lessons(["warmup lesson"], why="done")
    second = start(tmp_path / "second", small_table)
    second.memory_on = False
    assert second.task().recalled == () and second.task().memory is False


def test_a_stage_with_memory_off_neither_recalls_nor_files(tmp_path, write_table, advance):
    off = SMALL_TABLE.replace('outputs = ["out/a.md"]', 'outputs = ["out/a.md"]\nmemory = false')
    table = load_table(write_table(tmp_path / "table", off))
    start(tmp_path / "other", table).file_lessons(["warmup lesson for a small MLP"], why="done")
    c = start(tmp_path / "p", table)
    assert c.task().recalled == () and c.task().memory is False  # stage a: memory = false
    advance(c)
    assert [e.project for e in entries()] == [str(tmp_path / "other")]


def test_a_store_that_cannot_be_opened_is_said_once_and_the_run_goes_on(
    tmp_path, small_table, recorder, produce, advance, monkeypatch
):
    broken = tmp_path / "not-a-database.sqlite3"
    broken.write_text("this is not SQLite\n" * 100, encoding="utf-8")
    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", str(broken))
    c = start(tmp_path / "p", small_table, recorder)
    assert c.task().recalled == ()
    advance(c)
    assert c.stage == "gate"
    said = [e for e in recorder.events if e.type == "memory.unavailable"]
    assert len(said) == 1 and str(broken) in said[0].message
    assert "LIGHTSCIENTIST_MEMORY" in said[0].message
    try:
        sqlite3.connect(broken).execute("select 1 from entries")
        raise AssertionError("the broken file became a database")
    except sqlite3.DatabaseError:
        pass


BIB = """@article{goyal2017accurate,
  title = {Accurate, Large Minibatch {SGD}: Training ImageNet in 1 Hour},
  author = {Goyal, Priya and Dollár, Piotr and Girshick, Ross and He, Kaiming},
  year = {2017},
  doi = {10.48550/arXiv.1706.02677},
}
"""


def test_cited_works_are_filed_as_papers_once(tmp_path, small_table, produce, advance):
    c = start(tmp_path / "p", small_table)
    (c.workspace.root / "paper").mkdir()
    (c.workspace.root / "paper" / "references.bib").write_text(BIB, encoding="utf-8")
    advance(c)  # a → gate: the work is filed
    produce(c)
    c.finish_stage("Brief.", ["out/brief.md"])
    c.reply(True, "")  # gate → b: nothing new cited, nothing filed again
    (paper,) = [e for e in entries() if e.kind == "paper"]
    assert paper.key == "paper:10.48550/arxiv.1706.02677" and paper.stage == "a"
    assert paper.text.splitlines()[0] == (
        "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour. Priya Goyal, Piotr Dollár, "
        "Ross Girshick et al. (2017). doi:10.48550/arxiv.1706.02677"
    )
    assert paper.text.splitlines()[-1] == f"Cited by a project on: {GOAL}"


def test_each_rejected_gate_and_the_end_are_owed_lessons_once(
    tmp_path, small_table, produce, advance
):
    c = start(tmp_path / "p", small_table)
    advance(c)  # a → the gate
    produce(c)
    c.finish_stage("Brief.", ["out/brief.md"])
    c.reply(False, "no baseline")
    assert c.lessons_owed() == [
        (
            "reject:d1",
            "gate",
            "the researcher rejected 'gate' at its gate and sent the project back to 'a': "
            "“no baseline”",
        )
    ]
    c.file_lessons(["Run a baseline before the gate."], why="reject:d1", stage="gate")
    assert c.lessons_owed() == []
    advance(c)  # a → the gate again
    produce(c)
    c.finish_stage("Brief with a baseline.", ["out/brief.md"])
    c.reply(True, "")
    advance(c)  # b → done
    assert c.lessons_owed() == [("done", "", "")]
    c.memory_on = False
    assert c.lessons_owed() == []
