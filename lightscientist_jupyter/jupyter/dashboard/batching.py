"""Getting events from worker threads to the front end without flooding IOPub.

Events reach the dashboard through an `EventBuffer` (`lightscientist_jupyter.events.buffer`),
an O(1) bus subscriber. `Flusher` is one daemon thread per dashboard that calls a `tick`
function every `interval` seconds. The tick drains the buffer and turns the batch into at most
one message per widget, so a burst of 5,000 events costs a handful of messages, not 5,000.

ipykernel routes output from threads to whichever cell runs at that moment, so neither
piece prints or logs: an error in a tick is kept in `Flusher.errors` for the dashboard to
show.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

FLUSH_INTERVAL_S = 0.1


class Flusher:
    """Calls `tick()` every `interval` seconds on one daemon thread until `tick` returns
    False or `stop()` is called."""

    def __init__(
        self,
        tick: Callable[[], bool],
        *,
        interval: float = FLUSH_INTERVAL_S,
        name: str = "lightscientist-flusher",
    ):
        self.tick = tick
        self.interval = interval
        self.name = name
        self.errors: deque[str] = deque(maxlen=10)
        """The latest errors raised by `tick` (a broken tick keeps ticking)."""
        self.ticks = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Flusher:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 2.0) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _loop(self) -> None:
        next_at = time.monotonic()
        while True:
            next_at += self.interval
            if self._stop.wait(max(0.0, next_at - time.monotonic())):
                return
            self.ticks += 1
            try:
                if self.tick() is False:
                    return
            except Exception as exc:  # noqa: BLE001 - kept for the dashboard, never printed
                self.errors.append(f"{type(exc).__name__}: {exc}")
            if next_at < time.monotonic() - self.interval:
                next_at = time.monotonic()  # a slow tick: do not try to catch up
