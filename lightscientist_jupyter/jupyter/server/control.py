"""The run controls of both screens, on the server extension:

    POST /lightscientist/control  {"path", "action", "stage", "from"}

`action` is one of `cancel` (the project and its workers, wherever it runs), `resume` (a
project no process runs, continued by a detached `lightscientist resume --wait`), `pause`
(the running process pauses once `stage`, default the current one, finishes) or `rerun`
(the run stops, the workspace is rewound to the start of `stage`'s latest visit, and the
project resumes in the background). The operations are `app.commands.cancel` and
`app.controls`; the answer is `{"path", "action", "message", "status", "stage", "pid"}`, a
refusal 400 (bad input) or 409 (the project's state does not allow it; the message says what
to do instead, with the exact command where one helps).

`apply` is the same without the server (the dashboard's comm fallback).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from lightscientist_jupyter.app import commands, controls
from lightscientist_jupyter.errors import (
    BadInput,
    Conflict,
    LightScientistError,
    WorkspaceLocked,
)
from lightscientist_jupyter.jupyter.server.answers import ControlAction, ControlAnswer, ControlDone
from lightscientist_jupyter.jupyter.server.paths import Refused, open_project, screen
from lightscientist_jupyter.vocab import CancelSource, ReplySource
from lightscientist_jupyter.workspace import Workspace

ACTIONS: tuple[ControlAction, ...] = get_args(ControlAction)


def _action(raw: str) -> ControlAction:
    """`raw` as one of `ACTIONS`; `Refused` (400) when it is none of them."""
    for action in ACTIONS:
        if raw == action:
            return action
    raise Refused(400, f"action must be one of {', '.join(ACTIONS)}, not {raw!r}")


def apply(ws: Workspace, action: str, stage: str | None, *, source: CancelSource) -> ControlDone:
    """Do `action` on the project in `ws`; `Refused` (400 / 409) when it cannot be done.
    `source` is the screen that asks, the panel or the dashboard: a cancel's door, and a
    re-run's rewind recorded as from that screen (named alike as a `ReplySource`)."""
    known = _action(action)
    if stage is not None and not isinstance(stage, str):
        raise Refused(400, "stage must be a stage id (a string) or null")
    try:
        if action == "cancel":
            sent = commands.cancel(ws, source=source)
            done = controls.Done(sent.message)
        elif action == "resume":
            done = controls.start_resume(ws, until=stage or None)
        elif action == "pause":
            done = controls.pause_after(ws, stage or None)
        else:
            done = controls.rerun(ws, stage or None, source=ReplySource(source))
    except WorkspaceLocked as exc:
        raise Refused(409, str(exc)) from None
    except BadInput as exc:  # Conflict is one: the state does not allow it
        raise Refused(409 if isinstance(exc, Conflict) else 400, str(exc)) from None
    except (OSError, LightScientistError) as exc:
        raise Refused(409, str(exc)) from None
    state = commands.require_project(ws)
    return {
        "action": known,
        "message": done.message,
        "pid": done.pid,
        "status": str(state.status),
        "stage": state.stage,
    }


def control(root: Path, body: Any) -> ControlAnswer:
    """One run control from the side panel or the dashboard."""
    if not isinstance(body, dict):
        raise Refused(400, 'the body must be a JSON object {"path", "action", "stage"}')
    rel = body.get("path")
    if not isinstance(rel, str):
        raise Refused(400, "path (the project folder, relative to the server root) is required")
    ws, rel = open_project(root, rel)
    source = CancelSource(screen(body))
    return {"path": rel, **apply(ws, str(body.get("action")), body.get("stage"), source=source)}
