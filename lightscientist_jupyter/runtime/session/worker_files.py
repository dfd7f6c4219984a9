"""Each worker's two files: `worker.json` (its `WorkerRecord`, read back after a restart) and
`agent-run.md` (the delivery record a person or a later stage reads)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text, write_json_atomic, write_text_atomic
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.vocab import Role, WorkerStatus


def load_record(folder: Path) -> WorkerRecord | None:
    """The record in `folder/worker.json`, or None when there is none (or it is unreadable);
    `beneath.PathRefused` when it is reached through a link.

    A workspace copied or mounted elsewhere (resumed on another host) is where it is now:
    its `workspace` becomes the folder's (`<root>/.lightscientist/workers/<id>`)."""
    try:
        raw = json.loads(read_text(folder / "worker.json"))
        record = WorkerRecord.from_dict(raw)
    except (FileNotFoundError, NotADirectoryError, ValueError, KeyError, TypeError):
        return None
    here = folder.absolute().parents[2]
    if record.workspace and Path(record.workspace) != here and folder.parent.name == "workers":
        record = dataclasses.replace(record, workspace=str(here))
    return record


def save_record(folder: Path, record: WorkerRecord, *, flush: bool = False) -> None:
    """Write both files (`worker.json` flushed to disk, but when the supervisor agent's turn
    settles and `flush` is not asked); anything that looks like a key or token is redacted
    first.

    The supervisor agent's turn ends at every decision: what the decision changed is on disk
    at once in layer 1's and layer 2's own files, and a record a power loss left `running`
    is what `supervisor.recovery` settles (that a turn began is always flushed). A record
    moved to another thread is flushed before the old thread is dropped (`flush`)."""
    durable = flush or record.role != Role.SUPERVISOR or record.status == WorkerStatus.RUNNING
    shown = dataclasses.replace(
        record,
        result=_redacted(record.result),
        error=redact(record.error) if record.error else None,
        question=redact(record.question) if record.question else None,
    )
    write_json_atomic(folder / "worker.json", shown.to_dict(), durable=durable)
    # rendered from the record at every save: a power loss may leave the one before
    write_text_atomic(folder / "agent-run.md", render_delivery(shown), durable=False)


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def render_delivery(r: WorkerRecord) -> str:
    """The human-readable delivery record of one worker."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(r.updated_at))
    p = r.progress
    lines = [
        f"# Worker {r.id} · {r.role}",
        "",
        f"- stage: `{r.stage or '-'}` (task `{r.task_id or '-'}`)",
        f"- status: **{r.status}** (updated {when})",
        f"- model calls {p.model_calls}, tool calls {p.tool_calls}, steps {p.steps}",
        "",
    ]
    if r.goal:
        lines += ["## Goal", "", r.goal, ""]
    lines += ["## Files written", ""] + ([f"- `{f}`" for f in r.files_written] or ["(none)"])
    lines += ["", "## Commands run", ""] + ([f"- `{c}`" for c in r.commands] or ["(none)"])
    lines += ["", "## How it ended", ""]
    result = r.result or {}
    if r.status == WorkerStatus.WAITING:
        lines.append(f"Waiting for an answer: {r.question}")
    elif r.status == WorkerStatus.BACKGROUND:
        lines.append(f"Suspended in the background: {result.get('reason', '')}")
    elif result.get("kind") == "complete_stage":
        lines += [
            result.get("summary", ""),
            "",
            "Outputs: " + ", ".join(f"`{o}`" for o in result.get("outputs") or []),
            f"Suggested next stage: `{result.get('next_stage')}`",
        ]
    elif result:
        lines.append(result.get("notes") or result.get("text") or json.dumps(result))
    if r.error:
        lines += ["", f"Error: {r.error}"]
    if r.status == WorkerStatus.RUNNING:
        lines.append("Still running.")
    return "\n".join(lines).rstrip() + "\n"


def id_order(name: str) -> int:
    """The number of a worker id (`w12` -> 12), for sorting ids in creation order."""
    digits = name[1:]
    return int(digits) if digits.isdigit() else 0
