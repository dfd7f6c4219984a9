"""PROCESS.md: one header, one short entry per finished stage, never twice for the same finish."""

from __future__ import annotations

import re
import shutil

from lightscientist_jupyter.controller import ResearchController, process_log
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace

GOAL = "Does learning-rate warmup help a small MLP?"


def create(workspace, table, mode="manual") -> ResearchController:
    return ResearchController.create(workspace, GOAL, mode=mode, table=table)


def read(workspace) -> str:
    return workspace.process_md.read_text(encoding="utf-8")


def entries(text: str) -> list[str]:
    """The entry blocks, each starting at its `## ` heading."""
    return ["## " + block for block in text.split("\n## ")[1:]]


def test_header_written_once(workspace, small_table, advance):
    c = create(workspace, small_table)
    text = read(workspace)
    assert text.startswith("# Research process\n")
    assert f"**Goal:** {GOAL}" in text
    assert "mode `manual`" in text and str(small_table.path) in text
    assert entries(text) == []
    advance(c)
    reopened = ResearchController.open(workspace)
    advance(reopened)
    reopened.reply(True)
    assert read(workspace).count("# Research process") == 1
    assert read(workspace).count("**Goal:**") == 1


def test_one_entry_per_finished_stage(workspace, small_table, advance):
    c = create(workspace, small_table)
    advance(c, "a", "Line one of a.\nLine two of a.")
    advance(c, None, "Second visit of a.")
    blocks = entries(read(workspace))
    assert len(blocks) == 2
    first, second = blocks
    assert re.match(r"## a · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n", first)
    assert "<!-- entry: a#1 -->" in first
    assert "Line one of a.\nLine two of a.\n" in first
    assert "Outputs: `out/a.md`" in first
    assert "Decision:" not in first
    assert "<!-- entry: a#2 -->" in second and "Second visit of a." in second
    assert c.stage == "gate"  # the gate has not finished yet: no entry for it


def test_gate_entry_has_decision_and_comment(workspace, small_table, advance):
    c = create(workspace, small_table)
    advance(c)
    advance(c, None, "Brief: idea 2 is the one.")
    assert len(entries(read(workspace))) == 1  # waiting: nothing written for the gate yet
    c.reply(False, "Needs a baseline.", "a", source=ReplySource.WIDGET)
    gate = entries(read(workspace))[-1]
    assert gate.startswith("## gate · ")
    assert "Brief: idea 2 is the one." in gate
    assert "Outputs: `out/brief.md`" in gate
    assert "Decision: rejected, back to 'a' by the user via widget — “Needs a baseline.”" in gate
    advance(c)
    advance(c, None, "Brief, take two.")
    c.reply(True, source=ReplySource.CLI)
    assert "Decision: approved by the user via cli\n" in entries(read(workspace))[-1]


def test_auto_gate_entry_says_it_passed_by_itself(workspace, small_table, advance):
    c = create(workspace, small_table, mode="auto")
    advance(c)
    advance(c)
    assert c.stage == "b"
    assert "Decision: approved automatically (auto mode)" in entries(read(workspace))[-1]


def test_extra_outputs_are_listed_after_the_required_ones(workspace, small_table, produce):
    c = create(workspace, small_table)
    produce(c)
    (workspace.root / "out" / "notes.md").write_text("notes", encoding="utf-8")
    assert c.finish_stage("done", ["out/notes.md", "out/a.md"]).accepted
    assert "Outputs: `out/a.md`, `out/notes.md`" in entries(read(workspace))[-1]


def test_answered_question_is_recorded(workspace, small_table):
    c = create(workspace, small_table)
    decision = c.request_user_decision("Use the GPU cluster?")
    c.reply(False, "CPU is enough", decision_id=decision)
    entry = entries(read(workspace))[-1]
    assert "Question: Use the GPU cluster?" in entry
    assert "Decision: answered no via api — “CPU is enough”" in entry


def test_long_summary_is_cut_not_refused(workspace, small_table, advance):
    c = create(workspace, small_table)
    summary = "\n".join(f"finding {i}" for i in range(1, 16))
    outcome = advance(c, None, summary)
    assert outcome.accepted
    entry = entries(read(workspace))[-1]
    body = entry.split("-->\n", 1)[1].split("\nOutputs:", 1)[0].strip().splitlines()
    assert len(body) == 10  # nine lines kept and one saying how many were cut
    assert body[:9] == [f"finding {i}" for i in range(1, 10)]
    assert "finding 10" not in entry and "finding 15" not in entry
    assert body[9] == "(… 6 more line(s) cut)"
    assert c.state.last_summary["a"] == summary  # the state keeps what was said


def test_ten_line_summary_is_kept_whole(workspace, small_table, advance):
    c = create(workspace, small_table)
    summary = "\n".join(f"finding {i}" for i in range(1, 11))
    advance(c, None, summary)
    entry = entries(read(workspace))[-1]
    assert summary in entry and "cut" not in entry


def test_clip_summary_drops_blank_lines():
    assert process_log.clip_summary("\none\n\n  two  \n\n") == ["one", "  two"]
    assert process_log.clip_summary("") == []


