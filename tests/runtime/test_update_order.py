"""The recorded order of layer 2's updates, read from a real recording file by `Tape`, and how
a replay goes along it (`runtime.recording.update_order`)."""

from __future__ import annotations

from pathlib import Path

from lightscientist_jupyter.runtime.recording.forms import view_hash
from lightscientist_jupyter.runtime.recording.recorded import Tape
from lightscientist_jupyter.runtime.recording.seal import Chain

RUN = {"kind": "run", "v": 3, "model": "x", "price": None}


def call(session: str, index: int, message: str, role: str = "worker") -> dict:
    view = {"role": "human", "content": message}
    digest = view_hash(view)
    return {
        "kind": "call", "session": session, "call": index, "role": role, "messages": [digest],
        "tools": [], "response": {"content": "ok", "tool_calls": [], "usage": None},
        "defs": {digest: view},
    }  # fmt: skip


def update(session: str, status: str = "completed") -> dict:
    return {"kind": "update", "session": session, "worker": "w9", "stage": "s", "status": status}


def tape_of(tmp_path: Path, lines: list[dict]) -> Tape:
    path = tmp_path / "run-0001.jsonl"
    chain = Chain()
    path.write_bytes(b"".join(chain.seal(line) for line in [RUN, *lines]))
    return Tape.load(str(path))


def probes(tmp_path: Path) -> Tape:
    """Two probes started in one supervisor call; layer 2 took in probe 1's end, the
    supervisor decided on it, then took in probe 2's end."""
    return tape_of(
        tmp_path,
        [
            call("supervisor/0", 0, "stage started", "supervisor"),
            call("worker/s/0", 0, "probe c1"),
            call("worker/s/1", 0, "probe c2"),
            update("worker/s/0"),
            call("supervisor/0", 1, "probe c1 finished", "supervisor"),
            update("worker/s/1"),
            call("supervisor/0", 2, "probe c2 finished", "supervisor"),
        ],
    )


def test_an_update_waits_for_the_updates_and_supervisor_calls_recorded_before_it(tmp_path):
    order = probes(tmp_path).order
    assert order is not None
    assert not order.admits("worker/s/0")  # the supervisor's first call is not answered yet
    order.answered("worker/s/0", 0)  # a worker's call is no step of the order
    assert order.due() is None
    order.answered("supervisor/0", 0)
    assert order.due() == "worker/s/0"  # no event is taken before it
    assert not order.admits("worker/s/1")  # came early: it waits
    assert order.admits("worker/s/0")
    order.took("worker/s/0")
    assert order.due() is None  # the supervisor decides next
    assert not order.admits("worker/s/1")
    order.answered("supervisor/0", 1)
    assert order.admits("worker/s/1")
    order.took("worker/s/1")
    assert order.admits("worker/s/2")  # a session the recording holds no update of


def test_sessions_matched_across_are_ordered_by_their_recorded_session(tmp_path):
    tape = probes(tmp_path)
    order = tape.order
    assert order is not None
    # the live worker/s/1 asked what the recorded worker/s/0 was asked (ids came swapped)
    tape.match("worker/s/1", 0, tape.sessions["worker/s/0"][0]["messages"])
    order.answered("supervisor/0", 0)
    assert order.admits("worker/s/1") and order.recorded("worker/s/1") == "worker/s/0"


def test_an_update_that_cannot_come_is_passed_over_and_a_resumed_replay_catches_up(tmp_path):
    order = probes(tmp_path).order
    assert order is not None
    order.answered("supervisor/0", 0)
    order.skip()  # probe 1 will not send it (its worker failed before, say)
    assert order.due() is None
    order = probes(tmp_path).order
    assert order is not None
    order.catch_up("worker/s/1")  # a new process, past calls it did not answer
    assert order.admits("worker/s/1")


def test_a_recording_without_update_lines_has_no_order(tmp_path):
    tape = tape_of(tmp_path, [call("supervisor/0", 0, "stage started", "supervisor")])
    assert tape.order is None
