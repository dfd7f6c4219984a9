"""The event and its closed vocabulary.

Events are a side channel: they show what each layer did, they never drive control flow. An
event crosses files and wires as one JSON object per line, so it has a `to_dict` and a
`from_dict` and nothing else clever.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, TypedDict

from lightscientist_jupyter.vocab import EVENT_LAYERS

SCHEMA_VERSION = 1

Layer = Literal[1, 2, 3]

EVENT_TYPES: dict[str, int] = {str(t): int(layer) for t, layer in EVENT_LAYERS.items()}
"""Every event type and the layer that emits it."""


class EventDict(TypedDict):
    """One line of `.lightscientist/events.jsonl`."""

    v: int
    seq: int
    ts: float
    layer: int
    type: str
    message: str
    task_id: str | None
    worker_id: str | None
    stage: str | None
    data: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """One thing a layer did."""

    seq: int
    """Position in the workspace's log, increasing by one from 1."""
    ts: float
    """Unix time in seconds."""
    layer: int
    type: str
    message: str = ""
    """One human-readable line."""
    task_id: str | None = None
    worker_id: str | None = None
    stage: str | None = None
    data: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Structured details; plain JSON types only."""

    def to_dict(self) -> EventDict:
        return {
            "v": SCHEMA_VERSION,
            "seq": self.seq,
            "ts": self.ts,
            "layer": self.layer,
            "type": self.type,
            "message": self.message,
            "task_id": self.task_id,
            "worker_id": self.worker_id,
            "stage": self.stage,
            "data": self.data,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Event:
        return cls(
            seq=int(raw["seq"]),
            ts=float(raw["ts"]),
            layer=int(raw["layer"]),
            type=str(raw["type"]),
            message=str(raw.get("message") or ""),
            task_id=raw.get("task_id"),
            worker_id=raw.get("worker_id"),
            stage=raw.get("stage"),
            data=dict(raw.get("data") or {}),
        )
