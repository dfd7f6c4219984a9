"""The JSONL writer's fast encoding path writes exactly what `json.dumps` writes.

`jsonl._encode` formats the fixed fields itself and sends only `data` through a reused C
encoder; `_encode_reference` is the format's definition. Events of every shape — odd types,
non-ASCII and control characters, non-finite numbers, unencodable data — must give the same
bytes, or the same exception type, on both paths.
"""

from __future__ import annotations

import enum
import random
import string

import pytest

from lightscientist_jupyter.events import EventBus, JsonlWriter, read_tail
from lightscientist_jupyter.events.event import Event
from lightscientist_jupyter.events.jsonl import _encode, _encode_reference


class _Obj:
    def __str__(self) -> str:
        return "obj!"


class _StrEnum(str, enum.Enum):  # noqa: UP042 - the str mixin's str() differs: tested
    A = "a"


def _outcome(fn, event):
    try:
        return fn(event)
    except Exception as exc:  # noqa: BLE001 - the exception type is what is compared
        return type(exc)


def _random_events(n: int):
    rnd = random.Random(8)
    alphabet = string.printable + "é✓\u2028\u2029\x00\x1f\x7f😀"

    def text() -> str:
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))

    def value(depth: int = 0):
        kinds = [
            text,
            lambda: rnd.randint(-(10**20), 10**20),
            lambda: rnd.random() * 10 ** rnd.randint(-300, 300),
            lambda: None,
            lambda: rnd.random() < 0.5,
            lambda: float("nan"),
            lambda: -0.0,
            _Obj,
            lambda: [value(depth + 1) for _ in range(rnd.randint(0, 3))],
            lambda: {text(): value(depth + 1) for _ in range(rnd.randint(0, 3))},
        ]
        return rnd.choice(kinds[:8] if depth > 2 else kinds)()

    for i in range(n):
        yield Event(
            seq=rnd.choice([i, i, True]),
            ts=rnd.choice([rnd.random() * 2e9, round(rnd.random() * 2e9, 6), 5, float("inf")]),
            layer=rnd.choice([1, 2, 3]),
            type=rnd.choice(["tool.call", _StrEnum.A, text()]),
            message=rnd.choice([text(), text(), _Obj()]),
            task_id=rnd.choice([None, text(), 5]),
            worker_id=rnd.choice([None, text()]),
            stage=rnd.choice([None, text(), _StrEnum.A]),
            data=rnd.choice(
                [
                    {text(): value() for _ in range(3)},
                    {},
                    {1: "x", 2.5: None, None: 1, False: 2},
                    {(1, 2): 3},
                ]
            ),
        )


def test_fast_encoding_matches_json_dumps_byte_for_byte():
    for event in _random_events(4000):
        assert _outcome(_encode, event) == _outcome(_encode_reference, event), event


def test_circular_data_fails_as_json_dumps_does():
    data: dict = {}
    data["self"] = data
    event = Event(seq=1, ts=1.0, layer=1, type="t", data=data)
    with pytest.raises(ValueError, match="Circular"):
        _encode(event)


def test_bus_and_writer_still_write_one_whole_line_per_event(tmp_path):
    path = tmp_path / "events.jsonl"
    with JsonlWriter(path) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        for i in range(50):
            bus.emit("tool.result", f"é {i}\n", worker_id="w1", data={"i": i, "x": "\u2028"})
            # written and readable as soon as emit returns: no buffering
            assert read_tail(path, 1)[0]["seq"] == i + 1
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 51
    events = read_tail(path, 100)
    assert [e["data"]["i"] for e in events] == list(range(50))
    assert all(len(repr(e["ts"]).split(".")[-1]) <= 6 for e in events)
