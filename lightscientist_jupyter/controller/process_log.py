"""`PROCESS.md`: the project's memory, one short entry per finished stage.

Later stages read this file instead of any history, so no prompt grows with the project.
Entries are appended, never rewritten. Each carries a hidden key (`<!-- entry: stage#visit -->`)
so applying the same finish twice (a retry after a crash) never writes a second entry.

Workers' commands can write the workspace, so they can also put a link (or a pipe) where
`PROCESS.md` was. The controller keeps its own copy of the file in `.lightscientist/`
(`process.md`, out of the sandbox's sight), appends each entry to both, and when the
workspace's copy is refused (`beneath.PathRefused`) it puts a regular file back in its place
from its own copy and says so. A rewind or a fork removes the copy; the next entry makes it
again from the restored `PROCESS.md`.

Every text that goes in (the goal, summaries, decisions and their comments) has its
control characters escaped (`plain`).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from pathlib import Path

from lightscientist_jupyter._fs import append_text, read_text, write_text_atomic
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.workspace import Workspace

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


def plain(text: str) -> str:
    """`text` as PROCESS.md holds it: control and format characters (ESC, BEL, a newline,
    U+202E …) written as escapes (`\\x1b`), as the command line prints them, a tab kept.
    Whatever a model, a reviewer or a goal put in cannot drive the terminal or the editor
    of the next person who opens the file, nor start a line of its own."""
    return "\t".join(printable(part) for part in str(text).split("\t"))


def header(goal: str, stages_file: str, mode: str, created: float) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(created))
    return (
        f"# Research process\n\n"
        f"**Goal:** {plain(goal)}\n\n"
        f"Started {when} · mode `{plain(mode)}` · stage table `{plain(stages_file)}`\n\n"
        "Each finished stage appends an entry below. Read this file to know what has been "
        "done; the files listed under each entry hold the details.\n"
    )


def render(entry: ProcessEntry) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.at))
    parts = [f"\n## {plain(entry.stage)} · {when}\n<!-- entry: {plain(entry.key)} -->\n"]
    lines = clip_summary(entry.summary) or ["(no summary given)"]
    parts.extend(f"{plain(line)}\n" for line in lines)
    if entry.outputs:
        parts.append("\nOutputs: " + ", ".join(f"`{plain(o)}`" for o in entry.outputs) + "\n")
    if entry.decision:
        parts.append(f"\nDecision: {plain(entry.decision)}\n")
    if entry.usage:
        parts.append(f"\nUsage: {plain(entry.usage)}\n")
    return "".join(parts)


def own_copy(ws: Workspace) -> Path:
    """The controller's copy of `PROCESS.md` (see the module docstring)."""
    return ws.state_dir / "process.md"


def _own_text(ws: Workspace) -> str:
    """The controller's copy, made from the workspace's `PROCESS.md` when there is none."""
    try:
        return read_text(own_copy(ws))
    except FileNotFoundError:
        pass
    try:
        text = read_text(ws.process_md)
    except (FileNotFoundError, PathRefused):
        text = ""
    write_text_atomic(own_copy(ws), text)
    return text


def existing_keys(ws: Workspace) -> set[str]:
    return set(_KEY.findall(_own_text(ws)))


Notice = Callable[[str], None]
"""Told, in one line, that `PROCESS.md` was refused and written again as a file."""


def ensure_header(
    ws: Workspace,
    goal: str,
    stages_file: str,
    mode: str,
    created: float,
    notice: Notice | None = None,
) -> None:
    if not _own_text(ws):
        _append(ws, header(goal, stages_file, mode, created), notice)


def append_entry(ws: Workspace, entry: ProcessEntry, notice: Notice | None = None) -> bool:
    """Append `entry` unless one with its key is already there; returns whether it wrote."""
    if plain(entry.key) in existing_keys(ws):
        return False
    _append(ws, render(entry), notice)
    return True


def _append(ws: Workspace, text: str, notice: Notice | None) -> None:
    append_text(own_copy(ws), text)
    try:
        append_text(ws.process_md, text)
    except PathRefused as refused:
        write_text_atomic(ws.process_md, read_text(own_copy(ws)))
        if notice is not None:
            notice(f"{refused}; PROCESS.md was written again as a file from the project's copy")
