"""The order in which layer 2 took in its workers' updates: kept in a recording, kept again by
a replay.

Workers that run at the same time end in whatever order their commands take, and layer 2
takes in each update as it comes. Whether the supervisor agent hears that worker A finished
before worker B, and whether B is still running when it decides on A, is thread timing; its
next request follows from both. A strict replay whose timing differs from the recording's
therefore diverges at the supervisor, with any model: the offline scientist's
`idea.probe_batch` runs two probe workers at once, and from 1 in 4 to 3 in 4 strict replays of
a default offline run failed so on a loaded machine.

The model calls alone cannot carry that order. A worker's end reaches layer 2 after its last
answer, once its tools have run: in a recording where both probes' last answers come before the
supervisor's next call, the supervisor saw the second probe `running` in one run and
`completed` in another. Holding each answer back until the calls recorded before it are
answered would fix the answers' order, not that. So layer 2 writes down what it took in: each
update that changes what the agent is told is an `update` line (the worker's session and its
new status, see `recording.recorder`), written as layer 2 takes it in — between the supervisor's
calls, which are written from the same loop. A replay keeps the order of those lines and of the
supervisor's calls (`UpdateOrder`, made by `recorded.Tape`, asked by layer 2's inbox):

- an update may be taken in once it is the next of the recording's, every supervisor call
  recorded before it being answered; one that comes early waits;
- the loop takes no event while the recording's next line is an update still to come (`due`),
  so the agent's next call is asked with what the recording's was.

A normal run is not touched (nothing waits; the lines are written only when it records), and
a lenient replay keeps the order as far as the recording goes on matching: an update the
recording holds no more of is taken in at once, a due one that cannot come is passed over
(`skip`). A recording without update lines (made before them) replays in the order things come.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

Line = tuple[str, int | None]
"""A line of the order: (session, call index) of a supervisor call, (session, None) of an
update taken in."""


class UpdateOrder:
    """The recorded order of layer 2's updates and the supervisor's calls, and how far a
    replay has gone along it (thread-safe).

    Args:
        lines: the order's lines, in the recordings' order.
        recorded: the recorded session that answers a live session key (`Tape.recorded_key`).
    """

    def __init__(self, lines: Sequence[Line], recorded: Callable[[str], str]):
        self._lines = list(lines)
        self._calls = {line: n for n, line in enumerate(self._lines) if line[1] is not None}
        self.recorded = recorded
        self._at = 0
        """The first line not yet passed."""
        self._lock = threading.Lock()

    def answered(self, session: str, call: int) -> None:
        """The replay model answered the recorded call `call` of `session`: the order goes on
        past it (a worker's call is not one of its lines)."""
        n = self._calls.get((session, call))
        if n is not None:
            with self._lock:
                self._at = max(self._at, n + 1)

    def admits(self, live: str) -> bool:
        """Whether an update of the live session `live` may be taken in now: the recording's
        next line is an update of its session, or the recording holds no more of them."""
        key = self.recorded(live)
        with self._lock:
            n = self._next_update(key)
            return n is None or n == self._at

    def took(self, live: str) -> None:
        """Layer 2 took in an update of `live`: past it, when it was the recording's next."""
        key = self.recorded(live)
        with self._lock:
            if self._at < len(self._lines) and self._lines[self._at] == (key, None):
                self._at += 1

    def due(self) -> str | None:
        """The recorded session whose update the recording took in next, before the agent's
        next call; None when the next line is a call, or none is left."""
        with self._lock:
            if self._at < len(self._lines) and self._lines[self._at][1] is None:
                return self._lines[self._at][0]
            return None

    def skip(self) -> None:
        """The due update will not come (its worker cannot send it): pass over it."""
        with self._lock:
            if self._at < len(self._lines) and self._lines[self._at][1] is None:
                self._at += 1

    def catch_up(self, live: str) -> None:
        """Go on from the recording's next update of `live`, past the calls before it: the
        replay is further on than the calls it answered say (a replay resumed in a new
        process answers the calls from where it stopped)."""
        key = self.recorded(live)
        with self._lock:
            n = self._next_update(key)
            if n is not None:
                self._at = n

    def _next_update(self, key: str) -> int | None:
        for n in range(self._at, len(self._lines)):
            if self._lines[n] == (key, None):
                return n
        return None
