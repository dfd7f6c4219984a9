"""What the side panel's server extension reads and writes: plain functions over a root.

Each function takes the server root (a real path) and the request's parameters, and returns
a JSON-ready dict or raises `Refused` with the HTTP status and a message for the panel. They
know nothing of Jupyter or tornado (`extension` runs them off the event loop), so they are
tested directly as well as through the server.

Every path is checked by `paths` (below the server root, through no link) and every
file below it is read through `beneath.Beneath`, so a link a worker's command planted is
refused with its one line, never followed. A reply is `commands.submit_reply`'s, as for
`lightscientist reply`: handed to the inbox of the process that runs the project, or, when
none does, applied here under the workspace lock, after which the project goes on in the
background (`controls.go_on`, the Resume button's process), as it goes on in the process of
any door that runs projects itself.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from pathlib import Path
from typing import Any, cast

from lightscientist_jupyter.app import commands, controls
from lightscientist_jupyter.app.commands import Route
from lightscientist_jupyter.app.handoff_card import card as handoff_card
from lightscientist_jupyter.app.recalled import at_decision
from lightscientist_jupyter.app.starting_mark import starting
from lightscientist_jupyter.app.usage import panel_usage, reply_budget
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.controller import StageTable, load_table
from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.controller.state import ProjectState, load_state
from lightscientist_jupyter.errors import BadInput, Conflict, LightScientistError
from lightscientist_jupyter.events import EventDict, read_tail
from lightscientist_jupyter.jupyter import progress
from lightscientist_jupyter.jupyter.diff_card import gate_diff
from lightscientist_jupyter.jupyter.graph_view import graph_view
from lightscientist_jupyter.jupyter.look import reply_words, verdict_words
from lightscientist_jupyter.jupyter.permission_card import permission_card
from lightscientist_jupyter.jupyter.provenance_links import gate_checks
from lightscientist_jupyter.jupyter.search_tree import search_card
from lightscientist_jupyter.jupyter.server.answers import (
    AnsweredDecision,
    EventsAnswer,
    FileAnswer,
    HandoffCard,
    HistoryStep,
    PanelUsage,
    ProjectDetail,
    ProjectsAnswer,
    ProjectSummary,
    RecalledEntry,
    ReplyAnswer,
    RunActions,
    Runner,
    StageTableDict,
)
from lightscientist_jupyter.jupyter.server.paper import paper_card, reviews_card
from lightscientist_jupyter.jupyter.server.paths import (
    EVENTS_FILE,
    STARTING_FILE,
    STATE_FILE,
    Refused,
    join,
    open_project,
    refusal,
    relative,
    resolve_inside,
    screen,
    shown,
)
from lightscientist_jupyter.vocab import ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace

SCAN_DEPTH = 4
"""How many folder levels below the server root are searched for projects."""
SCAN_LIMIT = 500
"""The most projects listed."""
SCAN_FOLDERS = 5000
"""The most folders looked into per listing (a server rooted at a huge tree stays quick)."""
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})
FILE_LIMIT = 2 * 1024 * 1024
"""The most bytes of one file sent to the panel (the rest is cut, and the answer says so)."""
EVENTS_DEFAULT, EVENTS_MAX = 200, 2000
COMMENT_MAX = 20_000
HISTORY_MAX = 100


def _state(ws: Workspace) -> ProjectState:
    try:
        return load_state(ws.state_file)
    except LightScientistError as exc:
        raise Refused(409, str(exc)) from None


_tables: dict[tuple[str, int], StageTable] = {}


def _table(path: str) -> StageTable:
    """`load_table`, remembered until the file changes."""
    key = (path, os.stat(path).st_mtime_ns)
    table = _tables.get(key)
    if table is None:
        table = load_table(path)
        if len(_tables) > 32:
            _tables.clear()
        _tables[key] = table
    return table


# ------------------------------------------------------------------------- reading


def find_projects(
    root: Path, depth: int = SCAN_DEPTH, limit: int = SCAN_LIMIT, folders: int = SCAN_FOLDERS
) -> list[Path]:
    """Folders below `root` holding `.lightscientist/state.json`, sorted.

    Hidden folders, symbolic links and dependency folders are not entered, nor is a project
    (projects do not nest). At most `folders` folders are looked into, nearest levels first.
    """
    files = Beneath(root)
    found: list[Path] = []
    queue = deque([("", 0)])
    seen = 0
    while queue and len(found) < limit and seen < folders:
        folder, level = queue.popleft()
        seen += 1
        if files.is_file(join(folder, STATE_FILE)) or (
            files.is_file(join(folder, STARTING_FILE)) and starting(Workspace(root / folder))
        ):
            found.append(root / folder)  # a project, or one a live kernel is creating
            continue
        if level >= depth:
            continue
        try:
            entries = files.scandir(folder)
        except OSError:
            continue
        queue.extend(
            (join(folder, e.name), level + 1)
            for e in entries
            if not e.name.startswith(".")
            and e.name not in SKIP_DIRS
            and e.is_dir(follow_symlinks=False)
        )
    return sorted(found)


def summary(root: Path, folder: Path, state: ProjectState | None = None) -> ProjectSummary:
    """One row of the project list; a damaged project comes back with `error`."""
    base: ProjectSummary = {"path": relative(root, folder), "name": folder.name}
    mark = starting(Workspace(folder)) if state is None else None
    if mark is not None:  # a kernel is creating it: its state comes in a moment
        return {
            **base,
            "status": str(ProjectStatus.STARTING),
            "mode": str(mark.get("mode")),
            "goal": str(mark.get("goal")),
            "pending": None,
            "updated_at": float(mark.get("started_at") or 0),
            "runner": None,
            "actions": cast(
                RunActions,
                controls.applicable(ProjectStatus.STARTING, running=True, pause_after=None),
            ),
        }
    if state is None:
        try:
            state = load_state(folder / STATE_FILE)
        except LightScientistError as exc:
            return {**base, "error": str(exc)}
    where = commands.summary(state)  # in the words every front door uses
    runner = read_holder(Workspace(folder))
    return {
        **base,
        "status": where["status"],
        "stage": where["stage"],
        "mode": where["mode"],
        "goal": where["goal"],
        "pending": where["pending"],
        "updated_at": state.updated_at,
        "runner": cast(Runner | None, runner),
        "actions": cast(
            RunActions,
            controls.applicable(
                str(state.status),
                running=runner is not None,
                pause_after=state.settings.get("pause_after"),
            ),
        ),
    }


def list_projects(root: Path) -> ProjectsAnswer:
    return {"projects": [summary(root, folder) for folder in find_projects(root)]}


def _table_view(table: StageTable) -> StageTableDict:
    """The stage table for the panel, without the server's absolute paths."""
    raw = table.to_dict()
    for stage in raw["stages"]:
        stage["skill"] = os.path.relpath(stage["skill"], table.path.parent)
    return {"file": table.path.name, "start": raw["start"], "stages": raw["stages"]}


