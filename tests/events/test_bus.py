"""EventBus: numbering, fan-out, failing subscribers, many publishing threads."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
import time
from pathlib import Path

import pytest

import lightscientist_jupyter
from lightscientist_jupyter.events import EVENT_TYPES, Event, EventBus, JsonlWriter
from lightscientist_jupyter.vocab import EventType

PACKAGE = Path(lightscientist_jupyter.__file__).parent
LAYER_PACKAGES = {1: "controller", 2: "supervisor", 3: "runtime"}
"""Where each layer's code lives: the layer an event is filed under must be the one emitting it."""


def _layer_sources() -> dict[int, str]:
    return {
        layer: "\n".join(
            p.read_text(encoding="utf-8") for p in sorted((PACKAGE / folder).rglob("*.py"))
        )
        for layer, folder in LAYER_PACKAGES.items()
    }


def test_each_event_type_is_emitted_by_the_layer_it_is_filed_under():
    """`--layer 2` must show what the supervisor did: every type of the vocabulary is emitted by
    the code of exactly the layer it is filed under, and no layer emits a type outside it
    (such an event would be logged with layer 0 and hidden by every layer filter)."""
    sources = _layer_sources()
    for type_ in EventType:  # the whole vocabulary: a type filed under no layer is caught too
        layer = EVENT_TYPES.get(type_)
        mention = re.compile(rf"EventType\.{type_.name}\b|[\"']{re.escape(type_)}[\"']")
        emitters = {n for n, text in sources.items() if mention.search(text)}
        assert emitters == {layer}, f"{type_} is filed under layer {layer}, emitted by {emitters}"
    literal = re.compile(r"\.emit\(\s*[\"']([^\"']+)[\"']")
    emitted = {t for text in sources.values() for t in literal.findall(text)}
    assert emitted <= set(EVENT_TYPES), emitted - set(EVENT_TYPES)


def test_emit_numbers_and_stamps_events():
    bus = EventBus(next_seq=7, task_id="idea.survey#1")
    got: list[Event] = []
    bus.subscribe(got.append)
    before = time.time()
    first = bus.emit("stage.start", "go", stage="idea.survey")
    second = bus.emit("tool.call", "ls", worker_id="w-1", task_id="other", data={"n": 1})
    third = bus.emit("custom.thing", "x", layer=2)
    assert got == [first, second, third]
    assert [e.seq for e in got] == [7, 8, 9] and bus.next_seq == 10
    assert (first.layer, second.layer, third.layer) == (1, 3, 2)
    assert first.task_id == "idea.survey#1" and second.task_id == "other"
    assert second.worker_id == "w-1" and second.data == {"n": 1} and first.data == {}
    assert before <= first.ts <= second.ts <= time.time()


def test_event_round_trips_and_is_frozen():
    bus = EventBus()
    event = bus.emit("user.decision", "approved", stage="idea.gate", data={"approve": True})
    raw = event.to_dict()
    assert json.loads(json.dumps(raw)) == raw
    assert Event.from_dict(raw) == event
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seq = 3  # type: ignore[misc]


def test_unsubscribe():
    bus = EventBus()
    got: list[Event] = []
    unsubscribe = bus.subscribe(got.append)
    bus.emit("stage.start")
    unsubscribe()
    unsubscribe()  # twice is harmless
    bus.emit("stage.start")
    assert [e.seq for e in got] == [1]


def test_failing_subscriber_is_reported_once_and_others_still_receive(caplog):
    bus = EventBus()
    before: list[Event] = []
    after: list[Event] = []

    def broken(event: Event) -> None:
        raise RuntimeError(f"widget gone at {event.seq}")

    bus.subscribe(before.append)
    bus.subscribe(broken)
    bus.subscribe(after.append)
    with caplog.at_level(logging.WARNING, logger="lightscientist_jupyter.events.bus"):
        events = [bus.emit("worker.status", f"tick {i}") for i in range(4)]
    assert before == events and after == events
    assert len(bus.failures) == 1
    subscriber, exc = bus.failures[0]
    assert subscriber is broken and str(exc) == "widget gone at 1"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "widget gone at 1" in warnings[0].getMessage()


def test_two_failing_subscribers_are_each_reported_once():
    bus = EventBus()

    def one(event: Event) -> None:
        raise ValueError("one")

    def two(event: Event) -> None:
        raise KeyError("two")

    bus.subscribe(one)
    bus.subscribe(two)
    for _ in range(3):
        bus.emit("stage.start")
    assert [s for s, _ in bus.failures] == [one, two]


def test_many_threads_publishing_at_once(tmp_path):
    path = tmp_path / "events.jsonl"
    threads_n, per_thread = 8, 400
    barrier = threading.Barrier(threads_n)
    with JsonlWriter(path) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)

        def publish(t: int) -> None:
            barrier.wait()
            for i in range(per_thread):
                bus.emit(
                    "tool.call",
                    f"t{t} call {i}",
                    worker_id=f"w-{t}",
                    data={"thread": t, "i": i, "pad": "x" * (i % 50)},
                )

        threads = [threading.Thread(target=publish, args=(t,)) for t in range(threads_n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert writer.next_seq == threads_n * per_thread + 1

    lines = path.read_bytes().decode("utf-8").split("\n")
    assert lines[-1] == ""
    records = [json.loads(line) for line in lines[:-1]]
    assert [r["seq"] for r in records] == list(range(1, threads_n * per_thread + 1))
    for t in range(threads_n):
        mine = [r["data"]["i"] for r in records if r["data"]["thread"] == t]
        assert mine == list(range(per_thread))
