"""Bounded prompts: the supervisor's event messages and the PROCESS.md digest."""

from __future__ import annotations

import dataclasses

from lightscientist_jupyter.memory.entries import Entry
from lightscientist_jupyter.runtime.protocol import EVENT_TITLE, TASK_TITLE, parse_header
from lightscientist_jupyter.supervisor.prompts import (
    agent_message,
    event_message,
    process_digest,
    worker_message,
)
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.task import StageTask

TASK = StageTask(
    goal="Does warmup help?",
    stage="experiment.loop",
    skill_path="/x/skill.md",
    outputs=("experiment/results.csv",),
    default_next="experiment.analyze",
    allowed_next=("experiment.loop", "experiment.analyze"),
    workspace="/ws",
    process_md="/ws/PROCESS.md",
    visit=3,
    feedback="more seeds",
    task_id="experiment.loop#3",
)


def process_md(entries: int) -> str:
    head = "# Research process\n\n**Goal:** g\n\n"
    body = "".join(
        f"\n## stage.{i} · 2026-11-30 01:00:{i % 60:02d} UTC\n<!-- entry: s#{i} -->\n"
        + "".join(f"summary line {j} of entry {i}\n" for j in range(8))
        + f"\nOutputs: `out/{i}.md`\n"
        for i in range(entries)
    )
    return head + body


def test_small_process_md_goes_in_whole():
    text = process_md(3)
    assert process_digest(text) == text


def test_digest_keeps_newest_entries_whole_and_indexes_the_older():
    text = process_md(200)
    digest = process_digest(text, max_chars=6000)
    assert len(digest) <= 6000
    assert "summary line 7 of entry 199" in digest  # newest, in full
    assert "summary line 7 of entry 0\n" not in digest  # oldest, not in full
    assert "Earlier entries" in digest
    assert "**Goal:** g" in digest


def test_digest_size_stays_flat_as_the_project_grows():
    sizes = [len(process_digest(process_md(n))) for n in (60, 120, 400, 1000)]
    assert max(sizes) <= 6000
    assert max(sizes) - min(sizes) < 1500


def test_event_message_is_one_event_under_a_fixed_header():
    long_summary = "\n".join(f"line {i} " + "x" * 200 for i in range(10))
    event = SchedulingEvent(
        "worker_finished",
        TASK.task_id,
        "w7",
        {
            "result": {
                "kind": "complete_stage",
                "summary": long_summary,
                "outputs": ["experiment/results.csv"],
                "next_stage": "experiment.loop",
            },
            "label": "",
        },
    )
    text = event_message(event, TASK, attempts=1)
    title, fields = parse_header(text)
    assert title == EVENT_TITLE
    assert fields["event"] == "worker_finished" and fields["worker"] == "w7"
    assert fields["result"]["next_stage"] == "experiment.loop"
    assert "line 0 " in text and "line 1 " in text  # the summary's head, to decide on
    assert "line 9" not in text and "characters cut" in text  # bounded: the rest is cut
    assert fields["allowed_next"] == ["experiment.loop", "experiment.analyze"]
    assert len(text) < 1300


def test_worker_message_carries_task_skill_feedback_and_digest():
    text = worker_message(
        TASK,
        skill="/.lightscientist/skills/experiment.loop.md",
        digest="# Research process\n...",
        label="probe c1",
        instructions="run only c1",
    )
    title, fields = parse_header(text)
    assert title == TASK_TITLE
    assert fields["stage"] == "experiment.loop" and fields["visit"] == "3"
    assert fields["outputs"] == ["experiment/results.csv"]
    assert fields["allowed_next"] == ["experiment.loop", "experiment.analyze"]
    assert fields["feedback"] == "more seeds" and fields["label"] == "probe c1"
    assert "## PROCESS.md" in text


def test_an_agents_message_inlines_the_skill_and_names_the_tools_of_its_mcp_server():
    lesson = Entry(1, "lesson", "warmup matters at high rates", "/p", "k", "s", 1, "", "", 0.0)
    recalled = (lesson,)
    text = agent_message(
        dataclasses.replace(TASK, recalled=recalled),
        skill_text="# loop\n\nRun three seeds.\n",
        digest="# Research process\n...",
    )
    title, fields = parse_header(text)
    assert title == TASK_TITLE
    assert fields["outputs"] == ["experiment/results.csv"] and fields["feedback"] == "more seeds"
    assert "skill" not in fields  # inlined: the agent reads no path of ours
    assert fields["allowed_next"] == ["experiment.loop", "experiment.analyze"]
    assert "## The stage's skill\n\n# loop\n\nRun three seeds.\n" in text
    assert "## Recalled from memory (earlier projects; your recall tool searches further)\n" in text
    assert "deliver with the `complete_stage` tool of the `lightscientist` MCP server" in text
    assert "If you cannot reach these tools, end your turn" in text
