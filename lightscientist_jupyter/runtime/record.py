"""Each worker's files: `worker.json` (its record, for a restart) and `agent-run.md`
(the delivery record a person or a later stage reads)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import write_json_atomic, write_text_atomic
from lightscientist_jupyter.runtime.redact import redact


def load_record(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / "worker.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def save_record(folder: Path, record: dict[str, Any]) -> None:
    """Write both files; anything that looks like a key or token is redacted first."""
    shown = {**record, "result": _redacted(record.get("result")),
             "error": redact(record["error"]) if record.get("error") else None,
             "question": redact(record["question"]) if record.get("question") else None}
    write_json_atomic(folder / "worker.json", shown)
    write_text_atomic(folder / "agent-run.md", render_delivery(shown))


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def render_delivery(r: dict[str, Any]) -> str:
    """The human-readable delivery record of one worker."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(r.get("updated_at", 0)))
    p = r.get("progress") or {}
    lines = [f"# Worker {r['id']} · {r.get('role', 'worker')}", "",
             f"- stage: `{r.get('stage') or '-'}` (task `{r.get('task_id') or '-'}`)",
             f"- status: **{r.get('status')}** (updated {when})",
             f"- model calls {p.get('model_calls', 0)}, tool calls {p.get('tool_calls', 0)}, "
             f"steps {p.get('steps', 0)}", ""]
    if r.get("goal"):
        lines += ["## Goal", "", r["goal"], ""]
    files = r.get("files_written") or []
    lines += ["## Files written", ""] + ([f"- `{f}`" for f in files] or ["(none)"]) + [""]
    commands = r.get("commands") or []
    lines += ["## Commands run", ""] + ([f"- `{c}`" for c in commands] or ["(none)"]) + [""]
    lines += ["## How it ended", ""]
    result = r.get("result") or {}
    status = r.get("status")
    if status == "waiting":
        lines.append(f"Waiting for an answer: {r.get('question')}")
    elif status == "background":
        lines.append(f"Suspended in the background: {result.get('reason', '')}")
    elif result.get("kind") == "complete_stage":
        lines += [result.get("summary", ""), "",
                  "Outputs: " + ", ".join(f"`{o}`" for o in result.get("outputs") or []),
                  f"Suggested next stage: `{result.get('next_stage')}`"]
    elif result:
        lines.append(result.get("notes") or result.get("text") or json.dumps(result))
    if r.get("error"):
        lines += ["", f"Error: {r['error']}"]
    if status == "running":
        lines.append("Still running.")
    return "\n".join(lines).rstrip() + "\n"
