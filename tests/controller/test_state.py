"""state.py: state.json round-trips, is replaced atomically, and a bad file names itself."""

from __future__ import annotations

import errno
import json
import os

import pytest

from lightscientist_jupyter import _fs
from lightscientist_jupyter.controller.state import (
    PendingDecision,
    ProjectState,
    load_state,
    save_state,
)
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.vocab import DecisionKind, Mode, ProjectStatus


def waiting_state() -> ProjectState:
    """A state with every field set: a gate waits after one loop and one answered question."""
    pending = PendingDecision(
        id="d2",
        kind=DecisionKind.GATE,
        stage="idea.gate",
        question="Approve 'idea.gate'?",
        summary="Idea 2 wins.",
        outputs=("idea/brief.md",),
        proposed_next="experiment.setup",
        default_reject="idea.evaluate",
        requested_at=12.5,
    )
    return ProjectState(
        goal="Does warmup help?",
        mode=Mode.MANUAL,
        stage="idea.gate",
        stages_file="/flows/research.toml",
        status=ProjectStatus.WAITING_USER,
        visits={"idea.survey": 1, "idea.gate": 1},
        history=[
            {"from": None, "to": "idea.survey", "by": "start", "at": 1.0},
            {"from": "idea.survey", "to": "idea.gate", "by": "finish", "at": 2.0},
        ],
        pending=pending,
        decisions=[
            {
                "id": "d1",
                "kind": "question",
                "stage": "idea.survey",
                "question": "GPU?",
                "approve": True,
                "comment": "",
                "to": None,
                "at": 1.5,
                "source": "cli",
            }
        ],
        feedback="The reviewer rejected 'idea.gate': more ideas.",
        last_summary={"idea.survey": "Read 12 papers."},
        created_at=1.0,
        decision_counter=2,
        settings={"model": "offline"},
    )


@pytest.fixture
def state_file(tmp_path):
    return tmp_path / ".lightscientist" / "state.json"


def test_a_saved_state_loads_back_equal(state_file):
    state = waiting_state()
    save_state(state_file, state)
    loaded = load_state(state_file)
    assert loaded == state
    assert loaded.status is ProjectStatus.WAITING_USER and loaded.mode is Mode.MANUAL
    assert loaded.pending is not None and loaded.pending.kind is DecisionKind.GATE
    assert loaded.pending.outputs == ("idea/brief.md",)
    assert loaded.task_id == "idea.gate#1"


def test_the_file_is_plain_json(state_file):
    save_state(state_file, waiting_state())
    raw = json.loads(state_file.read_text(encoding="utf-8"))
    assert raw["v"] == 1
    assert (raw["status"], raw["mode"], raw["pending"]["kind"]) == (
        "waiting_user",
        "manual",
        "gate",
    )
    assert raw["pending"]["outputs"] == ["idea/brief.md"] and raw["pending"]["options"] == []
    assert raw["visits"] == {"idea.survey": 1, "idea.gate": 1}


def test_saving_stamps_the_time(state_file):
    state = waiting_state()
    state.updated_at = 0.0
    save_state(state_file, state)
    assert state.updated_at > 0 and load_state(state_file).updated_at == state.updated_at


def test_keys_a_later_version_adds_are_ignored(state_file):
    state = waiting_state()
    save_state(state_file, state)
    raw = json.loads(state_file.read_text(encoding="utf-8"))
    raw["from_the_future"] = {"x": 1}
    raw["pending"]["also_new"] = True
    state_file.write_text(json.dumps(raw), encoding="utf-8")
    assert load_state(state_file) == state


def test_a_failed_write_leaves_the_previous_file(state_file, monkeypatch):
    """The disk fills up while the new state is written: the old state stays whole."""
    first = waiting_state()
    save_state(state_file, first)
    before = state_file.read_bytes()

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_fs.os, "fsync", disk_full)
    later = waiting_state()
    later.stage, later.status, later.pending = "experiment.setup", ProjectStatus.RUNNING, None
    with pytest.raises(OSError, match="No space left"):
        save_state(state_file, later)
    monkeypatch.undo()

    assert state_file.read_bytes() == before
    assert load_state(state_file).stage == "idea.gate"
    assert sorted(os.listdir(state_file.parent)) == ["state.json"]  # no temporary file left


