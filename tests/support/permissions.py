"""A coding agent's permission request the unit tests share: an edit of analysis.py, with
three options (allow once, allow always, reject)."""

from __future__ import annotations

from lightscientist_jupyter.values.permission import PermissionOption, PermissionRequest

OPTIONS = (
    PermissionOption("allow", "Allow once", "allow_once"),
    PermissionOption("always", "Always allow", "allow_always"),
    PermissionOption("reject", "Reject", "reject_once"),
)
EDIT = PermissionRequest(
    agent="codex",
    title="Edit analysis.py",
    kind="edit",
    options=OPTIONS,
    paths=("analysis.py",),
    old_text="import numpy\nx = 1\n",
    new_text="import numpy\nx = 2\n",
    detail="edit /ws/analysis.py:\nimport numpy\nx = 2",
)
