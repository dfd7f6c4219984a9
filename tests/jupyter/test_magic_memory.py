"""`%lightscientist memory` and `%lightscientist remember` on an in-process `InteractiveShell`:
the memory as a DataFrame or a list of dicts, a lesson filed in one line, and what cannot be
done as a one-line `UsageError`."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from lightscientist_jupyter.app.memory import COLUMNS
from lightscientist_jupyter.controller import ResearchController
from tests.jupyter.test_magic import fresh_defaults, ip, ls  # noqa: F401 (fixtures)


def said(ip, line: str) -> str:  # noqa: F811
    with capture_output() as out:
        assert ls(ip, line) is None
    return out.stdout


def test_remember_files_a_lesson_and_memory_lists_it(ip, own_memory, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)  # no project here
    assert said(ip, "remember Check the data split before tuning") == (
        f"filed lesson 1 in the memory {own_memory} (no project)\n"
    )
    assert said(ip, 'memory add "Adam at 1e-2 diverged" --kind finding') == (
        f"filed finding 2 in the memory {own_memory} (no project)\n"
    )
    frame = ls(ip, "memory")
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(COLUMNS)
    assert frame[["id", "kind", "text", "source"]].to_dict("records") == [
        {"id": 2, "kind": "finding", "text": "Adam at 1e-2 diverged", "source": "researcher"},
        {
            "id": 1,
            "kind": "lesson",
            "text": "Check the data split before tuning",
            "source": "researcher",
        },
    ]
    records = ls(ip, "memory --json")
    assert [(r["id"], r["project"]) for r in records] == [(2, ""), (1, "")]

    hits = ls(ip, "memory search data split")
    assert list(hits["id"]) == [1] and "score" in hits.columns
    assert [r["id"] for r in ls(ip, "memory search diverged --json")] == [2]
    exported = said(ip, "memory export").splitlines()
    assert [json.loads(line)["id"] for line in exported] == [2, 1]


def test_an_entry_is_filed_with_the_session_s_project(ip, fresh_defaults, workspace, small_table):  # noqa: F811
    ResearchController.create(workspace, "find x", mode="manual", table=small_table)
    fresh_defaults.workspace = str(workspace.root)
    assert said(ip, "remember warmup first").endswith(" (project ws)\n")
    assert ls(ip, "memory --json")[0]["project"] == str(workspace.root)


def test_forget_and_bad_input_are_one_line(ip, own_memory, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    said(ip, "remember lr 0.1 needs warmup")
    assert said(ip, "memory forget 1") == "forgot lesson 1: lr 0.1 needs warmup\n"
    with pytest.raises(UsageError) as missing:
        ls(ip, "memory forget 1")
    assert str(missing.value) == (
        f"%lightscientist memory: the memory {own_memory} holds no entry 1 "
        "(`lightscientist memory` lists the entries and their ids)"
    )
    with pytest.raises(UsageError, match=r"^%lightscientist memory search: the following "):
        ls(ip, "memory search")
    with pytest.raises(UsageError, match=r"\(see `%lightscientist help memory`\)$"):
        ls(ip, "memory add x --kind hunch")
    with pytest.raises(UsageError, match="^%lightscientist remember: there is nothing to remember"):
        ls(ip, 'remember ""')


def test_a_memory_that_cannot_be_opened_is_one_line(ip, tmp_path, monkeypatch):  # noqa: F811
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", str(blocker / "memory.sqlite3"))
    for line in ("memory", "remember something"):
        with pytest.raises(UsageError) as refused:
            ls(ip, line)
        message = str(refused.value)
        assert message.startswith(f"%lightscientist {line.split()[0]}: memory {blocker}/")
        assert "\n" not in message and message.endswith("(or a postgresql:// URL)")
