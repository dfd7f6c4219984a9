"""A bus that writes to a workspace's event log: the one place the two are wired together.

Every process that changes a project (a run, a cancel from the command line, a reply applied
by the server) emits through an `EventLog`: an `EventBus` whose first subscriber is the
append-only JSONL writer, continuing the log's `seq`, plus any live subscribers (the terminal
printer, the notebook's buffer).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lightscientist_jupyter.events.bus import EventBus, Subscriber
from lightscientist_jupyter.events.jsonl import JsonlWriter


class EventLog:
    """An `EventBus` logging to `path` (created with its folder), open until `close`."""

    def __init__(self, path: Path, subscribers: Iterable[Subscriber] = ()):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = JsonlWriter(path)
        self.bus = EventBus(next_seq=self.writer.next_seq)
        self.bus.subscribe(self.writer)
        for subscriber in subscribers:
            self.bus.subscribe(subscriber)

    def close(self) -> None:
        """Stop logging: events emitted later (by threads still stopping) are not written."""
        self.bus.unsubscribe(self.writer)
        self.writer.close()

    def __enter__(self) -> EventBus:
        return self.bus

    def __exit__(self, *exc: object) -> None:
        self.close()
