"""A coding agent's permission request as both screens draw it, computed once.

The request (`values.permission.PermissionRequest`, on the pending decision) becomes a
`PermissionCard`: who asks, for which tool call, an edit's change as a gate's diff is drawn
(`diff_card.file_diff`, so `labextension/src/diff.ts` draws it on the dashboard's card and
on the side panel alike), and one button per option the agent offers, in its order and its
words. A button answers the decision through the reply every question takes: yes for an
option that allows, no for one that rejects, the option's name as the comment, which picks
it (`supervisor.permissions`).
"""

from __future__ import annotations

from lightscientist_jupyter.app.history import FileChange, change_status
from lightscientist_jupyter.jupyter.diff_card import file_diff
from lightscientist_jupyter.jupyter.server.answers import FileDiff, PermissionCard
from lightscientist_jupyter.values.permission import PermissionRequest


def permission_card(request: PermissionRequest) -> PermissionCard:
    """The card of `request`."""
    diff = _edit_diff(request)
    return {
        "agent": request.agent,
        "heading": request.question,
        "title": request.title,
        "kind": request.kind or "",
        "paths": list(request.paths),
        "choices": [
            {"id": o.id, "name": o.name, "kind": o.kind, "approve": o.allows}
            for o in request.options
        ],
        "diff": diff,
        "detail": "" if diff is not None else request.detail,
    }


def _edit_diff(request: PermissionRequest) -> FileDiff | None:
    """An edit's change to its one file, as the gate card's diff; None for anything else
    (no edit, no new text, or several files)."""
    if request.kind != "edit" or request.new_text is None or len(request.paths) != 1:
        return None
    old = request.old_text.encode("utf-8") if request.old_text is not None else None
    new = request.new_text.encode("utf-8")
    change = FileChange(request.paths[0], change_status(old, new), old, new)
    return file_diff(change, images=False)