def test_a_state_that_is_not_json_is_not_written(state_file):
    save_state(state_file, waiting_state())
    before = state_file.read_bytes()
    bad = waiting_state()
    bad.settings = {"model": object()}
    with pytest.raises(TypeError):
        save_state(state_file, bad)
    assert state_file.read_bytes() == before
    assert sorted(os.listdir(state_file.parent)) == ["state.json"]


# --------------------------------------------------------------------------- bad files


def test_no_file_says_there_is_no_project_and_how_to_start(state_file):
    with pytest.raises(ControllerError) as err:
        load_state(state_file)
    message = str(err.value)
    assert f"no LightScientist project in {state_file.parent.parent}" in message
    assert f"({state_file} does not exist)" in message
    assert message.endswith('start one there with `research "<goal>"`, or name a project\'s '
                            "folder with --workspace")  # fmt: skip


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "is not valid JSON"),
        (b"\xff\xfe\x00garbage", "is not valid JSON"),
        (b"[1, 2]", "holds list, not a project state"),
        (b'{"goal": "g", "stage": "a"}', "lacks key(s) mode, stages_file, status"),
        (
            b'{"goal": "g", "mode": "auto", "stage": "a", "stages_file": "t.toml"}',
            "lacks key(s) status",
        ),
        (
            b'{"goal": "g", "mode": "sometimes", "stage": "a", "stages_file": "t.toml", '
            b'"status": "done"}',
            "key 'mode' should be one of auto, manual, not \"sometimes\"",
        ),
        (
            b'{"goal": "g", "mode": "auto", "stage": "a", "stages_file": "t.toml", '
            b'"status": "sleeping"}',
            "key 'status' should be one of running, waiting_user, done, failed, cancelled, "
            'stopped, paused, not "sleeping"',
        ),
        (
            b'{"goal": "g", "mode": "auto", "stage": "a", "stages_file": "t.toml", '
            b'"status": "done", "pending": {"id": "d1", "kind": "poll", "stage": "a", '
            b'"question": "?"}}',
            "key 'pending' should be null or an object with id, kind, stage and question",
        ),
        (
            b'{"goal": "g", "mode": "auto", "stage": "a", "stages_file": "t.toml", '
            b'"status": "done", "visits": ["a", 1]}',
            """key 'visits' should be an object of stage -> integer, not ["a", 1]""",
        ),
        (
            b'{"goal": "g", "mode": "auto", "stage": "a", "stages_file": "t.toml", '
            b'"status": "done", "visits": {"a": "3"}}',
            """key 'visits' should be an object of stage -> integer, not {"a": "3"}""",
        ),
        (
            b'{"goal": 42, "mode": "auto", "stage": "a", "stages_file": "t.toml", '
            b'"status": "done"}',
            "key 'goal' should be a string, not 42",
        ),
        (
            b'{"goal": "g", "mode": "auto", "stage": "a", "stages_file": "t.toml", '
            b'"status": "done", "history": "none", "updated_at": "yesterday"}',
            "key 'history' should be a list of objects, not \"none\"",
        ),
    ],
    ids=[
        "broken json",
        "not utf-8",
        "not an object",
        "missing keys",
        "no status",
        "unknown mode",
        "unknown status",
        "unknown decision kind",
        "visits a list",
        "a visit count a string",
        "goal a number",
        "history a string",
    ],
)
def test_a_bad_file_is_named_with_its_problem(state_file, content, problem):
    state_file.parent.mkdir(parents=True)
    state_file.write_bytes(content)
    with pytest.raises(ControllerError) as err:
        load_state(state_file)
    message = str(err.value)
    assert message.startswith(str(state_file)) and problem in message
    if problem.startswith("key "):  # the file, the key, the expected type — and the remedy
        assert "fix that key in the file or restore the file from a backup" in message
