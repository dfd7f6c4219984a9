"""The dashboard's worker table, folded from the event stream.

`worker.json` files are written when a worker changes status, not on every model call, so
live counters come from the events instead: `fold` takes one event (a raw dict, as in
`events.jsonl`) and updates the row of the worker it names. The same fold over the log on
disk rebuilds the table of a project run by another process.
"""

from __future__ import annotations

import dataclasses
import html
import time
from collections.abc import Iterable, Mapping
from typing import Any

_STATUS_OF_TYPE = {
    "session.start": "running",
    "worker.waiting": "waiting",
    "worker.background": "background",
    "worker.cancelled": "cancelled",
}
_CHIP_STATUS = {
    "running": "running",
    "waiting": "waiting_user",
    "completed": "done",
    "failed": "failed",
    "cancelled": "cancelled",
    "interrupted": "stopped",
}
"""A worker's status drawn with the project's status dots (style/theme.css)."""
_WORDS = {"background": "idle", "waiting": "waiting for input"}
"""A worker's status in a researcher's words (`vocab.WorkerStatus`: `background` is a
session that suspended itself until a message resumes it)."""


@dataclasses.dataclass
class WorkerRow:
    id: str
    role: str = "worker"
    stage: str = ""
    status: str = "running"
    model_calls: int = 0
    tool_calls: int = 0
    last_ts: float = 0.0
    last: str = ""
    """The latest thing the worker did, as `type: message`."""
    jobs: dict[str, str] = dataclasses.field(default_factory=dict)
    """Its jobs (`submit_job`): name → status."""


def fold(rows: dict[str, WorkerRow], raw: Mapping[str, Any]) -> bool:
    """Apply one event to `rows`; returns whether a row changed."""
    worker_id = raw.get("worker_id")
    if not worker_id:
        return False
    row = rows.get(worker_id)
    if row is None:
        row = rows[worker_id] = WorkerRow(
            worker_id, role="supervisor" if worker_id == "supervisor" else "worker"
        )
    type_ = raw.get("type", "")
    data = raw.get("data") or {}
    if type_ == "model.call":
        row.model_calls += 1
    elif type_ == "tool.call":
        row.tool_calls += 1
    elif type_ == "session.start" and data.get("role"):
        row.role = str(data["role"])
    elif type_ in ("job.submitted", "job.finished"):
        job = data.get("job") or {}
        row.jobs[str(job.get("name", ""))] = str(job.get("status", ""))
    if type_ in _STATUS_OF_TYPE:
        row.status = _STATUS_OF_TYPE[type_]
    elif type_ == "session.end" and data.get("status"):
        row.status = str(data["status"])
    elif type_ == "worker.status" and data.get("to"):
        row.status = str(data["to"])
    row.stage = raw.get("stage") or row.stage
    row.last_ts = float(raw.get("ts") or row.last_ts)
    message = " ".join(str(raw.get("message") or "").split())
    row.last = f"{type_}: {message}"[:120]
    return True


def fold_all(events: Iterable[Mapping[str, Any]]) -> dict[str, WorkerRow]:
    rows: dict[str, WorkerRow] = {}
    for raw in events:
        fold(rows, raw)
    return rows


_CELL = "padding:1px 8px"  # inline: the static fallback has no stylesheet


def _td(content: str, style: str = "") -> str:
    return f'<td style="{_CELL};{style}">{content}</td>'


def _jobs(row: WorkerRow) -> str:
    """The worker's jobs, after its status: `job batch-2 running`."""
    return "".join(
        f' <span class="ls-muted" data-job="{html.escape(name)}">job {html.escape(name)} '
        f"{html.escape(status)}</span>"
        for name, status in row.jobs.items()
    )


def render_html(
    rows: Mapping[str, WorkerRow], *, limit: int = 12, spend: Mapping[str, str] | None = None
) -> str:
    """The table, newest activity first; the supervisor always on top. `spend`: each
    worker's tokens and cost (`budget_card.WorkerSpend`)."""
    if not rows:
        return '<div class="ls-workers ls-muted">no workers yet</div>'
    ordered = sorted(rows.values(), key=lambda r: (r.role != "supervisor", -r.last_ts, r.id))
    shown = ordered[:limit]
    head = "".join(
        f'<th style="{_CELL};text-align:left">{name}</th>'
        for name in ("worker", "stage", "status", "model", "tools", "spent", "last activity")
    )
    body = []
    for r in shown:
        dot = _CHIP_STATUS.get(r.status)
        mark = f' data-status="{dot}"' if dot else ""
        clock = time.strftime("%H:%M:%S", time.localtime(r.last_ts)) if r.last_ts else ""
        body.append(
            f'<tr data-worker="{html.escape(r.id)}">'
            + _td(
                f'<b>{html.escape(r.id)}</b> <span class="ls-muted">{html.escape(r.role)}</span>',
                "white-space:nowrap",
            )
            + _td(html.escape(r.stage))
            + _td(
                f'<span class="ls-chip"{mark} title="{html.escape(r.status)}">'
                f"{html.escape(_WORDS.get(r.status, r.status))}</span>" + _jobs(r)
            )
            + _td(str(r.model_calls), "text-align:right")
            + _td(str(r.tool_calls), "text-align:right")
            + _td(html.escape((spend or {}).get(r.id, "")), "text-align:right;white-space:nowrap")
            + _td(f'<span class="ls-muted">{clock}</span> {html.escape(r.last)}')
            + "</tr>"
        )
    more = len(ordered) - len(shown)
    foot = (
        f'<div class="ls-muted">and {more} more (<code>%lightscientist workers</code>)</div>'
        if more > 0
        else ""
    )
    return (
        f'<table class="ls-workers" style="border-collapse:collapse;font-size:12px">'
        f"<tr>{head}</tr>{''.join(body)}</table>{foot}"
    )
