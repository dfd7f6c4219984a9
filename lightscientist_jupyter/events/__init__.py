"""The event stream: a side channel every layer may import; it imports none of them."""

from lightscientist_jupyter.events.buffer import EventBuffer
from lightscientist_jupyter.events.bus import EventBus, Subscriber
from lightscientist_jupyter.events.event import EVENT_TYPES, Event, EventDict
from lightscientist_jupyter.events.jsonl import (
    JsonlWriter,
    follow,
    iter_events,
    make_filter,
    read_tail,
)
from lightscientist_jupyter.events.log import EventLog
from lightscientist_jupyter.events.printer import TerminalPrinter, format_line, printable

__all__ = [
    "EVENT_TYPES",
    "Event",
    "EventBuffer",
    "EventBus",
    "EventDict",
    "EventLog",
    "JsonlWriter",
    "Subscriber",
    "TerminalPrinter",
    "follow",
    "format_line",
    "printable",
    "iter_events",
    "make_filter",
    "read_tail",
]
