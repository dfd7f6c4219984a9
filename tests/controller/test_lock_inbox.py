"""One runner per workspace (the lock), and replies from other processes (the inbox)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from lightscientist_jupyter._fs import write_text_atomic
from lightscientist_jupyter.app import controls
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.controller.inbox import (
    queued_replies,
    take_commands,
    take_receipt,
    write_command,
    write_reply,
)
from lightscientist_jupyter.controller.inbox_files import Refused, token_path
from lightscientist_jupyter.controller.lock import WorkspaceLock, door, read_holder
from lightscientist_jupyter.errors import ControllerError, WorkspaceLocked
from lightscientist_jupyter.vocab import InboxCommand, ReplySource

HOLD_LOCK = textwrap.dedent("""\
    import sys, time
    from lightscientist_jupyter.controller.lock import WorkspaceLock
    from lightscientist_jupyter.workspace import Workspace
    WorkspaceLock(Workspace.at(sys.argv[1])).acquire("child-run")
    print("locked", flush=True)
    time.sleep(120)
""")

WRITE_REPLIES = textwrap.dedent("""\
    import sys
    from lightscientist_jupyter.controller.inbox import write_reply
    from lightscientist_jupyter.workspace import Workspace
    ws = Workspace.at(sys.argv[1])
    for i in range(int(sys.argv[2])):
        write_reply(ws, approve=True, comment="from afar " + str(i),
                    decision_id=sys.argv[3] or None, source="panel")
""")


@pytest.fixture
def lock_holder(workspace):
    """A child process holding the workspace lock; yields it, always reaped."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(workspace.root)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "locked"
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
        child.stdout.close()


# ------------------------------------------------------------------ the lock


def test_second_acquire_is_refused_naming_the_holder(workspace):
    before = time.time()
    first = WorkspaceLock(workspace).acquire("notebook")
    try:
        assert first.held
        holder = read_holder(workspace)
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        assert holder["purpose"] == "notebook" and before <= holder["since"] <= time.time()
        with pytest.raises(WorkspaceLocked) as info:
            WorkspaceLock(workspace).acquire()
        message = str(info.value)
        assert isinstance(info.value, ControllerError)
        assert f"pid {os.getpid()}" in message and f"on {socket.gethostname()}" in message
        assert "(notebook)" in message and str(workspace.root) in message
        assert first.acquire() is first  # re-acquiring one's own lock is a no-op
    finally:
        first.release()
    assert read_holder(workspace) is None
    with WorkspaceLock(workspace) as second:
        assert second.held
    assert not second.held


def test_lock_held_by_another_process(workspace, lock_holder):
    holder = read_holder(workspace)
    assert holder["pid"] == lock_holder.pid and holder["purpose"] == "child-run"
    with pytest.raises(WorkspaceLocked, match=f"pid {lock_holder.pid} on "):
        WorkspaceLock(workspace).acquire()


def test_lock_left_by_a_dead_process_is_taken_over(workspace, lock_holder):
    assert read_holder(workspace)["pid"] == lock_holder.pid
    os.kill(lock_holder.pid, signal.SIGKILL)
    lock_holder.wait(timeout=10)
    assert read_holder(workspace) is None  # the file is still there, but nobody holds it
    lock = WorkspaceLock(workspace).acquire("take-over")
    try:
        assert read_holder(workspace)["pid"] == os.getpid()
        assert read_holder(workspace)["purpose"] == "take-over"
    finally:
        lock.release()


def test_the_holder_names_the_door_it_came_through(workspace):
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLD_LOCK,
            str(workspace.root),
            "-f",
            "/run/user/1000/jupyter/runtime/kernel-5f0c2d1e-77aa-4b1c-9e8f-0123456789ab.json",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "locked"
        holder = read_holder(workspace)
        assert holder["door"] == "kernel"
        assert holder["kernel"] == "5f0c2d1e-77aa-4b1c-9e8f-0123456789ab"
    finally:
        child.kill()
        child.wait(timeout=10)
        child.stdout.close()
    assert door(["/venv/bin/lightscientist", "research", "goal"]) == {"door": "command line"}
    assert door(["/repo/lightscientist_jupyter/__main__.py", "reply", "y"]) == {
        "door": "command line"
    }
    assert door(["/usr/bin/pytest", "-q"]) == {"door": "program"}


