"""Ending a job's whole process tree, its sandbox included, at any moment of its life.

A sandboxed job is `bwrap` (its process group's leader) → the sandbox's init, in a PID
namespace and a session of its own → the command. Jobs' sandboxes run without
`--die-with-parent`, so that a job outlives a run that was killed (`resume` finds it again
from its record); so ending the leader's group alone would leave the sandbox running, and in
its first milliseconds the init has not even made its own session yet. `end_tree` therefore
freezes the tree first — SIGSTOP from the group down, again and again, until every process
in it is stopped, so that nothing forks or is reparented meanwhile — then sends every member
SIGTERM and SIGCONT and, after a grace period, SIGKILL to whatever is left; the sandbox's init
ignores SIGTERM from outside its namespace, and its SIGKILL takes the namespace with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from lightscientist_jupyter.runtime.sandbox.shell import GRACE_S, group_alive

FREEZE_WAIT_S = 2.0
"""The longest the tree may take to stop (a process in an uninterruptible wait stops late)."""
_STOPPED = ("T", "t", "Z", "X")


def end_tree(pgid: int, grace: float = GRACE_S) -> None:
    """End process group `pgid` and every descendant of its members, whatever their group."""
    try:
        os.killpg(pgid, signal.SIGSTOP)
    except ProcessLookupError:
        return
    members = _freeze(pgid)
    for sig in (signal.SIGTERM, signal.SIGCONT):
        for pid, start in members.items():
            _signal(pid, start, sig)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        table = _table()
        if not any(_alive(table, pid, start) for pid, start in members.items()):
            break
        time.sleep(0.05)
    for pid, start in members.items():
        _signal(pid, start, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    end = time.monotonic() + grace  # the kernel tears a namespace down asynchronously
    while time.monotonic() < end and group_alive(pgid):
        time.sleep(0.02)


def _freeze(pgid: int) -> dict[int, str]:
    """Stop the group's members and all their descendants; returns each one's start time."""
    members: dict[int, str] = {}
    deadline = time.monotonic() + FREEZE_WAIT_S
    while True:
        table = _table()
        tree = _tree(table, pgid)
        new = [pid for pid in tree if pid not in members]
        for pid in new:
            members[pid] = table[pid][3]
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        running = [pid for pid in tree if table[pid][0] not in _STOPPED]
        if (not new and not running) or time.monotonic() > deadline:
            return members
        time.sleep(0.002)


def _tree(table: dict[int, Row], pgid: int) -> list[int]:
    """The members of group `pgid` and every descendant of theirs."""
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = [pid for pid, (_, _, group, _) in table.items() if group == pgid]
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


Row = tuple[str, int, int, str]
"""(state, parent, process group, start time) of a process."""


def _read(pid: int | str) -> Row | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return (fields[0], int(fields[1]), int(fields[2]), fields[19]) if len(fields) > 19 else None


def _table() -> dict[int, Row]:
    """Every process's row, from /proc."""
    rows = ((int(e.name), _read(e.name)) for e in Path("/proc").iterdir() if e.name.isdigit())
    return {pid: row for pid, row in rows if row is not None}


def _alive(table: dict[int, Row], pid: int, start: str) -> bool:
    row = table.get(pid)
    return row is not None and row[3] == start and row[0] not in ("Z", "X")


def _signal(pid: int, start: str, sig: int) -> None:
    """Signal `pid` unless it is gone (or its pid now belongs to another process)."""
    row = _read(pid)
    if row is not None and _alive({pid: row}, pid, start):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
