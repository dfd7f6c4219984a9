"""The research goal: checked once when a project starts, stored once (in `state.json`).

A goal is bounded (`MAX_GOAL_CHARS` characters, or `LIGHTSCIENTIST_MAX_GOAL_CHARS` from the
environment, or the `max_goal_chars` argument of `Project.create`), must be valid UTF-8 (an
argument the shell could not decode reaches Python as lone surrogates), and is refused before
any file is written. Prompts and records get `prompt_goal`: the goal cut to
`PROMPT_GOAL_CHARS` with a note naming where the whole text is, so that no checkpoint carries
a long goal in every step.
"""

from __future__ import annotations

import os

from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.redact import redact

MAX_GOAL_CHARS = 8000
GOAL_BOUND_ENV = "LIGHTSCIENTIST_MAX_GOAL_CHARS"
PROMPT_GOAL_CHARS = 2000


def goal_bound(limit: int | None = None) -> int:
    """The bound in force: `limit`, else the environment's, else `MAX_GOAL_CHARS`."""
    if limit is not None:
        return limit
    raw = os.environ.get(GOAL_BOUND_ENV, "").strip()
    if not raw:
        return MAX_GOAL_CHARS
    if not raw.isdigit() or int(raw) < 1:
        raise ControllerError(f"{GOAL_BOUND_ENV}={raw!r} must be a whole number of characters")
    return int(raw)


def check_goal(goal: str, limit: int | None = None) -> str:
    """The goal as it is stored (whitespace runs made one space, anything like a key
    redacted, as a reply's comment is: it reaches state.json, PROCESS.md, the history and
    every worker's task), or `ControllerError`."""
    try:
        goal.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = goal[exc.start]
        byte = f"0x{ord(bad) - 0xDC00:02x}" if 0xDC80 <= ord(bad) <= 0xDCFF else repr(bad)
        raise ControllerError(
            f"the research goal is not valid UTF-8 (byte {byte} at character {exc.start}); "
            "write it in UTF-8 (check the terminal's encoding) and run again"
        ) from None
    goal = " ".join(goal.split())
    if not goal:
        raise ControllerError("the research goal is empty; say what the project should find out")
    bound = goal_bound(limit)
    if len(goal) > bound:
        raise ControllerError(
            f"the research goal has {len(goal):,} characters, more than the bound of "
            f"{bound:,}; shorten it (put the details in a file of the workspace and name "
            f"that file in the goal), or raise the bound with {GOAL_BOUND_ENV}"
        )
    return redact(goal)


def prompt_goal(goal: str) -> str:
    """The goal as prompts and records carry it: whole, or cut with a note."""
    if len(goal) <= PROMPT_GOAL_CHARS:
        return goal
    return (
        f"{goal[:PROMPT_GOAL_CHARS]} … [the goal is cut here: it has {len(goal):,} "
        "characters; the whole text is the `goal` key of /.lightscientist/state.json]"
    )
