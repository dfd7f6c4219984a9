"""The append-only event log: repair on open, seq continuity, tail reads, following."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lightscientist_jupyter.events import (
    EventBus,
    JsonlWriter,
    follow,
    iter_events,
    make_filter,
    read_tail,
)
from lightscientist_jupyter.events.event import SCHEMA_VERSION


def log_with(path: Path, count: int) -> None:
    """Write `count` real events (seq 1..count) through a bus and a writer."""
    with JsonlWriter(path) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        for i in range(count):
            bus.emit("stage.start", f"event {i + 1}", stage="idea.survey")


def lines_of(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def test_each_event_is_one_json_line(tmp_path):
    path = tmp_path / ".lightscientist" / "events.jsonl"
    log_with(path, 3)
    records = lines_of(path)
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert set(records[0]) == {
        "v",
        "seq",
        "ts",
        "layer",
        "type",
        "message",
        "task_id",
        "worker_id",
        "stage",
        "data",
    }
    assert records[0]["v"] == SCHEMA_VERSION and records[0]["layer"] == 1
    assert records[2]["message"] == "event 3"


def test_reopening_continues_seq(tmp_path):
    path = tmp_path / "events.jsonl"
    log_with(path, 3)
    log_with(path, 2)
    assert [r["seq"] for r in lines_of(path)] == [1, 2, 3, 4, 5]


def test_empty_or_new_log_starts_at_one(tmp_path):
    path = tmp_path / "events.jsonl"
    with JsonlWriter(path) as writer:
        assert writer.next_seq == 1
    assert path.read_bytes() == b""
    with JsonlWriter(path) as writer:
        assert writer.next_seq == 1


def test_torn_last_line_is_cut_back_and_seq_continues(tmp_path):
    path = tmp_path / "events.jsonl"
    log_with(path, 3)
    good = path.read_bytes()
    with path.open("ab") as fh:
        fh.write(b'{"v": 1, "seq": 4, "ts": 17000.5, "layer": 1, "type": "stage.fi')
    with JsonlWriter(path) as writer:
        assert writer.next_seq == 4
        assert path.read_bytes() == good
    log_with(path, 2)
    assert [r["seq"] for r in lines_of(path)] == [1, 2, 3, 4, 5]


def test_several_bad_lines_at_the_end_are_cut_back(tmp_path):
    path = tmp_path / "events.jsonl"
    log_with(path, 2)
    good = path.read_bytes()
    with path.open("ab") as fh:
        fh.write(b'not json\n{"seq": "three"}\n\xff\xfe\n{"v":1,"seq":')
    with JsonlWriter(path) as writer:
        assert writer.next_seq == 3
    assert path.read_bytes() == good


def test_good_last_record_missing_only_its_newline(tmp_path):
    path = tmp_path / "events.jsonl"
    log_with(path, 3)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    with JsonlWriter(path) as writer:
        assert writer.next_seq == 4
    assert path.read_bytes().endswith(b"}\n")
    log_with(path, 1)
    assert [r["seq"] for r in lines_of(path)] == [1, 2, 3, 4]


def test_torn_line_after_more_than_one_block(tmp_path):
    """Repair reads backwards in blocks; a log bigger than a block repairs the same way."""
    path = tmp_path / "events.jsonl"
    log_with(path, 1500)
    assert path.stat().st_size > 2 * 64 * 1024
    with path.open("ab") as fh:
        fh.write(b'{"v": 1, "seq": 1501, "message": "half')
    with JsonlWriter(path) as writer:
        assert writer.next_seq == 1501
    assert [r["seq"] for r in lines_of(path)] == list(range(1, 1501))


# ------------------------------------------------------------------ reading the tail

LAYER_TYPES = {1: "stage.start", 2: "worker.status", 3: "tool.call"}


def synthetic(seq: int) -> dict:
    layer = 1 + seq % 3
    return {
        "v": 1,
        "seq": seq,
        "ts": 1_700_000_000 + seq,
        "layer": layer,
        "type": LAYER_TYPES[layer],
        "message": f"m{seq}",
        "task_id": None,
        "worker_id": f"w-{seq % 5}",
        "stage": "experiment.loop",
        "data": {},
    }


GARBAGE = b'\xff\xfe\x00 this is not an event log {"seq": ' * 20_000  # ~1 MB, no newline


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> Path:
    """Garbage bytes first (a whole-file JSON parse chokes on them), then 200,000 events."""
    path = tmp_path_factory.mktemp("events") / "events.jsonl"
    body = "".join(
        json.dumps(synthetic(seq), separators=(",", ":")) + "\n" for seq in range(1, 200_001)
    )
    path.write_bytes(GARBAGE + b"\n" + body.encode("utf-8"))
    return path


def bytes_read_by_this_process() -> int:
    """`rchar` of /proc/self/io: bytes this process has read so far (Linux)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/io has no rchar line")


def test_read_tail_returns_the_last_n(big_log):
    tail = read_tail(big_log, 5)
    assert [r["seq"] for r in tail] == [199_996, 199_997, 199_998, 199_999, 200_000]
    assert tail[-1] == synthetic(200_000)


