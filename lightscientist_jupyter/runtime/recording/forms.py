"""The forms a recording stores and compares messages in: portable (redacted, the workspace's
path as `<workspace>`) and compared.

Two requests are "the same" when their messages' *compared forms* are equal: the stored text
with times (`2026-12-01 07:40`, ISO times, Unix times in seconds or milliseconds) replaced by
`<time>`, worker ids (`w12`) by `w*`, absolute paths of the machine (under `/tmp`, `/home`,
`/Users`, … — see `HOST_FOLDERS`; e.g. the stage table's) by `<path>/<last component>`, and
tool-call ids left out. A message's hash is the hash of its compared form.

The stored forms are the recording's `MessageView` and `ToolView` (a call line's `defs`, see
`recording.lines`) and `ResponseView` (its `response`).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Generic, NotRequired, TypedDict, TypeVar

from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.runtime.metering.tokens import recorded_usage
from lightscientist_jupyter.runtime.protocol import mask_recalled

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


class ToolCallView(TypedDict):
    """A tool call a message asks for, in its stored form."""

    name: str
    args: NotRequired[dict[str, object]]
    """Its arguments, portable (read back: none, no arguments)."""
    id: NotRequired[str | None]
    """The model's id of the call (left out of the compared form)."""


class MessageView(TypedDict):
    """A request message in its stored form (`message_view`): a call line's `defs` hold
    each under its hash."""

    role: str
    """LangChain's type of the message: `system`, `human`, `ai`, `tool`."""
    content: str
    """Its text, portable (content blocks as their JSON)."""
    tool_calls: NotRequired[list[ToolCallView]]
    """An `ai` message's tool calls."""
    name: NotRequired[str | None]
    """A `tool` message's tool."""
    tool_call_id: NotRequired[str | None]
    """A `tool` message's call (left out of the compared form)."""


class ToolView(TypedDict):
    """A bound tool's schema in its stored form (`tool_view`): a call line's `defs` hold
    each under its hash."""

    name: str | None
    description: str | None
    parameters: dict[str, object]
    """Its arguments' JSON schema."""


class ResponseView(TypedDict):
    """A model's answer in its stored form (`response_view`): a call line's `response`. A
    line read back may leave out any of it (no content, no tool calls, no usage)."""

    content: NotRequired[str | list[str | dict[str, object]]]
    """Its text, or its content blocks, portable."""
    tool_calls: NotRequired[list[ToolCallView] | None]
    usage: NotRequired[dict[str, object] | None]
    """What the call was charged (`metering.tokens.recorded_usage`): the model's report, or
    an estimate flagged `estimated`; None when unknown."""


View = TypeVar("View", bound=Mapping[str, object])
"""A stored view: a `MessageView` or a `ToolView`."""


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


def _calls_view(calls: Any, root: str, scrub: Scrub = redact) -> list[ToolCallView]:
    return [
        {
            "name": c.get("name"),
            "args": _portable_value(c.get("args"), root, scrub),
            "id": c.get("id"),
        }
        for c in calls or []
    ]


def message_view(message: Any, root: str, scrub: Scrub = redact) -> MessageView:
    """One request message in its stored form."""
    view = MessageView(
        role=getattr(message, "type", "message"),
        content=portable(_text(getattr(message, "content", "")), root, scrub),
    )
    calls = getattr(message, "tool_calls", None)
    if calls:
        view["tool_calls"] = _calls_view(calls, root, scrub)
    if view["role"] == "tool":
        view["name"] = getattr(message, "name", None)
        view["tool_call_id"] = getattr(message, "tool_call_id", None)
    return view


def tool_view(schema: Any) -> ToolView:
    """A bound tool's schema in its stored form (name, description, parameters)."""
    if not isinstance(schema, dict):
        from langchain_core.utils.function_calling import convert_to_openai_tool

        schema = convert_to_openai_tool(schema)
    function = schema.get("function", schema)
    return ToolView(
        name=function.get("name"),
        description=function.get("description", ""),
        parameters=function.get("parameters", {}),
    )


def view_hash(view: Mapping[str, object]) -> str:
    """The hash of a stored view's compared form (tool-call ids left out, and what the user's
    memory recalled for a task: an input from outside the run, see `protocol.mask_recalled`)."""
    form = {k: v for k, v in view.items() if k != "tool_call_id"}
    if isinstance(form.get("content"), str):
        form["content"] = mask_recalled(str(form["content"]))
    calls = form.get("tool_calls")
    if isinstance(calls, list):
        form["tool_calls"] = [
            {k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c for c in calls
        ]
    text = compared(json.dumps(form, sort_keys=True, ensure_ascii=False, default=str))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _Views(Generic[View]):
    """Recently seen request messages → (hash, view), so that each call computes the views of
    its new messages only. A plain text message is looked up by its text (a middleware may
    build the same system prompt anew for every call); one with tool calls or content blocks
    by the object itself, holding it and its content (LangChain and deepagents copy a message
    to change it)."""

    def __init__(
        self,
        make: Callable[[Any, str, Scrub], View],
        size: int = 4096,
        by_value: Callable[[Any], object | None] | None = None,
    ):
        self.make = make
        self.size = size
        self.by_value = by_value
        """What to look an item up by instead (None: as a message), when equal items are
        built anew for each call (a bound tool's schema: a new dict every call)."""
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[object, ...], tuple[tuple[object, ...], str, View]] = (
            OrderedDict()
        )
        """key -> (what the key stands for, when it is the object itself; hash; view)"""

    def __call__(self, message: Any, root: str, scrub: Scrub = redact) -> tuple[str, View]:
        content = getattr(message, "content", None)
        value = self.by_value(message) if self.by_value is not None else None
        key: tuple[object, ...]
        keep: tuple[object, ...] = ()
        if value is not None:
            key = (value, root)
        elif isinstance(content, str) and not getattr(message, "tool_calls", None):
            key = (message.type, content, getattr(message, "name", None), root)
        else:
            key, keep = (id(message), root), (message, content)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and (not keep or (hit[0][0] is keep[0] and hit[0][1] is keep[1])):
                self._items.move_to_end(key)
                return hit[1], hit[2]
        view = self.make(message, root, scrub)
        digest = view_hash(view)
        with self._lock:
            self._items[key] = (keep, digest, view)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return digest, view


views = _Views(message_view)
"""`views(message, root) -> (hash, view)`: shared by the recorder and the replay model."""


def _schema_key(schema: Any) -> object | None:
    """A bound tool's schema by its content: the model's invocation parameters carry the
    schemas as new dicts at every call, and making each one's view and hash again cost 2 ms
    a call (the lookup's `repr` of a schema is some microseconds)."""
    return repr(schema) if isinstance(schema, dict) else None


tool_views: _Views[ToolView] = _Views(
    lambda schema, root, scrub: tool_view(schema), size=512, by_value=_schema_key
)
"""`tool_views(schema, "") -> (hash, view)` for bound tools' schemas."""


def response_view(message: Any, sent: list[Any], root: str, scrub: Scrub = redact) -> ResponseView:
    """A model's answer to the messages `sent` in its stored form, with the usage it was
    charged (its request view is made, and kept, on the way: the answer is a message of the
    session's next request)."""
    content = getattr(message, "content", "")
    _, view = views(message, root, scrub)
    return ResponseView(
        content=view["content"] if isinstance(content, str) else _portable_value(content, root),
        tool_calls=view.get("tool_calls", []),
        usage=recorded_usage(message, sent),
    )
