"""Events and worker records as pandas DataFrames (pandas is imported on first use)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

EVENT_COLUMNS = ["seq", "time", "layer", "type", "stage", "worker_id", "task_id", "message", "data"]
WORKER_COLUMNS = [
    "id",
    "role",
    "stage",
    "task_id",
    "status",
    "model_calls",
    "tool_calls",
    "steps",
    "label",
    "created",
    "updated",
]


def events_frame(raws: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per event line, `time` as a datetime."""
    import pandas as pd

    rows = [
        {
            "seq": r["seq"],
            "time": r.get("ts"),
            "layer": r.get("layer"),
            "type": r.get("type"),
            "stage": r.get("stage"),
            "worker_id": r.get("worker_id"),
            "task_id": r.get("task_id"),
            "message": r.get("message"),
            "data": r.get("data"),
        }
        for r in raws
    ]
    frame = pd.DataFrame(rows, columns=EVENT_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], unit="s")
    return frame


def workers_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per worker record (`worker.json`), its counters flattened."""
    import pandas as pd

    rows = []
    for r in records:
        p = r.get("progress") or {}
        rows.append(
            {
                "id": r.get("id"),
                "role": r.get("role"),
                "stage": r.get("stage"),
                "task_id": r.get("task_id"),
                "status": r.get("status"),
                "model_calls": p.get("model_calls", 0),
                "tool_calls": p.get("tool_calls", 0),
                "steps": p.get("steps", 0),
                "label": (r.get("labels") or {}).get("label", ""),
                "created": r.get("created_at"),
                "updated": r.get("updated_at"),
            }
        )
    frame = pd.DataFrame(rows, columns=WORKER_COLUMNS)
    for column in ("created", "updated"):
        frame[column] = pd.to_datetime(frame[column], unit="s")
    return frame


def memory_frame(records: Iterable[dict[str, Any]], columns: Iterable[str]) -> pd.DataFrame:
    """One row per memory entry (`Entry.to_dict`, a hit's with its `score`), `at` as a
    datetime."""
    import pandas as pd

    frame = pd.DataFrame(list(records), columns=list(columns))
    frame["at"] = pd.to_datetime(frame["at"], unit="s")
    return frame
