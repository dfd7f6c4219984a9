"""The mark of a project a kernel is creating: `.lightscientist/starting.json`.

`%lightscientist research` returns at once and the project is created on the run's thread a
second or more later. `mark_starting` says so in the folder first, and `status`, the side
panel and the project list read it (`starting`) until the project's state is written. The
readers import nothing heavy: `status` answers without LangChain (tests/test_cli.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.workspace import STATE_DIR, Workspace


def mark_starting(ws: Workspace, goal: str, mode: str) -> Callable[[], None]:
    """Say in the folder that this process is creating a project there (`starting.json`:
    the goal, the mode, the pid): a kernel's run creates it on its own thread, a second or
    so after `%lightscientist research` returned, and until then `status`, the side panel
    and the project list show it `starting` instead of no project at all. Returns what
    takes the mark away again (and the folders it made, when they stayed empty)."""
    made = [d for d in (ws.root, ws.state_dir) if not d.exists()]
    ws.root.mkdir(parents=True, exist_ok=True)  # checked by `check_new`, as `create` makes it
    files = Beneath(ws.root)
    files.makedirs(STATE_DIR)
    mark = {
        "goal": goal,
        "mode": mode,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
    }
    files.write_text_atomic(_mark_path(ws), json.dumps(mark), durable=False)

    def unmark() -> None:
        files.unlink(_mark_path(ws))
        for folder in reversed(made):  # a creation that failed leaves the folder as it was
            with contextlib.suppress(OSError):
                folder.rmdir()

    return unmark


def starting(ws: Workspace) -> dict[str, Any] | None:
    """The mark of a project being created here (`mark_starting`), while there is no state
    yet and the process that wrote the mark lives; else None."""
    if ws.exists():
        return None
    try:
        mark = json.loads(Beneath(ws.root).read_text(_mark_path(ws)))
        os.kill(int(mark["pid"]), 0)  # a kernel that died while creating it: no project
    except PermissionError:
        pass  # a process of another user's: it lives
    except (OSError, ValueError, TypeError, KeyError, PathRefused):
        return None
    return mark if isinstance(mark, dict) else None


def _mark_path(ws: Workspace) -> str:
    return ws.starting_file.relative_to(ws.root).as_posix()