def test_a_reader_never_finds_the_lock_held_without_its_holder(workspace):
    """The lock taken and given back over and over while another thread reads the holder:
    each read names the holder or nobody (a record emptied at release, or not yet written
    at acquire, read as an unknown holder `pid ?` in a reply's answer)."""
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            with WorkspaceLock(workspace):  # a reader's look never refuses it
                pass

    churner = threading.Thread(target=churn)
    churner.start()
    seen = {"held": 0, "free": 0}
    deadline = time.monotonic() + 30  # a loaded machine may starve the churning thread
    try:
        while min(seen.values()) < 300 and time.monotonic() < deadline:
            holder = read_holder(workspace)
            assert holder is None or holder.get("pid") == os.getpid(), holder
            seen["held" if holder else "free"] += 1
    finally:
        stop.set()
        churner.join(timeout=10)
    assert seen["held"] and seen["free"], seen


def test_a_reader_looking_never_refuses_the_lock_a_holder_does(workspace):
    """`read_holder` looks under a shared lock for a moment (the dashboard every second, the
    side panel's server at every poll): a run taking the project meanwhile waits that
    moment out instead of failing as if a process ran it; a holder still refuses it."""
    with WorkspaceLock(workspace):  # the file, as a run before left it
        pass
    reader = os.open(workspace.lock_file, os.O_RDONLY)
    try:
        fcntl.flock(reader, fcntl.LOCK_SH)  # a look that lasts 50 ms
        threading.Timer(0.05, fcntl.flock, (reader, fcntl.LOCK_UN)).start()
        with WorkspaceLock(workspace) as lock:
            assert lock.held
            with pytest.raises(WorkspaceLocked, match=f"being run by pid {os.getpid()}"):
                WorkspaceLock(workspace).acquire()
    finally:
        os.close(reader)


# ------------------------------------------------------------------ atomic files


def test_write_text_atomic_replaces_whole_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "deep" / "file.json"
    write_text_atomic(target, "old")
    write_text_atomic(target, "new content")
    assert target.read_text(encoding="utf-8") == "new content"
    with pytest.raises(TypeError):
        write_text_atomic(target, 123)  # type: ignore[arg-type]  # fails mid-write
    assert target.read_text(encoding="utf-8") == "new content"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


# ------------------------------------------------------------------ the inbox


def waiting_controller(workspace, table, advance) -> ResearchController:
    c = ResearchController.create(workspace, "goal", table=table)
    advance(c)
    advance(c)
    assert c.status == "waiting_user"
    return c


def test_reply_written_by_another_process_is_applied_by_poll(workspace, small_table, advance):
    c = waiting_controller(workspace, small_table, advance)
    decision = c.state.pending.id
    subprocess.run(
        [sys.executable, "-c", WRITE_REPLIES, str(workspace.root), "1", decision],
        check=True,
        timeout=60,
    )
    files = list(workspace.inbox_dir.iterdir())
    assert len(files) == 1 and files[0].suffix == ".json"  # no temporary file left behind
    raw = json.loads(files[0].read_text(encoding="utf-8"))
    assert raw["approve"] is True and raw["decision_id"] == decision
    outcomes = c.poll_inbox()
    assert [o.applied for o in outcomes] == [True]
    assert c.stage == "b" and c.state.decisions[-1]["source"] == "panel"
    assert c.state.decisions[-1]["comment"] == "from afar 0"
    assert list(workspace.inbox_dir.iterdir()) == []
    assert c.poll_inbox() == []


def test_a_queued_reply_waits_on_disk_with_its_comment_redacted(workspace, small_table, advance):
    c = waiting_controller(workspace, small_table, advance)
    key = "ghp_abcdefghijklmnopqrstuvwxyz012345"
    path = write_reply(
        workspace, approve=True, comment=f"use {key}", decision_id=c.state.pending.id
    )
    assert json.loads(path.read_text(encoding="utf-8"))["comment"] == "use [REDACTED]"
    assert [o.applied for o in c.poll_inbox()] == [True]
    assert c.state.decisions[-1]["comment"] == "use [REDACTED]"


