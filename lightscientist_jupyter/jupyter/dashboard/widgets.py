"""The live event stream: an anywidget fed in batches.

Kernel side, `EventStream.push(batch)` keeps a bounded tail and sends the batch to the front
end as *one* custom message; the flusher calls it at most every ~100 ms, so the message rate
stays near 10 a second whatever the event rate. The synced `tail` trait (the last
`TAIL_SYNC` events) is refreshed only when the stream goes quiet or every `TAIL_EVERY_S`, so a
view opened later (a second view, a reloaded page) rebuilds from it without the trait
turning into a message per batch.

Filtering happens in the browser (layer, type or type prefix, worker): it answers at once
even while a cell runs and the kernel cannot process widget messages. The filter values
are synced traits, and `visible()` applies the same rule on the kernel side.

The front end (`static/events.js`, `static/events.css`) has no build step and imports
nothing from a CDN: it works offline, with anywidget's own JupyterLab extension.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from lightscientist_jupyter.events import make_filter

STATIC = Path(__file__).with_name("static")
THEME_CSS = (STATIC / "theme.css").read_text(encoding="utf-8")
"""The shared style sheet (the panel imports the same file): loaded with the widgets."""


def esm(*names: str) -> str:
    """Front-end modules of `static/` joined into one (anywidget's cannot import each other)."""
    return "\n".join((STATIC / name).read_text(encoding="utf-8") for name in names)


EVENTS_MAX = 500
"""Events kept (kernel side and in each view)."""
SEND_MAX = 100
"""The most events one message carries; a bigger batch sends its newest and counts the rest."""
TAIL_SYNC = 200
TAIL_EVERY_S = 2.0
MESSAGE_CHARS = 200


def compact(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the list shows, with the message cut short: what crosses the wire."""
    message = " ".join(str(raw.get("message") or "").split())
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 1] + "…"
    return {
        "seq": raw.get("seq"),
        "ts": raw.get("ts"),
        "layer": raw.get("layer"),
        "type": raw.get("type"),
        "stage": raw.get("stage") or "",
        "worker": raw.get("worker_id") or "",
        "message": message,
    }


class EventStream(anywidget.AnyWidget):
    """Newest events in a bounded, filterable list."""

    _esm = STATIC / "events.js"
    _css = THEME_CSS + (STATIC / "events.css").read_text(encoding="utf-8")

    tail = traitlets.List(traitlets.Dict()).tag(sync=True)
    """The last `TAIL_SYNC` events, for views opened later."""
    maxlen = traitlets.Int(EVENTS_MAX).tag(sync=True)
    layer = traitlets.Int(0).tag(sync=True)
    """Show only this layer (1, 2, 3); 0 shows all."""
    type_filter = traitlets.Unicode("").tag(sync=True)
    """Show only this type, or a prefix ending in '.' or '*' (as `lightscientist events`)."""
    worker = traitlets.Unicode("").tag(sync=True)
    """Show only this worker's events; '' shows all."""
    total = traitlets.Int(0).tag(sync=True)
    """Events seen so far (synced with the tail)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.events: deque[dict[str, Any]] = deque(maxlen=self.maxlen)
        self.sends = 0
        """Custom messages sent (one per non-empty batch)."""
        self.send_times: deque[float] = deque(maxlen=10_000)
        self.received = 0
        self._tail_at = 0.0
        self._tail_dirty = False

    def push(self, batch: Iterable[Mapping[str, Any]], dropped: int = 0) -> None:
        """Take a batch of raw events: keep them, and send one message with the newest."""
        items = [compact(raw) for raw in batch]
        if not items and not dropped:
            self.sync_tail(quiet=True)
            return
        self.events.extend(items)
        self.received += len(items) + dropped
        skipped = dropped + max(0, len(items) - SEND_MAX)
        self.send(
            {
                "kind": "events",
                "events": items[-SEND_MAX:],
                "skipped": skipped,
                "total": self.received,
            }
        )
        self.sends += 1
        self.send_times.append(time.monotonic())
        self._tail_dirty = True
        self.sync_tail(quiet=False)

    def sync_tail(self, *, quiet: bool, force: bool = False) -> None:
        """Refresh the synced tail when the stream is quiet, or at most every `TAIL_EVERY_S`."""
        if not self._tail_dirty and not force:
            return
        now = time.monotonic()
        if force or quiet or now - self._tail_at >= TAIL_EVERY_S:
            self._tail_at = now
            self._tail_dirty = False
            with self.hold_sync():
                self.tail = list(self.events)[-TAIL_SYNC:]
                self.total = self.received

    def load(self, events: Iterable[Mapping[str, Any]], total: int | None = None) -> None:
        """Start from events already in the log (a dashboard opened on a running project)."""
        items = [compact(raw) for raw in events]
        self.events.extend(items)
        self.received += total if total is not None else len(items)
        self.sync_tail(quiet=True, force=True)

    def visible(self) -> list[dict[str, Any]]:
        """The kept events that pass the current filter, oldest first."""
        keep = make_filter(layer=self.layer or None, type=self.type_filter or None)
        return [
            e for e in self.events if keep(e) and (not self.worker or e["worker"] == self.worker)
        ]
