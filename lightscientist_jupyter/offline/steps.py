"""The offline worker's vocabulary: its task read from the header, and the steps it takes.

A plan is a list of steps; each step is one tool call (`Act`) or several made together; the
first step whose calls are not all answered yet is the next reply (`first_pending`). Tools are
named by need (`offline.tools`), never by name.
"""

from __future__ import annotations

import shlex
from typing import Any

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.history import Act, History, Step, acts_of


class Task:
    """The fields of a worker's task header, typed."""

    def __init__(self, fields: dict[str, Any], loops: int):
        self.fields = fields
        self.stage = str(fields.get("stage", ""))
        self.goal = str(fields.get("goal", ""))
        self.skill = str(fields.get("skill", ""))
        self.label = str(fields.get("label", ""))
        self.visit = int(fields.get("visit") or 1)
        self.outputs = [str(o) for o in fields.get("outputs") or []]
        self.default_next = str(fields.get("default_next") or "")
        self.allowed = [str(a) for a in fields.get("allowed_next") or []]
        self.feedback = str(fields.get("feedback") or "")
        self.instructions = str(fields.get("instructions") or "")
        self.loops = max(1, loops)

    def next_or_default(self, preferred: str | None) -> str:
        """`preferred` when the task allows it, else the task's default next stage."""
        return preferred if preferred and preferred in self.allowed else self.default_next


def write(label: str, path: str, content: str) -> Act:
    return Act(label, tools.WRITE, {"file_path": "/" + path.lstrip("/"), "content": content})


def write_all(label: str, files: dict[str, str]) -> list[Act]:
    """One write per file, in order (labels `<label>0`, `<label>1`, ...); written one after
    the other, so a worker's record lists them in the same order every run."""
    return [write(f"{label}{i}", path, text) for i, (path, text) in enumerate(files.items())]


def read(label: str, path: str) -> Act:
    return Act(label, tools.READ, {"file_path": path})


def run(label: str, command: str, timeout: int | None = None) -> Act:
    args: dict[str, Any] = {"command": command}
    if timeout:
        args["timeout"] = timeout
    return Act(label, tools.RUN, args)


def complete(task: Task, summary: list[str], outputs: list[str], next_stage: str) -> Act:
    lines = [*summary, "(Offline demo model; the study does not depend on the goal text.)"]
    return Act(
        "complete",
        tools.COMPLETE,
        {"summary": "\n".join(lines), "outputs": outputs, "next_stage": next_stage},
    )


def with_feedback(task: Task, text: str) -> str:
    if not task.feedback:
        return text
    return (
        f"{text.rstrip()}\n\n## Reviewer feedback addressed\n\n> {task.feedback}\n\n"
        "This version was regenerated after the rejection above; the offline demo model "
        "records the feedback but cannot redesign the study around it.\n"
    )


def last_line(output: str) -> str:
    """The last line a command printed, without the shell tool's own status footer."""
    lines = [
        line
        for line in output.strip().splitlines()
        if line.strip() and not line.startswith("[Command")
    ]
    return lines[-1][:120] if lines else "(no output)"


def shell_words(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


def first_pending(history: History, steps: list[Step]) -> Step | None:
    """The first step with a call not yet answered (only its unanswered calls), or None."""
    for step in steps:
        pending = [a for a in acts_of(step) if not history.done(a.label)]
        if pending:
            return pending if isinstance(step, list) else step
    return None
