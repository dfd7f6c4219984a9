"""The plain-text header that opens a worker's task and each supervisor event.

A header is a title line followed by `key: value` lines (values that are lists, dicts or
multi-line strings are JSON), then a blank line and free text. Real models read it as a
readable brief; the offline model parses it back. Layer 2 writes headers; layer 3's offline
model reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from lightscientist_jupyter.memory.entries import one_line

TASK_TITLE = "LightScientist task"
EVENT_TITLE = "LightScientist supervisor event"
RECALLED_TITLE = "## Recalled from memory"
"""Opens the block of a task's header that lists what the user's memory recalled for it."""
RECALLED_CHARS = 1200
"""The block's size at most, whatever the memory holds: prompts stay flat."""
_RECALLED_BLOCK = re.compile(rf"(?m)^{re.escape(RECALLED_TITLE)}[^\n]*\n\n(?:- [^\n]*\n)*\n?")
"""The block as `recalled_block` writes it: its title line, a blank line, one line an entry
and a blank line."""


class Recalled(Protocol):
    """A recalled entry as a header shows it (`memory.Entry`)."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...

    def origin(self) -> str: ...


def recalled_block(entries: Sequence[Recalled], limit: int = RECALLED_CHARS) -> str:
    """The header's block of recalled entries, each one line with where it came from, within
    `limit` characters; '' for none. Every reader has the `recall` tool (a coding agent over
    our MCP server too)."""
    if not entries:
        return ""
    title = f"{RECALLED_TITLE} (earlier projects; your recall tool searches further)\n\n"
    share = max(80, (limit - len(title)) // len(entries))
    lines = []
    for entry in entries:
        lines.append(one_line(f"- {entry.kind} ({entry.origin()}): {entry.text}", share))
    return title + "\n".join(lines) + "\n\n"


def mask_recalled(text: str) -> str:
    """`text` without its recalled block: what memory recalls is an input from outside the
    run (the user's store), so a strict replay compares the rest, whether a block is there
    or not."""
    return _RECALLED_BLOCK.sub("", text)


def render_header(title: str, fields: dict[str, Any], body: str = "") -> str:
    lines = [title]
    for key, value in fields.items():
        if value is None or value == "" or value == [] or value == {}:
            continue
        if isinstance(value, (list, tuple, dict)) or (isinstance(value, str) and "\n" in value):
            text = json.dumps(
                list(value) if isinstance(value, tuple) else value, ensure_ascii=False
            )
        else:
            text = str(value)
        lines.append(f"{key}: {text}")
    out = "\n".join(lines)
    return f"{out}\n\n{body.strip()}\n" if body.strip() else out + "\n"


def parse_header(text: str) -> tuple[str, dict[str, Any]]:
    """`(title, fields)` of a header; fields stop at the first blank line."""
    lines = text.splitlines()
    if not lines:
        return "", {}
    fields: dict[str, Any] = {}
    for line in lines[1:]:
        if not line.strip():
            break
        key, sep, value = line.partition(": ")
        if not sep:
            continue
        value = value.strip()
        if value[:1] in '[{"':
            try:
                fields[key.strip()] = json.loads(value)
                continue
            except ValueError:
                pass
        fields[key.strip()] = value
    return lines[0].strip(), fields
