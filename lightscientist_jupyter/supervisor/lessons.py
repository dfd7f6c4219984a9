"""The lessons of a project, drawn by a worker after a rejected gate and when it ends.

Layer 1 files each stage's result as a finding by itself, and a rejected gate's visit as a
lesson in the researcher's words; what a rejection or the whole project teaches a later one —
what worked, what failed and why — takes judgement, so a worker draws it: one session,
labelled `lessons`, with the project's goal, the occasion (the rejection and its reason, or
the end) and its `PROCESS.md` digest, asked for a few self-contained lessons as its
`complete_stage` summary, one a line. Layer 1 files them (`ResearchController.file_lessons`),
each occasion once (`lessons_owed`).

It is a worker like the others (its calls are metered, recorded and replayed; its tools are a
worker's, `recall` included), but no stage's: the supervisor agent does not hear of it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time

from lightscientist_jupyter.runtime.protocol import TASK_TITLE, render_header
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.supervisor import prompts
from lightscientist_jupyter.values.task import LESSONS_STAGE
from lightscientist_jupyter.vocab import Role, WorkerStatus

MAX_LESSONS = 6
MAX_REJECT_LESSONS = 3
WAIT_S = 600.0
"""How long the project's end waits for its lessons at most."""
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def lessons_message(goal: str, why: str, digest: str, reason: str = "") -> str:
    fields = {
        "role": "worker",
        "goal": goal,
        "stage": LESSONS_STAGE,
        "task_id": f"{LESSONS_STAGE}#{why}",
        "label": LESSONS_STAGE,
        "why": why,
        "reason": reason,
        "process_md": "/PROCESS.md",
        "outputs": [],
        "allowed_next": ["done"],
    }
    occasion = (
        f"At a gate, {reason}. Read PROCESS.md (and any file it names that you need) and "
        f"draw at most {MAX_REJECT_LESSONS} lessons this rejection teaches a later project "
        "on a related question: what was wrong, and how to have it right before the gate."
        if reason
        else "The project has ended. Read PROCESS.md (and any file it names that you need) "
        f"and draw at most {MAX_LESSONS} lessons a later project on a related question "
        "should know: what worked, what failed, and why."
    )
    body = (
        f"{occasion} Each lesson is one self-contained sentence naming the method, data or "
        "setting it is about (it is read without this project). Write no file. Call "
        "complete_stage with the lessons as the summary, one per line, no outputs, and next "
        "stage 'done'.\n\n" + prompts.PROCESS_TITLE + digest
    )
    return render_header(TASK_TITLE, fields, body)


def lesson_lines(summary: str) -> list[str]:
    """The lessons a worker's summary holds: one per non-blank line, bullets taken off."""
    lines = [_BULLET.sub("", line).strip() for line in summary.splitlines()]
    return [line for line in lines if line][:MAX_LESSONS]


@dataclasses.dataclass(frozen=True)
class Drawn:
    """What a lessons worker gave: its lessons, or why there are none."""

    lessons: list[str]
    missing: str = ""
    """One line: why no lesson was drawn ('' when the worker delivered)."""


def draw_lessons(
    runtime: ExecutionRuntime,
    goal: str,
    why: str,
    process_text: str,
    stop: threading.Event,
    *,
    wait_s: float = WAIT_S,
    memory_on: bool = True,
    reason: str = "",
) -> Drawn:
    """Run a lessons worker to its end and return what it drew; no lesson, and why, when it
    failed, was stopped or ran out of time."""
    spec = WorkerSpec(
        message=lessons_message(goal, why, prompts.process_digest(process_text), reason),
        role=Role.WORKER,
        stage=LESSONS_STAGE,
        task_id=f"{LESSONS_STAGE}#{why}",
        goal=goal,
        labels={"label": LESSONS_STAGE},
        memory=memory_on,
    )
    worker_id = runtime.start(spec)
    deadline = time.monotonic() + wait_s
    while not runtime.wait(worker_id, 0.2):
        record = runtime.get(worker_id)
        if stop.is_set() or record.held or time.monotonic() > deadline:
            runtime.cancel(worker_id)
            return Drawn([], f"no lessons drawn: the lessons worker {worker_id} was stopped")
    record = runtime.get(worker_id)
    if record.status != WorkerStatus.COMPLETED:
        return Drawn([], f"no lessons drawn: the lessons worker {worker_id} ended {record.status}")
    most = MAX_REJECT_LESSONS if reason else MAX_LESSONS
    lessons = lesson_lines(str((record.result or {}).get("summary") or ""))[:most]
    return Drawn(lessons, "" if lessons else f"the lessons worker {worker_id} drew none")
