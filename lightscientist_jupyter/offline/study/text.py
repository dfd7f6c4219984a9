"""The offline demo's disclaimer as every note of the study opens with it."""

from __future__ import annotations

from lightscientist_jupyter.offline.study.scripts.study_common import goal_sentence
from lightscientist_jupyter.offline.study.scripts.study_design import DISCLAIMER


def disclaimer(goal: str | None = None) -> str:
    """`DISCLAIMER`, followed (when `goal` is given) by a sentence quoting the goal text."""
    return DISCLAIMER if goal is None else DISCLAIMER + goal_sentence(goal)


def note(goal: str | None = None) -> str:
    """The disclaimer as a Markdown quote: the first lines of every note the offline model
    writes."""
    return f"> **Offline demo.** {disclaimer(goal)}\n"
