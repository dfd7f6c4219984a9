"""The side panel's hand-over requests, on the server's reply endpoint.

    POST /lightscientist/reply  {"path", "handoff": "take" | "deliver" | "give-back",
                                 "stage", "summary", "next_stage", "decision_id", "from"}

A body with `handoff` is one of these (the approve/reject replies are `data.
project_reply`); the operation is `app.handoff.hand`, applied through the runner's inbox or,
when nobody runs the project, under its lock, after which a step that set the project running
again (deliver, give-back) goes on in the background (`controls.go_on`). A refused deliver is
409 with every reason; a stale page (its `decision_id` no longer pending) is 409 too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightscientist_jupyter.app import controls, handoff
from lightscientist_jupyter.app.commands import require_project
from lightscientist_jupyter.errors import BadInput, LightScientistError
from lightscientist_jupyter.jupyter.server.answers import HandoffAnswer
from lightscientist_jupyter.jupyter.server.data import COMMENT_MAX
from lightscientist_jupyter.jupyter.server.paths import Refused, open_project, screen
from lightscientist_jupyter.vocab import ReplySource

STEPS = tuple(str(s) for s in handoff.Step)


def _text(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise Refused(400, f"{name} must be a string or null")
    if value is not None and len(value) > COMMENT_MAX:
        raise Refused(400, f"{name} must be text of at most {COMMENT_MAX} characters")
    return value or None


def reply(root: Path, body: dict[str, Any]) -> HandoffAnswer:
    """Apply one hand-over step from the side panel; returns what became of it."""
    step = body.get("handoff")
    if step not in STEPS:
        raise Refused(400, f"handoff must be one of {', '.join(STEPS)}")
    rel = body.get("path")
    if not isinstance(rel, str):
        raise Refused(400, "path (the project folder, relative to the server root) is required")
    ws, rel = open_project(root, rel)
    decision_id = _text(body, "decision_id")
    try:
        if decision_id and step != "take":
            pending = require_project(ws).pending
            if pending is None or pending.id != decision_id:
                raise Refused(409, f"decision {decision_id} is no longer pending; reload")
        done = handoff.hand(
            ws,
            step,
            stage=_text(body, "stage"),
            summary=_text(body, "summary") or "",
            next_stage=_text(body, "next_stage"),
            source=ReplySource(screen(body)),
        )
    except BadInput as exc:
        raise Refused(400, str(exc)) from None
    except LightScientistError as exc:
        raise Refused(409, str(exc)) from None
    if done.accepted is False:
        raise Refused(409, done.message)
    message, pid = done.message, None
    if done.resume:  # nobody runs the project: it goes on in the background
        started = controls.go_on(ws)
        message, pid = f"{message}; {started.message}", started.pid
    return {
        "path": rel,
        "message": message,
        "status": done.status,
        "stage": done.stage,
        "resumed_by": pid,
    }
