"""A new project's options and paths are checked before its folder, or anything in it, is made
(issue 30, point 9): `lightscientist research` in a subprocess, `%lightscientist research` on an
in-process shell and `api.start`, with the offline model. Bad input is one line naming the
option and what to change (exit 2 on the command line); the folder is left exactly as it was —
absent when it was absent — so the corrected command then works.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from lightscientist_jupyter import api
from lightscientist_jupyter.errors import LightScientistError
from tests.test_bad_files import GOAL, _page_damage, cli, one_clean_line, out


def damaged_database(path: Path) -> Path:
    """A real SQLite file with a table, then damaged in its pages (its header kept)."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    _page_damage(path)
    return path


# (the options, what the one line names)
BAD = {
    "until": (["--until", "no.such"], "--until 'no.such' is not a stage"),
    "stage": (["--stage", "no.such"], "--stage 'no.such' is not a stage"),
    "handoff": (["--handoff", "no.such"], "--handoff: 'no.such' not a stage"),
    "stages": (["--stages", "{tmp}/missing.toml"], "--stages {tmp}/missing.toml is not a file"),
    "sqlite-under-a-file": (
        ["--checkpoints", "sqlite:///{tmp}/notes.txt/c.sqlite"],
        "--checkpoints sqlite:///{tmp}/notes.txt/c.sqlite: {tmp}/notes.txt is a file, not a folder",
    ),
    "sqlite-the-workspace": (
        ["--checkpoints", "sqlite:///"],
        "is a folder or a file of the project",
    ),
    "sqlite-damaged": (
        ["--checkpoints", "sqlite:///{tmp}/old.sqlite"],
        "{tmp}/old.sqlite is not a sound SQLite database",
    ),
    "budget": (["--budget", "usd=abc"], "--budget usd=abc"),
    "library": (["--library", "{tmp}/none.bib"], "--library {tmp}/none.bib does not exist"),
    "limits": (["--limits", "mem=abc"], "--limits: mem='abc'"),
    "job-time-limit": (["--job-time-limit", "3x"], "--job-time-limit '3x' is not a duration"),
    "model": (["--model", "nosuch:thing"], "unknown model provider 'nosuch'"),
}


@pytest.fixture
def places(tmp_path: Path) -> Path:
    """`tmp_path` with a plain file (notes.txt) and a damaged database (old.sqlite) in it."""
    (tmp_path / "notes.txt").write_text("not a folder", encoding="utf-8")
    damaged_database(tmp_path / "old.sqlite")
    return tmp_path


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` with its content (None for a folder)."""
    return {
        str(p.relative_to(folder)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_option_leaves_no_folder(places, name):
    args, words = BAD[name]
    ws = places / "project"
    before = tree(places)
    proc = cli(ws, "research", GOAL, *(a.format(tmp=places) for a in args))
    one_clean_line(proc, 2, "lightscientist research: error: ", words.format(tmp=places))
    assert not ws.exists()
    assert tree(places) == before  # nothing made beside it either (no database, no WAL files)


@pytest.mark.slow
def test_the_corrected_command_then_works_in_a_folder_left_as_it_was(places):
    ws = places / "project"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "raw.csv").write_text("x,y\n1,2\n", encoding="utf-8")
    before = tree(ws)
    for name in ("until", "sqlite-under-a-file", "stages", "handoff"):
        args, words = BAD[name]
        proc = cli(ws, "research", GOAL, *(a.format(tmp=places) for a in args))
        one_clean_line(proc, 2, words.format(tmp=places))
        assert tree(ws) == before, name

    fixed = cli(ws, "research", GOAL, "--until", "idea.survey", "--checkpoints", "sqlite:///ck.db")
    assert fixed.returncode == 0, out(fixed)
    assert out(fixed)[0].splitlines()[-1] == "paused"
    assert (ws / "ck.db").is_file() and (ws / "data" / "raw.csv").read_text() == "x,y\n1,2\n"


@pytest.mark.parametrize("name", ["until", "sqlite-under-a-file", "stages", "sqlite-damaged"])
def test_the_magic_and_the_api_check_before_making_the_folder(magic_shell, places, name):
    args, words = BAD[name]
    words = words.format(tmp=places)
    ws = places / "project"
    before = tree(places)
    line = " ".join([f'research "{GOAL}"', "-w", str(ws), *(a.format(tmp=places) for a in args)])
    with capture_output(), pytest.raises(UsageError, match=re.escape(words)):
        magic_shell.run_line_magic("lightscientist", line)
    option = args[0].removeprefix("--").replace("-", "_")
    value = args[1].format(tmp=places)
    with pytest.raises(LightScientistError, match=re.escape(words)):
        api.start(GOAL, ws, **{option: value})
    assert not ws.exists() and tree(places) == before
    assert api.current(ws) is None


def test_an_unreachable_postgres_fails_the_api_run_before_the_folder_is_made(tmp_path):
    """What only the run's thread can check (a server to reach) is checked there, still
    before the folder is made."""
    ws = tmp_path / "project"
    run = api.start(GOAL, ws, checkpoints="postgresql://me:secret@127.0.0.1:1/lab")
    with pytest.raises(LightScientistError, match="the server is unreachable"):
        run.wait(timeout=60)
    assert not ws.exists()