def project_detail(root: Path, rel: str) -> ProjectDetail:
    """Status, history, the stage table and its graph layout, outputs and the last event's seq.

    The state's records, the lock's holder, the usage and the hand-over card are built below
    this layer as plain dicts: cast to what `answers` declares (test_server_answers_sent.py
    checks them)."""
    ws, rel = open_project(root, rel)
    files = Beneath(ws.root)
    state = _state(ws)
    detail: ProjectDetail = {
        **summary(root, ws.root, state),
        "visits": state.visits,
        "history": cast(list[HistoryStep], state.history[-HISTORY_MAX:]),
        "decisions": [
            cast(AnsweredDecision, {**d, "verdict": verdict_words(d)}) for d in state.decisions
        ],
        "reason": state.reason,
        "feedback": state.feedback,
        "last_summary": state.last_summary,
        "pause_after": state.settings.get("pause_after"),  # a pause request (app/until.py)
        "table": None,
        "graph": None,
        "table_error": None,
        "outputs": [],
        "process_md": {"path": join(rel, "PROCESS.md"), "exists": files.is_file("PROCESS.md")},
        "handoff": None,
        "handoffs": state.handoffs,
        "usage": cast(PanelUsage, panel_usage(state)),
        "gate_diff": gate_diff(ws, images=False),  # beside each file under review
        "gate_checks": None,  # below, with the table
        "permission": (  # a coding agent's permission request, as the dashboard's card
            permission_card(state.pending.permission)
            if state.pending is not None and state.pending.permission is not None
            else None
        ),
        "recalled": cast(list[RecalledEntry], [r.to_dict() for r in at_decision(ws, state)]),
        "search": None,
        "paper": paper_card(files, rel, None),
        "reviews": reviews_card(files),
        "last_seq": 0,  # read last, below
    }
    try:
        table = _table(state.stages_file)
    except (OSError, LightScientistError) as exc:
        detail["table_error"] = str(exc)
    else:
        detail["table"] = _table_view(table)
        # the dashboard's graph, as its widget draws it: the panel draws it the same way
        detail["graph"] = graph_view(table, state)
        # the hand-over card, or None
        detail["handoff"] = cast(HandoffCard | None, handoff_card(ws, state, table))
        detail["progress"] = progress.view(state, table)  # stage N of M, time per stage
        detail["gate_checks"] = gate_checks(ws.root, table, state.pending, rel)
        detail["search"] = search_card(ws, table)  # the tree, drawn as the notebook draws it
        detail["paper"] = paper_card(files, rel, table)  # the source the table names
        detail["outputs"] = [
            {
                "stage": s.id,
                "name": out,
                "path": join(rel, out),
                "exists": files.is_file(out),
            }
            for s in table
            for out in s.outputs
        ]
    last = read_tail(resolve_inside(ws.root, EVENTS_FILE, scope="the project folder"), 1)
    detail["last_seq"] = last[-1]["seq"] if last else 0
    return detail


