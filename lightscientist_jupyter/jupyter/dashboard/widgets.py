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

The front ends of the dashboard's widgets are TypeScript in `labextension/src/widgets/`, built
with the JupyterLab extension into one ES module each under `static/` (build output, never
edited), which anywidget loads: nothing comes from a CDN, so they work offline, with
anywidget's own JupyterLab extension. The style sheets in `style/` are written here and
shared with the side panel.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypedDict

import anywidget
import traitlets

from lightscientist_jupyter.events import make_filter

STATIC = Path(__file__).with_name("static")
"""The widgets' modules, built from `labextension/src/widgets/` (`jlpm build:widgets`)."""
STYLE = Path(__file__).with_name("style")
THEME_CSS = (STYLE / "theme.css").read_text(encoding="utf-8")
"""The shared style sheet (the panel imports the same file): loaded with the widgets."""

UNBUILT = """export default { render({ el }) {
  el.className = "ls-err";
  el.textContent = %s;
} };"""


def esm(name: str) -> Path | str:
    """The built module of the widget `name` (`static/<name>.js`). Without it (a checkout whose
    JavaScript was not built) a module that says so in place of the widget, so the rest of the
    dashboard still shows."""
    built = STATIC / f"{name}.js"
    if built.is_file():
        return built
    said = (
        f"The dashboard's {name} widget is not built: run scripts/setup (it builds "
        f"labextension/ into {STATIC}), then restart the kernel."
    )
    return UNBUILT % json.dumps(said)


EVENTS_MAX = 500
"""Events kept (kernel side and in each view)."""
SEND_MAX = 100
"""The most events one message carries; a bigger batch sends its newest and counts the rest."""
TAIL_SYNC = 200
TAIL_EVERY_S = 2.0
MESSAGE_CHARS = 200


class EventRow(TypedDict):
    """One event as the stream shows it (`IEventRow` in `labextension/src/widgets/views.ts`)."""

    seq: int
    ts: float
    layer: int
    type: str
    stage: str
    worker: str
    message: str


class Outcome(TypedDict):
    """What the kernel side knows of a card's action (`IOutcome`): `sent`, `refused` or
    `settled`, and the line that says it."""

    state: str
    text: str


def compact(raw: Mapping[str, Any]) -> EventRow:
    """The fields the list shows, with the message cut short: what crosses the wire."""
    message = " ".join(str(raw.get("message") or "").split())
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 1] + "…"
    return {
        "seq": int(raw.get("seq") or 0),
        "ts": float(raw.get("ts") or 0),
        "layer": int(raw.get("layer") or 0),
        "type": str(raw.get("type") or ""),
        "stage": raw.get("stage") or "",
        "worker": raw.get("worker_id") or "",
        "message": message,
    }


class EventStream(anywidget.AnyWidget):
    """Newest events in a bounded, filterable list."""

    _esm = esm("events")
    _css = THEME_CSS + (STYLE / "events.css").read_text(encoding="utf-8")

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
        self.events: deque[EventRow] = deque(maxlen=self.maxlen)
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
                self.tail = [dict(e) for e in list(self.events)[-TAIL_SYNC:]]
                self.total = self.received

    def load(self, events: Iterable[Mapping[str, Any]], total: int | None = None) -> None:
        """Start from events already in the log (a dashboard opened on a running project)."""
        items = [compact(raw) for raw in events]
        self.events.extend(items)
        self.received += total if total is not None else len(items)
        self.sync_tail(quiet=True, force=True)

    def visible(self) -> list[EventRow]:
        """The kept events that pass the current filter, oldest first."""
        keep = make_filter(layer=self.layer or None, type=self.type_filter or None)
        return [
            e
            for e in self.events
            if keep(dict(e)) and (not self.worker or e["worker"] == self.worker)
        ]
