"""A thread-safe fan-out of events to subscribers.

The bus numbers events (`seq`) and hands each one, in order, to every subscriber: the JSONL
writer, the terminal printer, the notebook widgets. Delivery happens under one lock so that
the log is written in sequence order even when several threads publish at once; subscribers
must therefore be quick (append to a file or a deque). A subscriber that raises is reported
once through `logging` and keeps receiving events: observation never breaks the observed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter._faults import report_storage_fault
from lightscientist_jupyter.events.event import EVENT_TYPES, Event

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]


class EventBus:
    """Numbers events and delivers them to subscribers.

    Args:
        next_seq: the sequence number of the next event (continue an existing log with
            `JsonlWriter.next_seq`).
        task_id: a default `task_id` stamped on events that give none.
    """

    def __init__(self, *, next_seq: int = 1, task_id: str | None = None):
        self._lock = threading.RLock()
        self._next_seq = next_seq
        self._subscribers: tuple[Subscriber, ...] = ()
        """Replaced, never mutated, on (un)subscribe: delivery iterates it without a copy."""
        self._reported: set[int] = set()
        self.task_id = task_id
        self.failures: list[tuple[Subscriber, BaseException]] = []
        """The first failure of each subscriber that raised."""

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        with self._lock:
            self._subscribers = (*self._subscribers, subscriber)

        return lambda: self.unsubscribe(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                subscribers = list(self._subscribers)
                subscribers.remove(subscriber)
                self._subscribers = tuple(subscribers)

    def emit(
        self,
        type: str,
        message: str = "",
        *,
        layer: int | None = None,
        task_id: str | None = None,
        worker_id: str | None = None,
        stage: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> Event:
        """Create the next event and deliver it; returns it.

        The layer defaults to the one `EVENT_TYPES` gives for `type`.
        """
        if layer is None:
            layer = EVENT_TYPES.get(type, 0)
        with self._lock:
            event = Event(
                seq=self._next_seq,
                ts=time.time_ns() // 1000 / 1_000_000,  # µs resolution; round() costs 5×
                layer=layer,
                type=type,
                message=message,
                task_id=task_id if task_id is not None else self.task_id,
                worker_id=worker_id,
                stage=stage,
                data=data or {},
            )
            self._next_seq += 1
            self._deliver(event)
        return event

    def _deliver(self, event: Event) -> None:
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception as exc:  # a broken observer must not break the run
                if report_storage_fault(exc):  # the run that listens stops with one line
                    continue
                key = id(subscriber)
                if key not in self._reported:
                    self._reported.add(key)
                    self.failures.append((subscriber, exc))
                    log.warning(
                        "event subscriber %r failed (reported once, later failures are silent): %s",
                        subscriber,
                        exc,
                    )