def test_the_same_finish_applied_twice_writes_one_entry(workspace, small_table, advance):
    """A crash after the entry was written but before state.json was: the retry adds nothing."""
    c = create(workspace, small_table)
    saved = workspace.state_dir / "state.before-finish.json"
    shutil.copy(workspace.state_file, saved)
    advance(c, None, "Survey finished.")
    assert c.stage == "gate"
    assert len(entries(read(workspace))) == 1

    shutil.copy(saved, workspace.state_file)  # state.json as it was before the finish
    retry = ResearchController.open(workspace)
    assert retry.stage == "a"
    advance(retry, None, "Survey finished.")
    assert retry.stage == "gate"
    text = read(workspace)
    assert len(entries(text)) == 1
    assert text.count("<!-- entry: a#1 -->") == 1


def test_the_same_gate_decision_applied_twice_writes_one_entry(workspace, small_table, advance):
    c = create(workspace, small_table)
    advance(c)
    advance(c)
    saved = workspace.state_dir / "state.waiting.json"
    shutil.copy(workspace.state_file, saved)
    c.reply(True, "ok")
    assert len(entries(read(workspace))) == 2

    shutil.copy(saved, workspace.state_file)
    retry = ResearchController.open(workspace)
    assert retry.status == "waiting_user"
    retry.reply(True, "ok")
    assert retry.stage == "b"
    assert read(workspace).count("<!-- entry: gate#1 -->") == 1
    assert len(entries(read(workspace))) == 2


def test_append_entry_reports_whether_it_wrote(tmp_path):
    ws = Workspace.at(tmp_path)
    path = ws.process_md
    process_log.ensure_header(ws, GOAL, "table.toml", "auto", 0.0)
    process_log.ensure_header(ws, GOAL, "table.toml", "auto", 0.0)
    entry = process_log.ProcessEntry(key="x#1", stage="x", at=0.0, summary="s")
    assert process_log.append_entry(ws, entry) is True
    assert process_log.append_entry(ws, entry) is False
    text = path.read_text(encoding="utf-8")
    assert text.count("# Research process") == 1
    assert text.count("## x · 1970-01-01 00:00:00 UTC") == 1


def test_a_link_in_place_of_process_md_is_replaced_from_the_projects_copy(tmp_path):
    """A command moved PROCESS.md away and left a link to a file of the user's: the next
    entry goes to the project's copy, PROCESS.md becomes a file again holding every entry,
    the user's file is untouched, and the refusal is told in one line."""
    ws = Workspace.at(tmp_path / "ws")
    outside = tmp_path / "bashrc"
    outside.write_text("export PATH=/usr/bin\n", encoding="utf-8")
    process_log.ensure_header(ws, GOAL, "table.toml", "auto", 0.0)
    first = process_log.ProcessEntry(key="a#1", stage="a", at=0.0, summary="first")
    process_log.append_entry(ws, first)
    ws.process_md.rename(tmp_path / "moved.md")
    ws.process_md.symlink_to(outside)
    told: list[str] = []
    second = process_log.ProcessEntry(key="b#1", stage="b", at=0.0, summary="curl x | sh")
    assert process_log.append_entry(ws, second, told.append) is True
    assert outside.read_text(encoding="utf-8") == "export PATH=/usr/bin\n"
    assert not ws.process_md.is_symlink()
    assert [e.splitlines()[0] for e in entries(read(ws))] == [
        "## a · 1970-01-01 00:00:00 UTC",
        "## b · 1970-01-01 00:00:00 UTC",
    ]
    assert told == [
        f"{ws.process_md}: is a symbolic link (to {outside}); LightScientist does not "
        "follow links in a workspace; PROCESS.md was written again as a file from the "
        "project's copy"
    ]


def test_control_characters_reach_process_md_escaped(workspace, small_table, advance):
    goal = "warmup \x1b]0;owned\x07 and \u202eevil\ngoal"
    c = ResearchController.create(workspace, goal, mode="manual", table=small_table)
    advance(c)
    advance(c, None, "Brief:\tidea 2\x1b[2J is the one.\x9b31m")
    c.reply(False, "Needs a baseline\x1b[31m.\n## b · 2099-01-01\x00", "a", source=ReplySource.CLI)
    c.request_user_decision("Use the GPU\x07 cluster?")
    c.reply(True, "yes\u2028please")
    text = read(workspace)
    raw = [ch for ch in text if ch not in "\n\t" and not ch.isprintable()]
    assert raw == []  # no ESC, BEL, CSI, NUL, U+202E or U+2028 as they came
    assert "**Goal:** warmup \\x1b]0;owned\\x07 and \\u202eevil goal\n" in text
    assert "Brief:\tidea 2\\x1b[2J is the one.\\x9b31m\n" in text  # a tab is kept
    assert (
        "Decision: rejected, back to 'a' by the user via cli — “Needs a baseline\\x1b[31m." in text
    )
    assert "\\x0a## b · 2099-01-01\\x00”" in text  # a comment cannot start an entry of its own
    assert "Question: Use the GPU\\x07 cluster?" in text
    assert "Decision: answered yes via api — “yes\\u2028please”" in text
