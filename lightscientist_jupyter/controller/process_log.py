"""`PROCESS.md`: the project's memory, one short entry per finished stage.

Later stages read this file instead of any history, so no prompt grows with the project.
Entries are appended, never rewritten. Each carries a hidden key (`<!-- entry: stage#visit -->`)
so applying the same finish twice (a retry after a crash) never writes a second entry.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

from lightscientist_jupyter._fs import append_text

MAX_SUMMARY_LINES = 10
_KEY = re.compile(r"<!-- entry: (\S+) -->")


@dataclasses.dataclass(frozen=True)
class ProcessEntry:
    key: str
    """Unique per finished stage visit, e.g. `experiment.loop#3`."""
    stage: str
    at: float
    summary: str
    outputs: tuple[str, ...] = ()
    decision: str | None = None
    """For gates and questions: who decided what, with the comment."""
    usage: str | None = None
    """The stage visit's tokens and cost (`controller.budget.usage_line`)."""


def clip_summary(summary: str, limit: int = MAX_SUMMARY_LINES) -> list[str]:
    """The summary's non-blank lines, cut to `limit` (a longer one is cut, not refused)."""
    lines = [line.rstrip() for line in summary.strip().splitlines() if line.strip()]
    if len(lines) > limit:
        lines = lines[: limit - 1] + [f"(… {len(lines) - limit + 1} more line(s) cut)"]
    return lines


def header(goal: str, stages_file: str, mode: str, created: float) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(created))
    return (
        f"# Research process\n\n"
        f"**Goal:** {goal}\n\n"
        f"Started {when} · mode `{mode}` · stage table `{stages_file}`\n\n"
        "Each finished stage appends an entry below. Read this file to know what has been "
        "done; the files listed under each entry hold the details.\n"
    )


def render(entry: ProcessEntry) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.at))
    parts = [f"\n## {entry.stage} · {when}\n<!-- entry: {entry.key} -->\n"]
    parts.extend(f"{line}\n" for line in clip_summary(entry.summary) or ["(no summary given)"])
    if entry.outputs:
        parts.append("\nOutputs: " + ", ".join(f"`{o}`" for o in entry.outputs) + "\n")
    if entry.decision:
        parts.append(f"\nDecision: {entry.decision}\n")
    if entry.usage:
        parts.append(f"\nUsage: {entry.usage}\n")
    return "".join(parts)


def existing_keys(path: Path) -> set[str]:
    try:
        return set(_KEY.findall(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return set()


def ensure_header(path: Path, goal: str, stages_file: str, mode: str, created: float) -> None:
    if not path.exists() or path.stat().st_size == 0:
        append_text(path, header(goal, stages_file, mode, created))


def append_entry(path: Path, entry: ProcessEntry) -> bool:
    """Append `entry` unless one with its key is already there; returns whether it wrote."""
    if entry.key in existing_keys(path):
        return False
    append_text(path, render(entry))
    return True