def test_of_two_queued_replies_to_one_decision_the_later_counts(workspace, small_table, advance):
    """A reply queued and then corrected (`reply y`, then `reply n` before any run took the
    first) is applied as corrected; the first is dropped, saying why."""
    c = waiting_controller(workspace, small_table, advance)
    decision = c.state.pending.id
    write_reply(
        workspace, approve=True, comment="first", decision_id=decision, source=ReplySource.CLI
    )
    write_reply(
        workspace,
        approve=False,
        comment="second",
        to_stage="a",
        decision_id=decision,
        source=ReplySource.WIDGET,
    )
    first, second = c.poll_inbox()
    assert not first.applied and second.applied
    assert first.message == f"replaced by a later reply to decision {decision}; nothing changed"
    assert c.stage == "a" and len(c.state.decisions) == 1
    assert (c.state.decisions[0]["comment"], c.state.decisions[0]["source"]) == ("second", "widget")
    assert list(workspace.inbox_dir.iterdir()) == []


@pytest.mark.parametrize("source", ["slack-bot", None, 42])
def test_a_queued_reply_naming_an_unknown_door_is_applied_as_from_the_api(
    workspace, small_table, advance, source
):
    """A reply another version (or a hand) queued may name a door outside `ReplySource`, or
    none: it is applied all the same, recorded as from the API (`ReplySource.read`)."""
    c = waiting_controller(workspace, small_table, advance)
    path = write_reply(workspace, approve=True, comment="hi", decision_id=c.state.pending.id)
    raw = json.loads(path.read_text(encoding="utf-8"))
    write_text_atomic(path, json.dumps({**raw, "source": source}))  # as that writer left it
    (outcome,) = c.poll_inbox()
    assert outcome.applied, outcome.message
    assert c.stage == "b" and c.state.decisions[-1]["source"] == "api"
    assert type(c.state.decisions[-1]["source"]) is str  # plain JSON in state.json
    assert "approved by the user via api — “hi”" in workspace.process_md.read_text("utf-8")


def test_invalid_inbox_files_are_set_aside(workspace, small_table, advance):
    c = waiting_controller(workspace, small_table, advance)
    workspace.inbox_dir.mkdir(parents=True, exist_ok=True)
    (workspace.inbox_dir / "0001-garbage.json").write_bytes(b"\xff{not json")
    (workspace.inbox_dir / "0002-not-a-reply.json").write_text('{"hello": 1}', encoding="utf-8")
    (workspace.inbox_dir / "0003-a-list.json").write_text("[1, 2]", encoding="utf-8")
    write_reply(workspace, approve=True, decision_id=c.state.pending.id)
    outcomes = c.poll_inbox()
    assert [o.applied for o in outcomes] == [True]
    assert c.stage == "b"
    assert sorted(p.name for p in workspace.inbox_dir.iterdir()) == [
        "0001-garbage.invalid",
        "0002-not-a-reply.invalid",
        "0003-a-list.invalid",
    ]
    assert c.poll_inbox() == []


def test_reply_with_nothing_pending_is_consumed_with_a_reason(workspace, small_table):
    c = ResearchController.create(workspace, "goal", table=small_table)
    write_reply(workspace, approve=True)
    (outcome,) = c.poll_inbox()
    assert not outcome.applied and "nothing is waiting for a reply" in outcome.message
    assert list(workspace.inbox_dir.iterdir()) == []
    assert c.status == "running"


def test_polling_while_another_process_writes_never_sees_half_a_file(workspace, small_table):
    """Replies land whole: a poll racing the writer never sets a file aside as invalid."""
    c = ResearchController.create(workspace, "goal", table=small_table)
    count = 40
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITE_REPLIES, str(workspace.root), str(count), ""]
    )
    seen = []
    try:
        while writer.poll() is None:
            seen.extend(c.poll_inbox())
    finally:
        writer.wait(timeout=60)
    seen.extend(c.poll_inbox())
    assert writer.returncode == 0
    assert len(seen) == count
    assert all("nothing is waiting" in o.message for o in seen)
    assert not list(workspace.inbox_dir.glob("*.invalid"))
    assert queued_replies(workspace) == []


