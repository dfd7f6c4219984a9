"""The dashboard's status line: one wrapping row of chips, in the panel's words.

Status in words (`look.status_words`), stage and "stage N of M", who runs it, mode, model,
elapsed time, the event count, and the workspace path cut from its start (the whole path in
its tooltip and in a `<code>` to select). Below it, what waits or what went wrong. The banner
for a dashboard whose kernel is gone is the run controls' (`run_controls`).
"""

from __future__ import annotations

import html
import shlex
from pathlib import Path

from lightscientist_jupyter.controller import DONE
from lightscientist_jupyter.jupyter.look import chip, status_words


def resume_command(root: Path) -> str:
    """The magic that continues the project in `root` from a new kernel."""
    return f"%lightscientist resume --workspace {shlex.quote(str(root))}"


def render(
    *,
    goal: str,
    status: str,
    stage: str,
    visit: int,
    runner: str,
    mode: str,
    model: str,
    elapsed: str,
    events: int,
    root: Path,
    waiting: str = "",
    reason: str = "",
    warning: str = "",
    usage: str = "",
) -> str:
    """The status line's HTML (every value escaped); `usage`: tokens and cost, when any.
    ("stage N of M" and the time in the stage are the run controls' row, below it.)"""
    where = stage + (f" (visit {visit})" if visit > 1 else "")
    chips = [
        chip(status_words(status), status=status, title=f"status: {status}"),
        # at the end there is no stage to name: the status says done
        *([] if stage == DONE else [chip(where, title="current stage", cls="ls-code")]),
        chip(runner, title="who runs the project", cls="ls-runner-chip"),
        chip(f"mode {mode}"),
        chip(f"model {model}"),
        chip(f"elapsed {elapsed}"),
        chip(f"{events} events"),
    ]
    if usage:
        chips.append(chip(usage, title="tokens and cost of the model calls", cls="ls-usage"))
    chips += [
        chip(str(root), title=str(root), cls="ls-code ls-path-chip"),
    ]
    extra = ""
    if waiting:
        extra += f'<div class="ls-warn">Waiting for you: {html.escape(waiting)}</div>'
    if reason:  # paused (--until): what resumes it, not an error
        rule = "ls-warn" if status == "paused" else "ls-err"
        extra += f'<div class="{rule}">{html.escape(reason)}</div>'
    if warning:
        extra += f'<div class="ls-warn">⚠ {html.escape(warning)}</div>'
    return (
        f'<div class="ls-status-line"><div class="ls-card-title">LightScientist · '
        f"{html.escape(goal)}</div>"
        f'<div class="ls-row ls-live" role="group" aria-label="project status">'
        f"{''.join(chips)}</div>{extra}</div>"
    )
