"""The event stream: a side channel every layer may import; it imports none of them."""

from lightscientist_jupyter.events.bus import EventBus, Subscriber
from lightscientist_jupyter.events.jsonl import (
    JsonlWriter,
    follow,
    iter_events,
    make_filter,
    read_tail,
)
from lightscientist_jupyter.events.printer import TerminalPrinter, format_line
from lightscientist_jupyter.events.record import EVENT_TYPES, Event, EventDict

__all__ = [
    "EVENT_TYPES",
    "Event",
    "EventBus",
    "EventDict",
    "JsonlWriter",
    "Subscriber",
    "TerminalPrinter",
    "follow",
    "format_line",
    "iter_events",
    "make_filter",
    "read_tail",
]
