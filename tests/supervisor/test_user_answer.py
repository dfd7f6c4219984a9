"""A project-level question answered: the answer is the supervisor's next event. Layer 1
sets the project running before the answer reaches layer 2's listener, and a loop that looked
in between saw a running stage with nothing to do, and spent a model call on a `stage_idle`
decision first (about one answer in five here, with the chat server's model). The model is
the tests' chat server; the project, its layers and the reply are real."""

from __future__ import annotations

import json
import threading
import time

import pytest
from conftest import SMALL_TABLE, _write_table
from support.chat_server import ChatServer
from support.real_run import GOAL, asking_scientist
from support.waiting import wait_for

from lightscientist_jupyter import memory
from lightscientist_jupyter.app.project import Project

pytestmark = pytest.mark.slow


def test_an_answer_is_the_next_decision_with_no_idle_one_before_it(tmp_path, monkeypatch):
    monkeypatch.delenv("LIGHTSCIENTIST_MODEL", raising=False)
    table = _write_table(tmp_path / "table", SMALL_TABLE)
    server = ChatServer().answer_with(asking_scientist)

    def slow_reader(event) -> None:
        """An observer that takes its time over the answer's event: the answer reaches the
        supervisor's listener only after it (the window the loop used to look through)."""
        if event.type == "user.decision":
            time.sleep(0.5)

    ws = tmp_path / "ws"
    project = Project.create(
        ws, GOAL, mode="auto", stages=table, model="some-model", base_url=server.base_url,
        subscribers=(slow_reader,),
    )  # fmt: skip
    ended: list[str] = []
    runner = threading.Thread(target=lambda: ended.append(project.run(wait_for_replies=True)))
    runner.start()
    try:
        wait_for(
            lambda: project.controller.pending_kind == "question" or not runner.is_alive(),
            "the supervisor's question",
            within=60,
        )
        assert project.controller.reply(True, "Yes, the larger one.").applied
        runner.join(120)
    finally:
        server.close()
        project.close()
    assert ended == ["done"]
    text = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8")
    kinds = [
        json.loads(line)["data"]["event"]["kind"]
        for line in text.splitlines()
        if '"type":"supervisor.event"' in line
    ]
    assert kinds[:2] == ["stage_started", "user_answered"], kinds
    assert "stage_idle" not in kinds
    # at its end a worker drew the lessons (through the real client) and layer 1 filed them
    store = memory.open_store()
    try:
        lessons = store.entries(kinds=["lesson"])
    finally:
        store.close()
    assert [e.text for e in reversed(lessons)] == [
        "Writing every output before running the check command kept each stage to one visit.",
        "The larger data set was worth asking about before stage a started.",
    ]
    assert {(e.project, e.source) for e in lessons} == {(str(ws), "worker")}
