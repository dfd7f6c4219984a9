"""Stop the background runs a test left: the server carries a reply or a hand-over step out on
a project nobody runs and lets the project go on in a detached `lightscientist resume --wait`
(`app.controls.go_on`), which would otherwise run on, and wait at the next gate, after the
test ended."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.workspace import Workspace
from support.waiting import wait_for


def _working_below(root: Path) -> set[int]:
    """The process groups, other than this one's, of the processes working in a folder below
    `root` (a background resume runs in its project's folder from its start, before it holds
    the project's lock)."""
    root = root.resolve()
    own = os.getpgid(0)
    groups = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{entry}/cwd"))
            group = os.getpgid(int(entry))
        except OSError:  # ended meanwhile, or not ours to read
            continue
        if group != own and cwd.is_relative_to(root):
            groups.add(group)
    return groups


def stop_background_runs(root: Path) -> list[int]:
    """Kill the process group of every run of another process below `root` (holding a
    project's lock, or still opening it); their pids, the holders first."""
    groups: list[int] = []
    for state in root.rglob(".lightscientist/state.json"):
        pid = (read_holder(Workspace.at(state.parent.parent)) or {}).get("pid")
        if isinstance(pid, int) and pid != os.getpid():
            groups.append(pid)
    groups += sorted(_working_below(root) - set(groups))
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    for state in root.rglob(".lightscientist/state.json"):
        ws = Workspace.at(state.parent.parent)
        wait_for(
            lambda ws=ws: (read_holder(ws) or {}).get("pid") in (None, os.getpid()),
            f"{ws.root} released",
        )
    return groups
