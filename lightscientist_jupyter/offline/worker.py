"""The offline model playing a worker: the task header read, the next step of its plan chosen.

What a stage's work is comes from the playbook (`offline.playbook`), keyed by the stage id the
task names. A stage the playbook does not know (a user's own table) still gets an honest
result: a short note in each required output saying the offline demo model wrote it, and the
task's default next stage.
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.history import Act, History, Say, Step
from lightscientist_jupyter.offline.playbook import is_helper, plan_for
from lightscientist_jupyter.offline.review import is_reviewer, plan_reviewer
from lightscientist_jupyter.offline.search import is_node, plan_node
from lightscientist_jupyter.offline.steps import Task, complete, first_pending, read, write
from lightscientist_jupyter.offline.study.plans import unknown_stage_note
from lightscientist_jupyter.runtime.session.lifecycle import CANCEL_NOTICE


def plan_unknown(task: Task, h: History) -> list[Step]:
    """A stage the playbook does not know: an honest note per required output, then complete."""
    steps: list[Step] = [
        write(f"out{i}", out, unknown_stage_note(task.stage, task.goal, out))
        for i, out in enumerate(task.outputs)
    ]
    steps.append(
        complete(
            task,
            [
                f"Offline demo model: wrote a placeholder note for each "
                f"required output of the unknown stage '{task.stage}'."
            ],
            task.outputs,
            task.default_next,
        )
    )
    return steps


def decide_worker(fields: dict[str, Any], h: History, loops: int) -> Step:
    task = Task(fields, loops)
    if h.last_human.startswith(CANCEL_NOTICE[:40]):
        if not h.done("finalize"):
            return Act(
                "finalize",
                tools.STOP,
                {
                    "notes": f"Offline worker for {task.stage} stopped on request after "
                    f"{len(h.results)} tool call(s); the files it wrote stay in the "
                    "workspace."
                },
            )
        return Say("Cancelled.")
    if is_node(task):  # a node of a search stage: its header says all it needs
        step = first_pending(h, plan_node(task, h))
        return step if step is not None else Say("Node done.")
    if is_reviewer(task):  # one reviewer of a review stage: its header says all it needs
        step = first_pending(h, plan_reviewer(task, h))
        return step if step is not None else Say("Review written.")
    steps = (plan_for(task.stage) or plan_unknown)(task, h)
    if task.skill and not is_helper(task.label):  # a helper's instructions say what to do
        steps = [read("skill", task.skill), *steps]
    step = first_pending(h, steps)
    return step if step is not None else Say("Stage work delivered.")
