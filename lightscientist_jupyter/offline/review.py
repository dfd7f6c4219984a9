"""The offline worker playing one reviewer of a review stage.

Layer 2 starts one worker per reviewer of a review stage, its task header naming the reviewer
(`reviewer`, `round`, `review_file`, the rubric's scales). The worker writes the study's
review script (`study/scripts/review_paper.py`), runs it on the paper — the script reads
paper/paper.tex and judges it from what the text holds, each reviewer weighing different
things — and completes with the review file. Layer 1 reads the scores from that file, never
from this summary.
"""

from __future__ import annotations

from lightscientist_jupyter.offline.history import History, Step
from lightscientist_jupyter.offline.steps import Task, complete, last_line, run, shell_words, write
from lightscientist_jupyter.offline.study.files import script_text
from lightscientist_jupyter.values.review import REVIEWER_LABEL, review_file

SCRIPT = "paper/reviews/review_paper.py"


def is_reviewer(task: Task) -> bool:
    """Whether the task is one reviewer of a review stage."""
    return bool(task.fields.get("reviewer")) or task.label.startswith(REVIEWER_LABEL)


def plan_reviewer(task: Task, h: History) -> list[Step]:
    """Write the review script, run it on the paper, complete with the review file."""
    number = int(task.fields.get("reviewer") or task.label.removeprefix(REVIEWER_LABEL) or 1)
    round_number = int(task.fields.get("round") or task.visit)
    output = str(task.fields.get("review_file") or review_file(number))
    command = shell_words("python", SCRIPT, str(number), str(round_number), output)
    return [
        write("script", SCRIPT, script_text("review_paper.py")),
        run("review", command),
        complete(
            task,
            [f"Reviewer {number}, round {round_number}: " + last_line(h.result("review"))],
            [output],
            task.default_next,
        ),
    ]
