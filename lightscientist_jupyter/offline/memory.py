"""The offline scientist and the user's memory: it recalls before it surveys, and draws the
project's lessons after a rejected gate and at its end.

The survey stage first calls `recall` (the workers' memory tool) on the study's question, as
a model would before searching the literature, and says in its summary how many entries of
earlier projects it found. The lessons worker (`supervisor.lessons`) reads `PROCESS.md` and
draws its lessons from what the entries say — the analysis's result, what the reviewers sent
back and why, a gate the researcher rejected and the reason — so they are the run's own, not
fixed text: a different run (a rejected gate, another search) teaches other lessons.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.history import Act, History, Step
from lightscientist_jupyter.offline.steps import Task, read

RECALL_QUERY = "learning-rate warmup small MLP lessons"
_RECALLED = re.compile(r"From earlier projects \(the user's memory\): (\d+)")
_ENTRY = re.compile(r"(?m)^## ")
_DECISION = re.compile(r"(?m)^Decision: (.+)$")
_ASKED = re.compile(r"\*\*Asked:\*\* (.+)")
_NOT_SAID = ("<!--", "Outputs:", "Decision:", "Usage:", "(Offline")
RESPONSE = "paper/response.md"
PROCESS_LINES = 5000


def recall_step() -> Act:
    return Act("recall", tools.RECALL, {"query": RECALL_QUERY, "k": 3})


def recalled_line(h: History) -> list[str]:
    """The survey summary's line on what `recall` found; none when it found nothing."""
    found = _RECALLED.search(h.result("recall"))
    count = int(found.group(1)) if found else 0
    if not count:
        return []
    return [
        f"Recalled {count} entr{'y' if count == 1 else 'ies'} of earlier projects on warmup "
        "from the user's memory (recall); the task header lists the lessons."
    ]


def plan_lessons(task: Task, h: History) -> list[Step]:
    """Read PROCESS.md (and the response to the reviewers it names), then deliver the
    lessons they teach."""
    process = h.result("process") if h.done("process") else ""
    steps: list[Step] = [  # all of it: read_file gives 100 lines unless asked for more
        Act("process", tools.READ, {"file_path": "/PROCESS.md", "limit": PROCESS_LINES})
    ]
    if RESPONSE in process:
        steps.append(read("response", "/" + RESPONSE))
    asked = _ASKED.findall(h.result("response")) if h.done("response") else []
    reason = str(task.fields.get("reason") or "")
    lessons = [rejection_lesson(reason)] if reason else lessons_from(process, asked)
    steps.append(
        Act(
            "complete",
            tools.COMPLETE,
            {"summary": "\n".join(lessons), "outputs": [], "next_stage": "done"},
        )
    )
    return steps


def rejection_lesson(reason: str) -> str:
    """The lesson of a rejected gate, from its reason (the researcher's words)."""
    return (
        f"In a learning-rate warmup study {reason.rstrip('.')}: settle that point before "
        "asking for approval."
    )


def lessons_from(process: str, asked: Sequence[str] = ()) -> list[str]:
    """The lessons of a `PROCESS.md` at the project's end (and of what the reviewers
    `asked`): one for each entry that teaches one, in order. A gate the researcher rejected
    had its lessons drawn then (`rejection_lesson`)."""
    lessons: list[str] = []
    for entry in _ENTRY.split(process)[1:]:
        lines = [line.strip() for line in entry.splitlines() if line.strip()]
        if not lines:
            continue
        stage = lines[0].split(" · ")[0]
        body = [line for line in lines[1:] if not line.startswith(_NOT_SAID)]
        decision = _DECISION.search(entry)
        verdict = decision.group(1) if decision else ""
        if "sent back" in verdict and body:
            wanted = "; ".join(a.rstrip(".") for a in asked) or "see its reviews"
            lessons.append(
                f"Reviewers of a learning-rate warmup paper sent the first draft back "
                f"({body[0]}); they asked: {wanted}. Put these in the first draft."
            )
        elif stage == "experiment.loop" and body:
            lessons.append(
                "Searching learning-rate warmup variants for a small MLP: " + " ".join(body)
            )
    return lessons
