"""The forms a recording stores and compares messages in: portable (redacted, the workspace's
path as `<workspace>`) and compared.

Two requests are "the same" when their messages' *compared forms* are equal: the stored text
with times (`2026-12-01 07:40`, ISO times, Unix times in seconds or milliseconds) replaced by
`<time>`, worker ids (`w12`) by `w*`, absolute paths of the machine (under `/tmp`, `/home`,
`/Users`, … — see `HOST_FOLDERS`; e.g. the stage table's) by `<path>/<last component>`, and
tool-call ids left out. A message's hash is the hash of its compared form.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.runtime.metering.tokens import recorded_usage

WORKSPACE = "<workspace>"

_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: ?(?:UTC|Z|[+-]\d{2}:?\d{2}))?"
)
_EPOCH = re.compile(r"(?<![\d.])1[6-9]\d{8}(?:\d{3}(?![\d.])|\.\d+)?(?!\d)")
_WORKER = re.compile(r"\bw\d+\b")
HOST_FOLDERS = (
    "tmp home Users root var private opt mnt srv usr etc Volumes work builds runner github"
).split()
"""Absolute paths under these top folders are a machine's, not a workspace's (whose files
the workers see as `/name`): they compare by their last component."""
_HOST_PATH = re.compile(
    r"(?<![\w.~/-])/(?:" + "|".join(HOST_FOLDERS) + r")(?:/[^\s'\"`()\[\]{},;:|<>]*)?"
)


Scrub = Callable[[str], str]
"""`redact`, or a `redact.redactor()` that read the environment once."""


def portable(text: str, root: str, scrub: Scrub = redact) -> str:
    """The stored form of a text: redacted, the workspace's path as `<workspace>`."""
    text = scrub(text)
    return text.replace(root, WORKSPACE) if root else text


def compared(text: str) -> str:
    """The compared form of a stored text: times, worker ids and machine paths masked."""
    text = _HOST_PATH.sub(lambda m: "<path>/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)
    return _WORKER.sub("w*", _EPOCH.sub("<time>", _TIME.sub("<time>", text)))


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, default=str)


def _portable_value(value: Any, root: str, scrub: Scrub = redact) -> Any:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return json.loads(portable(text, root, scrub))
    except ValueError:  # a redaction broke the JSON: keep the text
        return portable(str(value), root, scrub)


def _calls_view(calls: Any, root: str, scrub: Scrub = redact) -> list[dict[str, Any]]:
    return [
        {
            "name": c.get("name"),
            "args": _portable_value(c.get("args"), root, scrub),
            "id": c.get("id"),
        }
        for c in calls or []
    ]


def message_view(message: Any, root: str, scrub: Scrub = redact) -> dict[str, Any]:
    """One request message in its stored form."""
    view: dict[str, Any] = {
        "role": getattr(message, "type", "message"),
        "content": portable(_text(getattr(message, "content", "")), root, scrub),
    }
    calls = getattr(message, "tool_calls", None)
    if calls:
        view["tool_calls"] = _calls_view(calls, root, scrub)
    if view["role"] == "tool":
        view["name"] = getattr(message, "name", None)
        view["tool_call_id"] = getattr(message, "tool_call_id", None)
    return view


def tool_view(schema: Any) -> dict[str, Any]:
    """A bound tool's schema in its stored form (name, description, parameters)."""
    if not isinstance(schema, dict):
        from langchain_core.utils.function_calling import convert_to_openai_tool

        schema = convert_to_openai_tool(schema)
    function = schema.get("function", schema)
    return {
        "name": function.get("name"),
        "description": function.get("description", ""),
        "parameters": function.get("parameters", {}),
    }


def view_hash(view: dict[str, Any]) -> str:
    """The hash of a stored view's compared form (tool-call ids left out)."""
    form = {k: v for k, v in view.items() if k != "tool_call_id"}
    if "tool_calls" in form:
        form["tool_calls"] = [{k: v for k, v in c.items() if k != "id"} for c in form["tool_calls"]]
    text = compared(json.dumps(form, sort_keys=True, ensure_ascii=False, default=str))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _Views:
    """Recently seen request messages → (hash, view), so that each call computes the views of
    its new messages only. A plain text message is looked up by its text (a middleware may
    build the same system prompt anew for every call); one with tool calls or content blocks
    by the object itself, holding it and its content (LangChain and deepagents copy a message
    to change it)."""

    def __init__(self, make: Callable[[Any, str, Scrub], dict[str, Any]], size: int = 4096):
        self.make = make
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[Any, ...], tuple[Any, ...]] = OrderedDict()

    def __call__(
        self, message: Any, root: str, scrub: Scrub = redact
    ) -> tuple[str, dict[str, Any]]:
        content = getattr(message, "content", None)
        if isinstance(content, str) and not getattr(message, "tool_calls", None):
            key: tuple[Any, ...] = (message.type, content, getattr(message, "name", None), root)
            keep: tuple[Any, ...] = ()
        else:
            key, keep = (id(message), root), (message, content)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and (not keep or (hit[0] is keep[0] and hit[1] is keep[1])):
                self._items.move_to_end(key)
                return hit[-2], hit[-1]
        view = self.make(message, root, scrub)
        digest = view_hash(view)
        with self._lock:
            self._items[key] = (*keep, digest, view)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return digest, view


views = _Views(message_view)
"""`views(message, root) -> (hash, view)`: shared by the recorder and the replay model."""
tool_views = _Views(lambda schema, root, scrub: tool_view(schema), size=512)
"""`tool_views(schema, "") -> (hash, view)` for bound tools' schemas."""


def response_view(
    message: Any, sent: list[Any], root: str, scrub: Scrub = redact
) -> dict[str, Any]:
    """A model's answer to the messages `sent` in its stored form, with the usage it was
    charged (its request view is made, and kept, on the way: the answer is a message of the
    session's next request)."""
    content = getattr(message, "content", "")
    _, view = views(message, root, scrub)
    return {
        "content": view["content"] if isinstance(content, str) else _portable_value(content, root),
        "tool_calls": view.get("tool_calls", []),
        "usage": recorded_usage(message, sent),
    }
