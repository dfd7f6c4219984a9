"""One readable terminal line per event, for `--watch` and `lightscientist events`."""

from __future__ import annotations

import sys
import time
import unicodedata
from collections.abc import Mapping
from typing import IO, Any

from lightscientist_jupyter.events.event import Event

_COLORS = {1: "\033[36m", 2: "\033[33m", 3: "\033[37m"}
_RESET = "\033[0m"


def printable(value: Any) -> str:
    """`str(value)` with control and format characters (ESC, BEL, U+202E …) written as
    escapes, so that text from a goal, a model or a file cannot drive a terminal."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(_escape(ch) if unicodedata.category(ch) in _ODD else ch for ch in text)


_ODD = ("Cc", "Cf", "Zl", "Zp")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def format_line(raw: Mapping[str, Any], *, color: bool = False, width: int = 140) -> str:
    """`HH:MM:SS  L1 stage.start             idea.survey         w-3   message`."""
    clock = time.strftime("%H:%M:%S", time.localtime(raw.get("ts", 0)))
    layer = raw.get("layer", 0)
    who = printable(raw.get("worker_id") or "")
    stage = printable(raw.get("stage") or "")
    message = printable(" ".join(str(raw.get("message") or "").split()))
    # Each column keeps at least one space after it, so a long value never runs into the next.
    line = f"{clock}  L{layer} {raw.get('type', ''):<23} {stage:<19} {who:<9} {message}"
    if len(line) > width:
        line = line[: width - 1] + "…"
    if color:
        line = f"{_COLORS.get(layer, '')}{line}{_RESET}"
    return line


class TerminalPrinter:
    """An `EventBus` subscriber that prints each event as one line."""

    def __init__(self, stream: IO[str] | None = None, *, color: bool | None = None):
        self.stream = stream or sys.stdout
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.color = isatty() if color is None else color

    def __call__(self, event: Event) -> None:
        self.stream.write(format_line(event.to_dict(), color=self.color) + "\n")
        self.stream.flush()
