"""`%lightscientist events`: the project's events as a DataFrame a person can read.

Every event by default (`--tail N` for the last N), `time` to the second, `seconds` since
the project's first event, and the `data` column only with `--data`; `--json` gives the raw events.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def events_table(view: Any, args: argparse.Namespace) -> Any:
    """The DataFrame `%lightscientist events` shows for `view` (an `api.ProjectView`)."""
    tail = sys.maxsize if args.tail is None else args.tail
    frame = view.events(tail, layer=args.layer, type=args.type, worker=args.worker)
    if args.json:  # the raw events, exact times and data
        return frame
    exact = frame["time"]
    first = exact.iloc[0] if len(frame) and frame["seq"].iloc[0] == 1 else _first_ts(view)
    frame.insert(
        2, "seconds", ((exact - first).dt.total_seconds()).round(3) if first is not None else 0.0
    )
    frame["time"] = exact.dt.floor("s")
    if not args.data:
        frame = frame.drop(columns=["data"])
    return frame


def _first_ts(view: Any) -> Any:
    """The time of the log's first event (seq 1), as the frame holds times."""
    from lightscientist_jupyter.api.frames import events_frame
    from lightscientist_jupyter.events import read_tail

    first = read_tail(view.workspace.events_file, 1, keep=lambda raw: raw.get("seq") == 1)
    return events_frame(first)["time"].iloc[0] if first else None
