"""Faults and bad input a user meets on disk (issue 20, points 4, 5, 7 and 8), tried through the
real `lightscientist` command in a subprocess with the offline model: a damaged checkpoint
database, a state.json of the wrong shape, a file as the workspace, odd goals. Each ends in one
line naming what to fix and the exit code the README gives, never a traceback, and nothing
written is lost."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.slow import whole_project

GOAL = "Does learning-rate warmup help a small MLP?"


def cli(ws: Path, *args: str | bytes, env: dict[str, str] | None = None, timeout: float = 240):
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        timeout=timeout,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": "", **(env or {})},
    )


def out(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    return proc.stdout.decode(), proc.stderr.decode()


def one_clean_line(proc: subprocess.CompletedProcess, code: int, *fragments: str) -> str:
    """The exit code, no traceback, and the error as one line on stderr naming `fragments`."""
    stdout, stderr = out(proc)
    assert proc.returncode == code, (stdout, stderr)
    assert "Traceback" not in stderr and "Traceback" not in stdout, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def state(ws: Path) -> dict:
    return json.loads((ws / ".lightscientist" / "state.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
@whole_project
def waiting_project(tmp_path_factory) -> Path:
    """A manual project waiting at its first gate, run once for the file: each test damages
    a copy of its own."""
    ws = tmp_path_factory.mktemp("state") / "project"
    proc = cli(ws, "research", GOAL, "--mode", "manual")
    assert proc.returncode == 0 and out(proc)[0].splitlines()[-1] == "waiting_user", out(proc)
    return ws


# ------------------------------------------------------------------ 4: checkpoint database


def _page_damage(db: Path) -> None:
    """Overwrite the second half of the file (b-tree pages) with garbage, header kept."""
    data = bytearray(db.read_bytes())
    half = len(data) // 2
    data[half : half + 8192] = b"\xa5" * 8192
    db.write_bytes(bytes(data))


def _header_damage(db: Path) -> None:
    """A file that is no SQLite database at all (an open raises DatabaseError)."""
    db.write_bytes(b"this is not a database" * 500)


@pytest.mark.parametrize("damage", [_page_damage, _header_damage], ids=["pages", "header"])
@pytest.mark.slow
def test_a_damaged_checkpoint_database_is_named_with_its_remedy(tmp_path, waiting_project, damage):
    ws = tmp_path / "project"
    subprocess.run(["cp", "-a", str(waiting_project), str(ws)], check=True)
    db = ws / ".lightscientist" / "checkpoints.sqlite"
    with sqlite3.connect(db) as conn:  # the integrity check is what a user would run
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    before = state(ws)
    damage(db)

    line = one_clean_line(
        cli(ws, "resume"), 2, str(db), "is damaged", "lightscientist resume --fresh-sessions"
    )
    assert line.startswith("lightscientist resume: error: the checkpoint database")
    assert state(ws) == before  # nothing changed, nothing lost

    fresh = cli(ws, "resume", "--fresh-sessions")
    stdout, stderr = out(fresh)
    assert fresh.returncode == 0 and "Traceback" not in stderr, (stdout, stderr)
    assert "the checkpoint database was moved aside to" in stdout
    assert stdout.splitlines()[-1] == "waiting_user"
    aside = list((ws / ".lightscientist").glob("checkpoints.damaged-*.sqlite"))
    assert len(aside) == 1 and aside[0].stat().st_size > 0  # moved, not deleted
    after = state(ws)
    assert after["history"] == before["history"] and after["visits"] == before["visits"]

    # the project goes on with the new database: approve the gate, run to the next one
    reply = cli(ws, "reply", "y")
    assert reply.returncode == 0, out(reply)
    assert state(ws)["stage"] == "experiment.gate", out(reply)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


# ------------------------------------------------------------------ 5: state.json


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("status", "weird", "one of running, waiting_user, done, failed, cancelled, stopped"),
        ("visits", {"idea.survey": "one"}, "an object of stage -> integer"),
        ("history", {"from": "x"}, "a list of objects"),
        ("goal", None, "lacks key(s) goal"),
        ("status", None, "lacks key(s) status"),  # not taken as running
        ("mode", 3, "one of auto, manual"),
    ],
)
@pytest.mark.slow
def test_a_state_file_of_the_wrong_shape_names_the_key_and_the_type(
    tmp_path, waiting_project, key, value, expected
):
    ws = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(waiting_project), str(ws)], check=True)
    path = ws / ".lightscientist" / "state.json"
    raw = json.loads(path.read_text())
    if value is None:
        del raw[key]
    else:
        raw[key] = value
    path.write_text(json.dumps(raw))
    for command in (["status"], ["status", "--json"], ["resume"], ["workers"], ["reply", "y"]):
        line = one_clean_line(cli(ws, *command), 2, str(path), expected)
        if value is not None:
            assert f"key '{key}' should be" in line
        assert "fix that key in the file or restore the file from a backup" in line
    # `research` on it says how to repair it — not "use resume", which refuses too
    line = one_clean_line(cli(ws, "research", GOAL), 2, str(path), "fix that key")
    assert "resume" not in line.replace("`lightscientist status`", "")
    assert path.read_text() == json.dumps(raw)  # left as it was for the user to fix


# ------------------------------------------------------------------ 7: bad workspaces


@pytest.mark.slow
def test_a_file_given_as_the_workspace_is_one_line_and_exit_2(tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("not a folder")
    commands = (
        ["research", GOAL],
        ["status"],
        ["resume"],
        ["events"],
        ["workers"],
        ["reply", "y"],
        ["cancel"],
    )
    for command in commands:
        one_clean_line(cli(afile, *command), 2, f"{afile} is a file, not a folder")
    one_clean_line(cli(afile / "sub", "research", GOAL), 2, "cannot be created")
    assert afile.read_text() == "not a folder"


# ------------------------------------------------------------------ 8: goals


def test_a_goal_over_the_bound_is_refused_before_anything_is_written(tmp_path):
    ws = tmp_path / "project"
    line = one_clean_line(cli(ws, "research", "x" * 8001), 2, "8,001 characters", "bound of 8,000")
    assert "LIGHTSCIENTIST_MAX_GOAL_CHARS" in line
    assert not ws.exists()


def test_invalid_utf8_in_the_goal_is_refused_before_anything_is_written(tmp_path):
    ws = tmp_path / "project"
    proc = cli(ws, "research", b"warmup \xff\xfe for MLPs")  # argv as the shell passes it
    one_clean_line(proc, 2, "not valid UTF-8", "byte 0xff at character 7")
    assert not ws.exists()


@pytest.mark.slow
def test_a_long_goal_is_stored_once_and_prompts_get_it_cut(tmp_path):
    ws = tmp_path / "project"
    goal = "Does warmup help? " + "Detail of the question. " * 600  # 14,418 characters
    proc = cli(
        ws,
        "research",
        goal,
        "--mode",
        "auto",
        "--stage",
        "idea.survey",
        env={"LIGHTSCIENTIST_MAX_GOAL_CHARS": "20000"},
    )
    assert proc.returncode == 0, out(proc)
    stored = state(ws)["goal"]
    assert stored == " ".join(goal.split()) and len(stored) > 14000
    tasks = sorted((ws / ".lightscientist" / "workers").glob("w*/task.md"))
    assert tasks
    for task in tasks:
        text = task.read_text()
        assert stored not in text
        assert "the goal is cut here: it has 14,417 characters" in text
        assert "/.lightscientist/state.json" in text
        assert len(text) < 14000
    size = (ws / ".lightscientist" / "checkpoints.sqlite").stat().st_size
    assert size < 40_000_000, size  # was 238 MB for a 120 KB goal


@pytest.mark.slow
def test_control_characters_of_a_goal_are_printed_escaped(tmp_path):
    ws = tmp_path / "project"
    goal = "warmup \x1b[2J\x1b]0;owned\x07 and \u202eevil"
    proc = cli(ws, "research", goal, "--mode", "manual", "--watch")
    assert proc.returncode == 0, out(proc)
    assert state(ws)["goal"] == goal  # stored as given
    escaped = "warmup \\x1b[2J\\x1b]0;owned\\x07 and \\u202eevil"
    status = cli(ws, "status")
    events = cli(ws, "events", "--tail", "500")
    for shown in (proc, status, events):
        text = out(shown)[0]
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert f"goal:    {escaped}" in out(status)[0]


def test_every_printer_escapes_what_could_drive_a_terminal():
    from lightscientist_jupyter.events import format_line, printable

    raw = {
        "ts": 0,
        "layer": 3,
        "type": "model.output",
        "stage": "a\x1bb",
        "message": "hi\x07\u202e",
    }
    line = format_line(raw)
    assert "\x1b" not in line and "\x07" not in line and "\u202e" not in line
    assert "a\\x1bb" in line and "hi\\x07\\u202e" in line
    assert printable("été 中文 ok") == "été 中文 ok"  # ordinary text is left alone
    assert printable("\u2028\x9b[31m") == "\\u2028\\x9b[31m"  # a line separator, a C1 CSI
