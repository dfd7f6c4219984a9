"""Links planted as a worker plants them: a command run in a workspace's real bubblewrap
sandbox, through the backend whose `execute` is the model's tool.

Without a working bubblewrap the calling test is skipped, except under CI (`CI=true`), where
it fails: CI installs it (scripts/setup).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from lightscientist_jupyter.runtime.sandbox import bwrap
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA the user's key\n"
"""What a file outside the workspace holds (the tests check it never shows)."""


def need_bwrap() -> None:
    why = bwrap.problem()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap is needed under CI: {why}")
        pytest.skip(why)


def sandboxed(root: Path, command: str) -> str:
    """Run `command` in `root` as a sandboxed worker's command does; its output."""
    need_bwrap()
    groups = ProcessGroups()
    try:
        backend = WorkspaceBackend(
            root,
            worker_id="planter",
            cancel=threading.Event(),
            groups=groups,
            policy=ShellPolicy(sandbox=True),
        )
        result = backend.execute(command)
    finally:
        groups.kill_all()
    assert result.exit_code == 0, result.output
    return result.output
