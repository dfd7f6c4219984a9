"""The plain-text header that opens a worker's task and each supervisor event.

A header is a title line followed by `key: value` lines (values that are lists, dicts or
multi-line strings are JSON), then a blank line and free text. Real models read it as a
readable brief; the offline model parses it back. Layer 2 writes headers; layer 3's offline
model reads them.
"""

from __future__ import annotations

import json
from typing import Any

TASK_TITLE = "LightScientist task"
EVENT_TITLE = "LightScientist supervisor event"


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
