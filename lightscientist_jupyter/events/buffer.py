"""A bounded, thread-safe hand-off of events from the bus to whoever shows them.

`EventBuffer` is an `EventBus` subscriber. It is called on whichever thread emitted the event,
under the bus's lock, so it does nothing but append to a bounded deque under its own lock:
O(1), never prints, never touches a widget. A reader (the notebook dashboard's flusher) drains
it in batches.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, cast

from lightscientist_jupyter.events.event import Event

BUFFER_MAX = 20_000
"""Events held between two drains; older ones are dropped (and counted) past this."""


class EventBuffer:
    """A bounded, thread-safe hand-off of events from the bus to the flusher."""

    def __init__(self, maxlen: int = BUFFER_MAX):
        self._lock = threading.Lock()
        self._items: deque[Event | dict[str, Any]] = deque(maxlen=maxlen)
        self.received = 0
        """Events pushed since the buffer was made."""
        self._dropped = 0

    def __call__(self, event: Event) -> None:
        """The `EventBus` subscriber: keep the event for the next drain."""
        self.push(event)

    def push(self, event: Event | dict[str, Any]) -> None:
        with self._lock:
            if len(self._items) == self._items.maxlen:
                self._dropped += 1
            self._items.append(event)
            self.received += 1

    def drain(self) -> tuple[list[dict[str, Any]], int]:
        """Everything pushed since the last drain (as raw dicts), and how many were dropped."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
            dropped, self._dropped = self._dropped, 0
        return [
            cast(dict[str, Any], e.to_dict()) if isinstance(e, Event) else e for e in items
        ], dropped

    def __len__(self) -> int:
        return len(self._items)