def _int(raw: str | None, name: str, default: int | None, low: int, high: int) -> int | None:
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise Refused(400, f"{name} must be a whole number, not '{raw}'") from None
    if value < low:
        raise Refused(400, f"{name} must be at least {low}")
    return min(value, high)


def project_events(
    root: Path, rel: str, after: str | None = None, limit: str | None = None
) -> EventsAnswer:
    """Events with seq > `after` (the newest `limit` of them), read from the end of the log.

    Without `after`, the last `limit` events. When `after` is past the end of the log (the
    log was replaced), the answer starts over from the tail and says `reset`.
    """
    ws, rel = open_project(root, rel)
    after_seq = _int(after, "after", None, 0, 2**62)
    count = _int(limit, "limit", EVENTS_DEFAULT, 1, EVENTS_MAX) or EVENTS_DEFAULT
    path = resolve_inside(ws.root, EVENTS_FILE, scope="the project folder")
    reset = False
    if after_seq is None:
        found = read_tail(path, count)
    else:
        found = read_tail(path, count, after=after_seq)
        if not found:
            last = read_tail(path, 1)
            if last and last[0]["seq"] < after_seq:
                found, reset = read_tail(path, count), True
    events = cast(list[EventDict], found)  # the log's lines, as `Event.to_dict` wrote them
    floor = 0 if after_seq is None or reset else after_seq
    last_seq = events[-1]["seq"] if events else floor
    return {
        "path": rel,
        "events": events,
        "last_seq": last_seq,
        "reset": reset,
        "truncated": bool(events)
        and after_seq is not None
        and not reset
        and events[0]["seq"] > floor + 1,
    }


def project_file(root: Path, rel: str, name: str | None) -> FileAnswer:
    """The text of `name` (PROCESS.md, a stage output, …), a path inside the project folder."""
    ws, rel = open_project(root, rel)
    if not name:
        raise Refused(400, "name is required (a file inside the project, e.g. PROCESS.md)")
    target = resolve_inside(ws.root, name, scope="the project folder")
    files = Beneath(ws.root)
    if not files.is_file(target):  # missing, or a folder
        raise Refused(404, f"'{name}' does not exist in project '{shown(rel)}'")
    try:
        with files.open_read(target) as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read(FILE_LIMIT + 1)
    except (FileNotFoundError, NotADirectoryError):
        raise Refused(404, f"'{name}' does not exist in project '{shown(rel)}'") from None
    except PathRefused as exc:  # a folder, a pipe, a link planted since the check above
        raise refusal(exc, ws.root) from None
    except OSError as exc:
        raise Refused(403, f"'{name}' cannot be read: {exc.strerror}") from None
    truncated = len(data) > FILE_LIMIT
    data = data[:FILE_LIMIT]
    binary = b"\x00" in data[:8192]
    return {
        "path": relative(root, target),
        "name": name,
        "size": size,
        "truncated": truncated,
        "binary": binary,
        "content": "" if binary else data.decode("utf-8", errors="replace"),
    }


