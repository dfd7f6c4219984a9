"""What the offline model knows: the message history, read back into actions and results.

Every tool call the offline model makes carries an id `<label>__<n>`, so the history tells
which planned actions are done and what each returned. Nothing else is remembered: the same
history gives the same reply, in any process.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from lightscientist_jupyter.offline.tools import Need


@dataclasses.dataclass(frozen=True)
class Act:
    """One tool call to make: the bound tool that fits `tool` gets `args`."""

    label: str
    tool: Need
    args: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Say:
    """A final text reply (ends the turn)."""

    text: str


Step = Act | Say | list[Act]


@dataclasses.dataclass
class History:
    results: dict[str, str]
    """label → tool result text, for every answered call."""
    calls: dict[str, str]
    """label → tool name, for every call made (answered or not)."""
    n_ai: int
    last_human: str

    def done(self, label: str) -> bool:
        return label in self.results

    def result(self, label: str) -> str:
        return self.results.get(label, "")

    def count(self, prefix: str) -> int:
        return sum(1 for label in self.calls if label.startswith(prefix))


def text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "".join(parts)


def read_history(messages: list[Any]) -> History:
    results: dict[str, str] = {}
    calls: dict[str, str] = {}
    by_id: dict[str, str] = {}
    n_ai = 0
    last_human = ""
    for message in messages:
        if isinstance(message, AIMessage):
            n_ai += 1
            for call in message.tool_calls:
                label = (call.get("id") or "").rsplit("__", 1)[0]
                calls[label] = call["name"]
                by_id[call.get("id") or ""] = label
        elif isinstance(message, ToolMessage):
            answered = by_id.get(message.tool_call_id)
            if answered is not None:
                results[answered] = text_of(message)
        elif isinstance(message, HumanMessage):
            last_human = text_of(message)
    return History(results=results, calls=calls, n_ai=n_ai, last_human=last_human)


def acts_of(step: Step) -> list[Act]:
    if isinstance(step, Say):
        return []
    return step if isinstance(step, list) else [step]


def to_message(step: Step, n_ai: int, names: dict[Need, str]) -> AIMessage:
    """The reply for `step`, each call named by `names` (need -> bound tool name)."""
    if isinstance(step, Say):
        return AIMessage(content=step.text)
    return AIMessage(
        content="",
        tool_calls=[
            {
                "name": names[a.tool],
                "args": a.args,
                "id": f"{a.label}__{n_ai + 1}_{i}",
                "type": "tool_call",
            }
            for i, a in enumerate(acts_of(step))
        ],
    )
