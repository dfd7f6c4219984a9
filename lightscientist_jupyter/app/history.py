"""Time travel, the operations every front door shares: history, diff, rewind, fork.

The snapshots themselves are layer 1's (`history.snapshots`, one per stage start, finish
and gate decision). Here they are read back (`history`), compared (`diff`), and restored:
`rewind` sets the workspace, PROCESS.md and the state back to a stage visit's start in place
(the later snapshots stay in the history), `fork` copies that snapshot into a new workspace.
Input that names nothing — a REF, a stage never visited, a non-empty folder — is `BadInput`
naming what to fix; rewinding a project a process runs is `WorkspaceLocked`, naming it.
"""

from __future__ import annotations

import dataclasses
import difflib
import getpass
import json
import os
import re
import time
from collections.abc import Sequence
from typing import Any, Literal

from lightscientist_jupyter._fs import write_json_atomic
from lightscientist_jupyter.app.commands import require_project
from lightscientist_jupyter.app.rewind_files import archive_sessions, copy_caches, restore_tree
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import load_table, process_log
from lightscientist_jupyter.controller.lock import WorkspaceLock
from lightscientist_jupyter.controller.process_log import ProcessEntry
from lightscientist_jupyter.controller.rewind import record_rewind
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.history.files import KEPT
from lightscientist_jupyter.history.snapshots import BRANCH, History, Snapshot
from lightscientist_jupyter.values.notebook import is_notebook, summary_of
from lightscientist_jupyter.values.notebook_diff import changes_between, notebook_diff
from lightscientist_jupyter.vocab import DecisionKind, ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace

STATE_PATH = KEPT[0]
_HASH = re.compile(r"^[0-9a-f]{4,40}$")


def open_history(ws: Workspace) -> History:
    """The project's history; `BadInput` when there is none yet (a project of an older
    version: its history starts at the next stage)."""
    require_project(ws)
    history = History(ws)
    if not history.exists() or history.head() is None:
        raise BadInput(
            f"the project in {ws.root} has no history yet (it was made by an older "
            "version); a history starts at its next stage: run `lightscientist resume`"
        )
    return history


# ------------------------------------------------------------------------- history


def row(snap: Snapshot) -> dict[str, Any]:
    """One snapshot as `history --json` prints it."""
    return {
        "id": snap.id,
        "stage": snap.stage,
        "visit": snap.visit,
        "event": snap.event,
        "at": snap.at,
        "time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snap.at)),
        "parent": snap.parent,
        "added": list(snap.added),
        "changed": list(snap.changed),
        "removed": list(snap.removed),
        "skipped": list(snap.skipped),
    }


def history(ws: Workspace) -> list[dict[str, Any]]:
    """Every snapshot, oldest first (rewound-over lines too)."""
    return [row(s) for s in open_history(ws).log()]


# ------------------------------------------------------------------------- refs


