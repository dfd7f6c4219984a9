"""Where the side panel's paths lead: below the server root, through no link.

Every path a request names is relative to the server root (or, for a file, to its project
folder): an absolute one is refused with 400, one that leaves through '..' with 403. The
server root is often the user's home and a project's files may hold links a worker's command
planted, so what lies below is reached through `beneath.Beneath`: a link on the way, whether
it points out or in, is refused with 403 and the guarded path's one line (naming the link and
where it points), never followed. `data` and the other handlers' functions start here.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.workspace import STATE_DIR, Workspace

STATE_FILE, EVENTS_FILE = f"{STATE_DIR}/state.json", f"{STATE_DIR}/events.jsonl"
STARTING_FILE = f"{STATE_DIR}/starting.json"
"""A project a kernel is creating (`app.starting.mark_starting`)."""


class Refused(Exception):
    """A request that cannot be served: answered as JSON `{"message", "status"}`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


_DRIVE = re.compile(r"^[A-Za-z]:")


def below(rel: str, *, scope: str = "the server root") -> str:
    """`rel` normalised ('' for the folder itself). Raises `Refused` 400 for an absolute
    path, 403 for one that leaves the folder through '..'."""
    if "\x00" in rel:
        raise Refused(400, "the path contains a NUL character")
    rel = rel.strip()
    if rel.startswith(("/", "\\", "~")) or _DRIVE.match(rel):
        raise Refused(400, f"'{rel}' must be a path relative to {scope}")
    norm = posixpath.normpath(rel or ".")
    if norm == ".." or norm.startswith("../"):
        raise Refused(403, f"'{rel}' is outside {scope}; refused")
    return "" if norm == "." else norm


def refusal(exc: PathRefused, base: Path) -> Refused:
    """403 with the guarded path's one line, its file named relative to `base`."""
    text = str(exc)
    return Refused(403, text.removeprefix(f"{base}/"))


def resolve_inside(base: Path, rel: str, *, scope: str = "the server root") -> Path:
    """The path of `rel` below `base` (a real path itself), reached through no link (what
    is there may be missing: the caller says so).

    Raises `Refused` 400 for an absolute path, 403 for one that leaves `base` through '..'
    or goes through a symbolic link (wherever it points).
    """
    norm = below(rel, scope=scope)
    try:
        Beneath(base).entry(norm)
    except PathRefused as exc:
        raise refusal(exc, base) from None
    except OSError as exc:  # a folder on the way that cannot be entered
        raise Refused(403, f"'{rel}' cannot be read: {exc.strerror}") from None
    return base / norm


def relative(root: Path, path: Path) -> str:
    """`path` relative to `root` in '/' form; '' for the root itself."""
    rel = path.relative_to(root).as_posix()
    return "" if rel == "." else rel


def join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def shown(rel: str) -> str:
    return rel or "the server root"


def open_project(root: Path, rel: str) -> tuple[Workspace, str]:
    """The workspace at `rel` below `root`, and its normalised relative path."""
    folder = resolve_inside(root, rel)
    resolve_inside(folder, STATE_FILE, scope="the project folder")
    if not Beneath(folder).is_file(STATE_FILE):
        if Beneath(folder).is_file(STARTING_FILE):
            raise Refused(
                409, f"the project at '{shown(rel)}' is starting: its state comes in a moment"
            )
        raise Refused(404, f"no LightScientist project at '{shown(rel)}' (no {STATE_FILE} there)")
    return Workspace(folder), relative(root, folder)


def screen(body: Mapping[str, Any]) -> Literal["dashboard", "panel"]:
    """The screen a request came from: the dashboard's widgets send `from: dashboard`; any
    other is the side panel's (as `ReplySource` and `CancelSource` name them)."""
    return "dashboard" if body.get("from") == "dashboard" else "panel"
