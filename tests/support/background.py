"""Stop the background runs a test left: the server carries a reply or a hand-over step out on
a project nobody runs and lets the project go on in a detached `lightscientist resume --wait`
(`app.controls.go_on`), which would otherwise wait at the next gate after the test ended."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.workspace import Workspace
from support.waiting import wait_for


def stop_background_runs(root: Path) -> list[int]:
    """Kill the process group of every run of another process below `root`; their pids."""
    stopped = []
    for state in root.rglob(".lightscientist/state.json"):
        ws = Workspace.at(state.parent.parent)
        holder = read_holder(ws) or {}
        pid = holder.get("pid")
        if not isinstance(pid, int) or pid == os.getpid():
            continue
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        wait_for(lambda ws=ws: read_holder(ws) is None, f"{ws.root} released")
        stopped.append(pid)
    return stopped