# ------------------------------------------------------------------------- replying


def _reply_fields(body: Any) -> tuple[str, bool, str, str | None, str | None]:
    if not isinstance(body, dict):
        raise Refused(
            400,
            "the body must be a JSON object with path, approve, comment, to_stage and decision_id",
        )
    path, approve = body.get("path"), body.get("approve")
    comment, to_stage, decision_id = (
        body.get("comment") or "",
        body.get("to_stage") or None,
        body.get("decision_id") or None,
    )
    if not isinstance(path, str):
        raise Refused(400, "path (the project folder, relative to the server root) is required")
    if not isinstance(approve, bool):
        raise Refused(400, "approve must be true or false")
    if not isinstance(comment, str) or len(comment) > COMMENT_MAX:
        raise Refused(400, f"comment must be text of at most {COMMENT_MAX} characters")
    for name, value in (("to_stage", to_stage), ("decision_id", decision_id)):
        if value is not None and not isinstance(value, str):
            raise Refused(400, f"{name} must be a string or null")
    return path, approve, comment, to_stage, decision_id


def project_reply(root: Path, body: Any) -> ReplyAnswer:
    """Apply an approve/reject to the pending decision when nobody runs the project (under
    its lock); hand it to the inbox of the process that runs it otherwise.

    Refuses (409) when nothing is pending, the reply names a decision that is no longer the
    pending one (so a stale page cannot answer a newer gate), or the project cannot be
    opened to apply it — and then nothing is queued.
    """
    rel, approve, comment, to_stage, decision_id = _reply_fields(body)
    ws, rel = open_project(root, rel)
    pending = _state(ws).pending  # a state that cannot be read is refused with its reason
    try:
        with contextlib.ExitStack() as held:
            sent = commands.submit_reply(
                ws,
                approve,
                comment,
                to_stage,
                decision_id=decision_id,
                source=ReplySource(screen(body)),
                option="to_stage",
                take=lambda: held.enter_context(
                    commands.project_locked(ws, "reply from the side panel")
                ),
                budget=reply_budget(body.get("budget")),  # at a budget decision: the new limits
            )
    except Conflict as exc:
        raise Refused(409, str(exc)) from None
    except BadInput as exc:
        raise Refused(400, str(exc)) from None
    except (OSError, LightScientistError) as exc:  # e.g. the project's stage table is gone
        raise Refused(409, f"the reply was not applied: {exc}") from None
    if sent.route is Route.UNCHANGED:
        raise Refused(409, f"{sent.message}; reload and decide again")
    answer: ReplyAnswer = {  # queued for the runner; applied here, its last keys change
        "path": rel,
        "decision_id": sent.decision_id,
        "queued": sent.path.name if sent.path else None,
        "applied_by": "runner",
        "runner": cast(Runner | None, sent.runner),  # the lock's holder
        "messages": [],
        "said": reply_words(approve, str(pending.kind), pending.stage) if pending else "",
    }
    if sent.route is Route.RUNNER:
        return answer
    after = _state(ws)
    messages, pid = [sent.message], None
    if sent.route is Route.APPLIED and after.status == ProjectStatus.RUNNING:
        started = controls.go_on(ws)  # nobody ran it: it goes on in the background
        messages.append(started.message)
        pid = started.pid
    return {
        **answer,
        "applied_by": "server",
        "runner": None,
        "messages": messages,
        "status": after.status,
        "stage": after.stage,
        "resumed_by": pid,
    }