def resolve(history: History, ref: str, *, event: str = "finish") -> Snapshot:
    """The snapshot `ref` names: an id (a prefix of it), or `STAGE` / `STAGE#VISIT` — that
    visit's (the latest visit's) `event` snapshot, preferring the current line."""
    snaps = history.log()
    if _HASH.match(ref):
        found = [s for s in snaps if s.id.startswith(ref)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise BadInput(f"snapshot id '{ref}' is ambiguous; give more of it")
    stage, _, visit_text = ref.partition("#")
    if visit_text and not visit_text.isdigit():
        raise BadInput(f"'{ref}': the visit after '#' must be a number, as in {stage}#2")
    visited = [s for s in snaps if s.stage == stage]
    if not visited:
        state = require_project(history.workspace)
        table = load_table(state.stages_file)
        if stage not in table:
            raise BadInput(
                f"'{ref}' names no snapshot and no stage of {table.path} "
                "(see `lightscientist history` for the ids and stages)"
            )
        raise BadInput(f"stage '{stage}' was never visited in this project; nothing to show")
    visit = int(visit_text) if visit_text else max(s.visit for s in visited)
    matches = [s for s in visited if s.visit == visit and s.event == event]
    if not matches:
        seen = sorted({s.visit for s in visited})
        raise BadInput(
            f"'{ref}' has no {event} snapshot (visits of {stage} with snapshots: "
            f"{', '.join(map(str, seen))})"
        )
    line = set(history.git("rev-list", BRANCH).split())
    current = [s for s in matches if any(c.startswith(s.id) for c in line)]
    return (current or matches)[-1]


# ------------------------------------------------------------------------- diff


def _exclusions(paths: Sequence[str]) -> list[str]:
    return ["--", *paths] if paths else ["--", ".", f":(exclude){STATE_PATH}"]


def diff(
    ws: Workspace,
    ref: str | None = None,
    ref2: str | None = None,
    *,
    stat: bool = False,
    paths: Sequence[str] = (),
    against: str | None = None,
) -> str:
    """The changes between two snapshots (`ref` → `ref2`; with one, `ref` → the files now;
    with none, what the pending gate would approve against the last approved state), or
    with `against` this workspace's files now → the other project's latest snapshot."""
    history = open_history(ws)
    if against is not None:
        old, new = history.tree_now(), _fetch_other(history, against)
    elif ref is None:
        old, new = gate_bounds(ws, history)
    else:
        old = resolve(history, ref).id
        new = resolve(history, ref2).id if ref2 else history.tree_now()
    if stat:
        return _stat(history, old, new, paths)
    return _by_file(history, old, new, paths)


def _changed_notebooks(history: History, old: str, new: str, paths: Sequence[str]) -> list[str]:
    listed = history.git("diff", "--name-only", "--no-renames", "-z", old, new, *_exclusions(paths))
    return list(filter(is_notebook, filter(None, listed.split("\0"))))


def _stat(history: History, old: str, new: str, paths: Sequence[str]) -> str:
    """git's `--stat`, but a notebook counted by cell (`2 cells changed, 1 added`), not by
    the lines of its JSON (one edited cell moves dozens: counts, ids, base64 images)."""
    cells = {}
    for rel in _changed_notebooks(history, old, new, paths):
        changes = changes_between(rel, history.read(old, rel), history.read(new, rel))
        if changes is not None:  # not a notebook on one side: git's count of its lines
            cells[rel] = summary_of(changes)
    left_out = [f":(exclude,literal){rel}" for rel in cells]
    text = history.git("diff", "--stat=200", old, new, *_exclusions(paths), *left_out)
    split = [line.split(" | ", 1) for line in text.splitlines()[:-1] if " | " in line]
    rows = [(name.strip(), count.strip()) for name, count in split]
    rows += cells.items()
    if not rows:
        return text
    width = max(len(name) for name, _ in rows)
    lines = [f" {name.ljust(width)} | {count}" for name, count in sorted(rows)]
    total = text.splitlines()[-1].strip() if text.strip() else ""
    files = int(total.split()[0]) if total else 0
    summary = f"{files + len(cells)} file{'s' if files + len(cells) != 1 else ''} changed"
    if total:
        summary += total[total.index(" changed") + len(" changed") :]
    if cells:
        summary += f" (the notebook{'s' if len(cells) != 1 else ''} by cell)"
    return "\n".join([*lines, f" {summary}"]) + "\n"


def _by_file(history: History, old: str, new: str, paths: Sequence[str]) -> str:
    """git's diff from `old` to `new`, but each notebook's change cell by cell
    (`values.notebook_diff`) in place of git's diff of its JSON, in the files' order."""
    notebooks = {}
    for rel in _changed_notebooks(history, old, new, paths):
        lines = notebook_diff(rel, history.read(old, rel), history.read(new, rel))
        if lines is not None:  # not a notebook on one side: git's diff of its text
            notebooks[rel] = "".join(f"{line}\n" for line in lines)
    left_out = [f":(exclude,literal){rel}" for rel in notebooks]
    text = history.git("diff", "--no-color", old, new, *_exclusions(paths), *left_out)
    if not notebooks:
        return text
    parts = [(_diffed_path(part), part) for part in re.split(r"(?m)^(?=diff --git )", text) if part]
    parts += notebooks.items()
    return "".join(part for _, part in sorted(parts, key=lambda kept: kept[0]))


def _diffed_path(part: str) -> str:
    """The path a `diff --git a/PATH b/PATH` section is about (for ordering only)."""
    header = part.split("\n", 1)[0].removeprefix("diff --git ").lstrip('"')
    return header.removeprefix("a/").split(" b/", 1)[0]


def gate_bounds(ws: Workspace, history: History) -> tuple[str, str]:
    """What a pending gate would approve: the last approved snapshot (of this gate, else of
    any, else the first one) and the files now."""
    state = require_project(ws)
    pending = state.pending
    if pending is None or pending.kind != DecisionKind.GATE:
        raise BadInput(
            f"no gate is pending (the project is {state.status} at '{state.stage}'); "
            "name what to compare: `lightscientist diff REF [REF2]`"
        )
    line = set(history.git("rev-list", BRANCH).split())
    snaps = [s for s in history.log() if any(c.startswith(s.id) for c in line)]
    approved = [s for s in snaps if s.event == "approved"]
    own = [s for s in approved if s.stage == pending.stage]
    base = (own or approved)[-1] if approved else snaps[0]  # none yet: the project's start
    return base.id, history.tree_now()


def _fetch_other(history: History, other: str) -> str:
    theirs = History(Workspace.at(other))
    if not theirs.exists() or theirs.head() is None:
        raise BadInput(f"--against {other}: no LightScientist history there to compare with")
    history.git("fetch", "-q", "--no-tags", str(theirs.git_dir), f"+{BRANCH}:refs/against/other")
    return "refs/against/other"


# ------------------------------------------------------------------------- rewind, fork


@dataclasses.dataclass(frozen=True)
class Rewound:
    """What a rewind or a fork did."""

    message: str
    snapshot: str
    stage: str
    visit: int


def rewind(ws: Workspace, ref: str, *, source: ReplySource = ReplySource.CLI) -> Rewound:
    """Set the workspace's files, PROCESS.md and state back to the start of `ref`'s stage
    visit; later workers and sessions are archived, the later snapshots stay in the history.

    Raises:
        WorkspaceLocked: a process runs the project (it is named).
        BadInput: `ref` names no stage visit with a start snapshot.
    """
    lock = WorkspaceLock(ws).acquire("rewind")
    try:
        history = open_history(ws)
        target = resolve(history, ref, event="start")
        head = history.head()
        assert head is not None
        history.keep(head, f"before-rewind-{time.strftime('%Y%m%d-%H%M%S')}-{head[:7]}")
        restore_tree(history, target.id, current=history.files()[0])
        state = _restored_state(history, target.id)
        write_json_atomic(ws.state_file, state.to_dict())
        archived = archive_sessions(ws, since=target.at)
        who = f"{getpass.getuser()} via {source}"
        note = f"Rewound to the start of {target.ref} by {who}; the later snapshots stay in "
        note += "the history (`lightscientist history`)" + (f"; {archived}" if archived else "")
        record_rewind(
            ws,
            target.stage,
            target.ref,
            note,
            f"rewound to {target.ref} by {who}",
            {"to": target.ref, "snapshot": target.id, "from": head[:12], "by": who},
        )
        snap = history.take(
            target.stage, target.visit, "rewound", time.time(), note=note, parent=target.id
        )
        message = f"rewound to the start of {target.ref} (snapshot {target.id}); "
        message += "continue with `lightscientist resume`"
        return Rewound(message, snap, target.stage, target.visit)
    finally:
        lock.release()


def fork(ws: Workspace, ref: str, new_dir: str | os.PathLike[str]) -> Rewound:
    """A new, independent workspace in `new_dir` at the start of `ref`'s stage visit: its
    files, PROCESS.md, state and the history up to there, ready for `resume`."""
    new, source = Workspace.at(new_dir), ws.root.resolve()  # real paths: links resolved
    if new.root == source or source in new.root.parents:
        raise BadInput(
            f"cannot fork into {new.root}: it is inside the workspace it forks ({ws.root}); "
            "name a folder outside it"
        )
    history = open_history(ws)
    target = resolve(history, ref, event="start")
    if new.root.exists() and (not new.root.is_dir() or any(new.root.iterdir())):
        raise BadInput(f"cannot fork into {new.root}: it is not an empty folder; name a new one")
    new.state_dir.mkdir(parents=True, exist_ok=True)
    copy = History(new)
    copy.ensure()
    history.git("push", "-q", str(copy.git_dir), f"{target.id}:{BRANCH}")
    restore_tree(copy, target.id, current=[])
    copy_caches(ws, new)
    write_json_atomic(new.state_file, _restored_state(copy, target.id).to_dict())
    note = f"Forked from {ws.root} at the start of {target.ref} by {getpass.getuser()}"
    process_log.append_entry(
        new,
        ProcessEntry(f"fork:{time.time():.6f}", target.stage, time.time(), note, (), None),
    )
    snap = copy.take(target.stage, target.visit, "forked", time.time(), note=note)
    message = f"forked {target.ref} (snapshot {target.id}) into {new.root}; "
    message += f"continue it with `lightscientist resume --workspace {new.root}`"
    return Rewound(message, snap, target.stage, target.visit)


def _restored_state(history: History, commit: str) -> ProjectState:
    raw = json.loads(history.git("show", f"{commit}:{STATE_PATH}"))
    state = ProjectState.from_dict(raw)
    state.status, state.reason, state.pending = ProjectStatus.RUNNING, None, None
    state.updated_at = time.time()
    return state


# ------------------------------------------------------------------------- a gate's files


ChangeStatus = Literal["new", "changed", "removed", "unchanged"]
"""How a file under review changed since the last approved state."""


@dataclasses.dataclass(frozen=True)
class FileChange:
    """One file under review at a gate, against the last approved state."""

    path: str
    status: ChangeStatus
    old: bytes | None
    new: bytes | None

    def unified(self) -> list[str]:
        """The change as unified diff lines (`a/<path>`, `b/<path>`; bytes read as UTF-8)."""
        old, new = (
            (data or b"").decode("utf-8", errors="replace").splitlines()
            for data in (self.old, self.new)
        )
        return list(difflib.unified_diff(old, new, f"a/{self.path}", f"b/{self.path}", lineterm=""))


def gate_changes(ws: Workspace) -> list[FileChange]:
    """Each file the pending gate would approve — its outputs, then every other file that
    changed — against the last approved snapshot (none without a history or a gate)."""
    history = History(ws)
    state = require_project(ws)
    pending = state.pending
    if pending is None or pending.kind != DecisionKind.GATE or history.head() is None:
        return []
    base, tree = gate_bounds(ws, history)
    changed = history.git("diff", "--name-only", "-z", base, tree, *_exclusions(()))
    changes = []
    files = Beneath(ws.root)
    for rel in dict.fromkeys([*pending.outputs, *filter(None, changed.split("\0"))]):
        new = files.read_bytes(rel) if files.is_file(rel) else None
        old = history.read(base, rel)
        if new is not None or old is not None:
            changes.append(FileChange(rel, change_status(old, new), old, new))
    return changes


def change_status(old: bytes | None, new: bytes | None) -> ChangeStatus:
    """How a file changed from `old` to `new` (None: no file): removed, new, unchanged or
    changed."""
    if new is None:
        return "removed"
    if old is None:
        return "new"
    return "unchanged" if old == new else "changed"
