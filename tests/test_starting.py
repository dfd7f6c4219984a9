"""A project a kernel has started exists from the moment `start` returns: `starting`.

`%lightscientist research` returns at once and the project is created on the run's thread, a
second or more later (LangGraph and the model provider are imported, the model is checked).
Until then every other door says `starting` — the command line's `status`, the side panel's
project list — instead of "no project". Here the model check is held by the test's model
server, so that moment lasts as long as the test needs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.chat_server import ChatServer, tool_call

from lightscientist_jupyter import api
from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app.starting_mark import mark_starting
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.jupyter.server.data import list_projects, project_detail
from lightscientist_jupyter.jupyter.server.paths import Refused
from lightscientist_jupyter.workspace import Workspace

GOAL = "Does warmup help?"


def status_line(ws: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", "status", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_a_started_project_is_starting_until_its_state_is_written(tmp_path):
    held = threading.Event()
    release = threading.Event()
    chat = ChatServer()

    def decide(body):
        held.set()
        release.wait(60)
        return tool_call("report_word", word="ready")

    chat.answer_with(decide)
    ws = tmp_path / "project"
    run = api.start(GOAL, ws, mode="manual", model="tiny", base_url=chat.base_url)
    try:
        assert held.wait(60), "the run never checked its model"
        assert not (ws / ".lightscientist" / "state.json").exists()  # not created yet
        lines = status_line(ws)
        assert lines[0] == f"goal:    {GOAL}"
        assert lines[-1] == "starting"
        assert f"process {os.getpid()} is creating the project" in "\n".join(lines)
        (row,) = list_projects(tmp_path)["projects"]
        assert row["path"] == "project" and row["status"] == "starting"
        assert row["goal"] == GOAL and not any(row["actions"].values())
        with pytest.raises(Refused) as refused:
            project_detail(tmp_path, "project")
        assert refused.value.status == 409 and "is starting" in refused.value.message
    finally:
        release.set()
    mark = ws / ".lightscientist" / "starting.json"
    deadline = time.monotonic() + 60
    while mark.exists() and time.monotonic() < deadline:  # created: the mark goes
        time.sleep(0.05)
    try:
        assert not mark.exists()
        assert commands.status(Workspace.at(ws))["status"] in ("running", "waiting_user")
        (row,) = list_projects(tmp_path)["projects"]
        assert row["status"] != "starting"
    finally:
        run.stop()
        chat.close()


def test_a_creation_that_fails_leaves_the_folder_as_it_was(tmp_path):
    chat = ChatServer()
    chat.answer_with(lambda body: {"text": "Sure! (no tool call)"})
    ws = tmp_path / "project"
    run = api.start(GOAL, ws, mode="manual", model="tiny", base_url=chat.base_url)
    try:
        with pytest.raises(Exception, match="answered in text instead of calling a tool"):
            run.wait(timeout=60)
        assert not ws.exists()  # neither the project nor the mark of its start
        with pytest.raises(BadInput, match="no LightScientist project"):
            commands.status(Workspace.at(ws))
    finally:
        chat.close()


def test_the_mark_of_a_kernel_that_died_is_no_project(tmp_path):
    ws = Workspace.at(tmp_path / "project")
    mark_starting(ws, GOAL, "manual")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], text=True, capture_output=True
    ).stdout.strip()
    mark = json.loads(ws.starting_file.read_text())
    ws.starting_file.write_text(json.dumps({**mark, "pid": int(dead)}))
    with pytest.raises(BadInput, match="no LightScientist project"):
        commands.status(ws)
    assert list_projects(tmp_path)["projects"] == []
