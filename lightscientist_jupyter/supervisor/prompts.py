"""What the supervisor agent and the workers are told: prompts and message builders.

No prompt grows with the project: the supervisor's input per decision is one event under a
fixed header; a worker's first message carries its task, the path of its skill and a digest
of PROCESS.md whose size is bounded (newest entries in full, older ones as a one-line index).
"""

from __future__ import annotations

import re
from typing import Any

from lightscientist_jupyter.runtime.protocol import EVENT_TITLE, TASK_TITLE, render_header
from lightscientist_jupyter.runtime.redact import clip
from lightscientist_jupyter.supervisor.records import SchedulingEvent
from lightscientist_jupyter.supervisor.task import StageTask

PROCESS_DIGEST_CHARS = 6000
EVENT_FIELD_CHARS = 1500

SUPERVISOR_PROMPT = """You are the LightScientist supervisor. You run the workers of one research
stage at a time. Each message you get is ONE scheduling event (a worker finished, failed, is
waiting for an answer, went to the background, stalled; the stage started; a finish was
refused; the user answered). Decide what to do with your tools, then reply with exactly one
line: `done` (you finished the stage with finish_stage and it was accepted), `failed` (the
stage cannot be completed), or `continue` (more events are expected).

Rules:
- A worker suggests the next stage with complete_stage; you decide. Call finish_stage with a
  5-10 line summary, the outputs and the next stage when the stage's work is really done.
  Layer 1 checks the outputs and the allowed stages; if it refuses, act on the reason.
- Prefer resuming or reusing workers to starting new ones; keep parallel workers few (at most
  two or three); cancel rarely.
- Answer a waiting worker with resume_worker(answer=...). A worker in the background asked to
  be checked later: schedule_resume it; it will be resumed without asking you again.
- Use request_user_decision only for a project-level question a human must answer.
- Use get_task_info, list_workers and get_worker when you need more than the event says."""


def event_message(event: SchedulingEvent, task: StageTask, attempts: int) -> str:
    """The supervisor's whole input for one decision: a fixed header and the event."""
    fields: dict[str, Any] = {
        "event": event.kind, "task_id": task.task_id, "stage": task.stage,
        "visit": task.visit, "goal": clip(task.goal, 200), "worker": event.worker_id,
        "attempts": attempts,
    }
    for key, value in event.data.items():
        if isinstance(value, str):
            value = clip(value, EVENT_FIELD_CHARS)
        elif isinstance(value, dict):
            value = {k: clip(v, EVENT_FIELD_CHARS) if isinstance(v, str) else v
                     for k, v in value.items()}
        fields[key] = value
    return render_header(EVENT_TITLE, fields,
                         "Decide with your tools, then reply with one line: done, failed or "
                         "continue.")


def process_digest(text: str, max_chars: int = PROCESS_DIGEST_CHARS) -> str:
    """PROCESS.md bounded: the header, newest entries in full, older ones one line each."""
    if len(text) <= max_chars:
        return text
    parts = re.split(r"(?m)^(?=## )", text)
    header, entries = parts[0], parts[1:]
    kept: list[str] = []
    budget = max_chars - len(header) - 400
    for entry in reversed(entries):
        if len(entry) > budget and kept:
            break
        kept.insert(0, entry)
        budget -= len(entry)
    older = entries[: len(entries) - len(kept)]
    index = []
    for entry in older:
        lines = [line for line in entry.splitlines() if line.strip()
                 and not line.startswith("<!--")]
        title = lines[0][3:] if lines else "?"
        first = lines[1] if len(lines) > 1 else ""
        index.append(f"- {title}: {first[:100]}")
    # the index itself is bounded: the oldest lines fold into a count
    max_index = max(5, (max_chars // 4) // 110)
    if len(index) > max_index:
        index = [f"- ({len(index) - max_index + 1} older entries; read PROCESS.md)"] + index[-max_index + 1:]
    return (header.rstrip() + "\n\n## Earlier entries (one line each; PROCESS.md has them all)\n"
            + "\n".join(index) + "\n\n" + "".join(kept))


def worker_message(task: StageTask, *, skill: str, digest: str, label: str = "",
                   instructions: str = "") -> str:
    """A worker's first message: its task header, how to work, and the PROCESS.md digest."""
    fields = {
        "role": "worker", "goal": task.goal, "stage": task.stage, "visit": task.visit,
        "task_id": task.task_id, "skill": skill, "outputs": list(task.outputs),
        "default_next": task.default_next, "allowed_next": list(task.allowed_next),
        "process_md": "/PROCESS.md", "label": label, "instructions": instructions,
        "feedback": task.feedback or "",
    }
    body = (f"Read your skill file {skill} first. Write the outputs listed above (paths relative "
            "to the workspace root '/'), then call complete_stage with a 5-10 line summary, the "
            "files you wrote and one of the allowed next stages.\n\n"
            "## PROCESS.md (the project so far)\n\n" + digest)
    return render_header(TASK_TITLE, fields, body)