def test_read_tail_reads_only_the_end_of_a_large_file(big_log):
    size = big_log.stat().st_size
    assert size > 20 * 1024 * 1024
    before = bytes_read_by_this_process()
    tail = read_tail(big_log, 50)
    read = bytes_read_by_this_process() - before
    assert [r["seq"] for r in tail] == list(range(199_951, 200_001))
    assert read < 512 * 1024, f"read {read} bytes of a {size}-byte log for 50 events"


def test_read_tail_with_filters(big_log):
    layer_one = read_tail(big_log, 3, make_filter(layer=1))
    assert [r["seq"] for r in layer_one] == [199_992, 199_995, 199_998]
    assert {r["type"] for r in layer_one} == {"stage.start"}
    tools = read_tail(big_log, 2, make_filter(type="tool.call"))
    assert [r["seq"] for r in tools] == [199_997, 200_000]
    prefix = read_tail(big_log, 2, make_filter(type="worker."))
    assert [r["seq"] for r in prefix] == [199_996, 199_999]
    star = read_tail(big_log, 2, make_filter(type="worker*"))
    assert star == prefix
    worker = read_tail(big_log, 2, make_filter(worker_id="w-0"))
    assert [r["seq"] for r in worker] == [199_995, 200_000]
    both = read_tail(big_log, 1, make_filter(layer=2, worker_id="w-4"))
    assert [r["seq"] for r in both] == [199_999]
    assert read_tail(big_log, 3, make_filter(type="stage.")) == layer_one


def test_read_tail_since_reads_only_the_lines_after_a_time(big_log):
    stages = read_tail(big_log, 10, make_filter(type="stage.start"), since=1_700_000_000 + 199_990)
    assert [r["seq"] for r in stages] == [199_992, 199_995, 199_998]
    before = bytes_read_by_this_process()
    assert read_tail(big_log, 1, make_filter(type="no.such"), since=1_700_000_000 + 199_950) == []
    assert bytes_read_by_this_process() - before < 512 * 1024  # it stopped, found nothing


def test_read_tail_after(big_log):
    new = read_tail(big_log, 100, after=199_990)
    assert [r["seq"] for r in new] == list(range(199_991, 200_001))
    limited = read_tail(big_log, 3, after=199_990)
    assert [r["seq"] for r in limited] == [199_998, 199_999, 200_000]
    filtered = read_tail(big_log, 100, make_filter(layer=3), after=199_990)
    assert [r["seq"] for r in filtered] == [199_991, 199_994, 199_997, 200_000]
    assert read_tail(big_log, 100, after=200_000) == []


def test_read_tail_edge_cases(tmp_path):
    assert read_tail(tmp_path / "missing.jsonl", 5) == []
    path = tmp_path / "events.jsonl"
    log_with(path, 3)
    assert read_tail(path, 0) == []
    assert [r["seq"] for r in read_tail(path, 10)] == [1, 2, 3]
    with path.open("ab") as fh:
        fh.write(b'{"torn": ')
    assert [r["seq"] for r in read_tail(path, 2)] == [2, 3]


def test_read_tail_of_a_record_longer_than_a_block(tmp_path):
    path = tmp_path / "events.jsonl"
    with JsonlWriter(path) as writer:
        bus = EventBus()
        bus.subscribe(writer)
        bus.emit("model.output", "x" * 200_000, data={"text": "y" * 150_000})
        bus.emit("tool.call", "small")
    first, second = read_tail(path, 2)
    assert len(first["message"]) == 200_000 and first["data"]["text"] == "y" * 150_000
    assert second["message"] == "small"


def test_iter_events_skips_torn_and_foreign_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    log_with(path, 2)
    with path.open("ab") as fh:
        fh.write(b"garbage\n[1, 2]\n")
    log_with(path, 0)  # reopening repairs: the foreign tail is cut back
    with path.open("ab") as fh:
        fh.write(b'{"seq": 3, "v": 1}\n{"half')
    assert [r["seq"] for r in iter_events(path)] == [1, 2, 3]
    assert list(iter_events(tmp_path / "missing.jsonl")) == []


def test_follow_yields_new_events_until_stopped(tmp_path):
    path = tmp_path / "events.jsonl"
    log_with(path, 2)
    writer = JsonlWriter(path)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    calls = []

    def stop() -> bool:
        calls.append(1)
        if len(calls) == 1:  # something new arrives while following
            bus.emit("worker.created", "w-1 created", worker_id="w-1")
            bus.emit("tool.call", "ls", worker_id="w-1")
            return False
        return True

    try:
        seen = list(follow(path, after=1, stop=stop, poll=0.01))
        assert [r["seq"] for r in seen] == [2, 3, 4]
        only_tools = list(
            follow(path, after=0, keep=make_filter(layer=3), stop=lambda: True, poll=0.01)
        )
        assert [r["type"] for r in only_tools] == ["tool.call"]
    finally:
        writer.close()