@pytest.mark.parametrize(
    ("key", "value", "wanted"),
    [
        ("approve", "no", "not true or false"),  # once read as a yes (`bool("no")`)
        ("to_stage", 42, "not text or null"),
        ("budget", "lots", "not an object of name: number"),
        ("receipt", "yes", "not true or false"),
    ],
)
def test_a_queued_reply_with_a_key_of_the_wrong_type_is_refused_naming_file_and_key(
    workspace, small_table, advance, key, value, wanted
):
    """A reply file written by hand (or by another version) whose key has the wrong type is
    not applied: its outcome names the file and the key, the file is kept as `.invalid`, and
    the replies after it are applied."""
    c = waiting_controller(workspace, small_table, advance)
    decision = c.state.pending.id
    faulty = write_reply(workspace, approve=True, decision_id=decision)
    raw = json.loads(faulty.read_text(encoding="utf-8"))
    write_text_atomic(faulty, json.dumps({**raw, key: value}))  # as a hand left it
    write_reply(workspace, approve=True, comment="the real one", decision_id=decision)
    refused, applied = c.poll_inbox()
    assert not refused.applied and applied.applied, applied.message
    assert f"refused the reply in {faulty}: " in refused.message
    assert f"its '{key}' is {json.dumps(value)}, {wanted}" in refused.message
    assert "nothing changed" in refused.message
    assert c.stage == "b" and c.state.decisions[-1]["comment"] == "the real one"
    assert [p.name for p in workspace.inbox_dir.iterdir()] == [faulty.with_suffix(".invalid").name]


def test_a_refused_reply_whose_sender_waits_gets_a_receipt_saying_why(
    workspace, small_table, advance
):
    c = waiting_controller(workspace, small_table, advance)
    path = write_reply(workspace, approve=True, receipt=True, decision_id=c.state.pending.id)
    raw = json.loads(path.read_text(encoding="utf-8"))
    write_text_atomic(path, json.dumps({**raw, "decision_id": 7}))
    (outcome,) = c.poll_inbox()
    assert take_receipt(path) == {"applied": False, "message": outcome.message}
    assert "'decision_id' is 7, not text or null" in outcome.message
    assert c.status == "waiting_user"  # nothing changed


def test_inbox_commands_with_a_key_of_the_wrong_type_are_refused_and_the_run_goes_on(
    workspace, capsys
):
    """A run command written by hand with a key of the wrong type is refused: it comes back
    as a `Refused` naming the file and the key, is kept as `.invalid` (a hand-over step's
    sender hears why through its receipt), and the commands after it are taken and applied."""
    workspace.inbox_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "0001-until.cmd": {"command": "until", "args": {"stage": 42}},
        "0002-args.cmd": {"command": "cancel", "args": ["w1"]},
        "0003-step.cmd": {"command": "handoff", "args": {"step": "jump", "token": "abc123"}},
        "0004-outputs.cmd": {"command": "handoff", "args": {"step": "deliver", "outputs": "a.md"}},
        "0005-token.cmd": {"command": "handoff", "args": {"step": "take", "token": "../../x"}},
    }
    for name, raw in files.items():
        (workspace.inbox_dir / name).write_text(json.dumps(raw), encoding="utf-8")
    write_command(workspace, InboxCommand.STOP)
    *refused, stop = take_commands(workspace)
    assert [type(r) for r in refused] == [Refused] * len(files)
    for r, name, key in zip(
        refused,
        files,
        ["args.stage", "args", "args.step", "args.outputs", "args.token"],
        strict=True,
    ):
        assert r.path == workspace.inbox_dir / name
        assert r.why.startswith(f"refused the '{files[name]['command']}' command in {r.path}: ")
        assert f"its '{key}' is " in r.why and "nothing changed" in r.why
    assert 'its \'args.step\' is "jump", not "take" or "deliver" or "give-back"' in refused[2].why
    assert stop == {"command": "stop", "args": {}}
    assert sorted(p.name for p in workspace.inbox_dir.iterdir()) == sorted(
        [n.replace(".cmd", ".invalid") for n in files] + ["abc123.taken"]
    )
    receipt = take_receipt(token_path(workspace.inbox_dir, "abc123"))
    assert receipt == {"applied": False, "message": refused[2].why}

    stopped = []
    project: Any = SimpleNamespace(stop=lambda: stopped.append(True))
    assert not controls.apply_command(project, refused[0])
    assert capsys.readouterr().err == f"lightscientist: warning: {refused[0].why}\n"
    assert controls.apply_command(project, stop) and stopped
    assert take_commands(workspace) == []
