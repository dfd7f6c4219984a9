"""The JupyterLab pages' open notebooks, and the changes kernel-side writers hand them.

    POST /lightscientist/open-notebooks  {"page", "paths"}  -> {"changes": [PageChange…]}
    POST /lightscientist/notebook-change {"project", "id", "outcome", "detail"}

Each page reports every second or so which notebooks it has open (paths relative to the
server root). The server files the report in the project folder that holds each notebook
(`open_notebooks.report_pages`), where a worker's notebook tool looks before it saves, and
answers with the changes waiting for those notebooks, now taken by this page. The page
applies each by cell, saves it through JupyterLab and reports how it went; the report goes
to the change's writer. Only notebooks a worker made are ever handed a change.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.jupyter.server.answers import (
    OpenNotebooksAnswer,
    PageChange,
    SettledAnswer,
)
from lightscientist_jupyter.jupyter.server.paths import STATE_FILE, Refused, below, join
from lightscientist_jupyter.open_notebooks import (
    Change,
    report_pages,
    settle,
    take_changes,
    valid_id,
)
from lightscientist_jupyter.values.notebook import written_by

MAX_PATHS = 200
"""At most this many open notebooks a report (a page with more is told so)."""

_reported: dict[str, set[str]] = {}
"""page -> the projects it last reported notebooks in (to clear those it has closed)."""
_lock = threading.Lock()


def open_notebooks(root: Path, body: Any) -> OpenNotebooksAnswer:
    """A page's report of its open notebooks; answers with the changes it now has to apply."""
    if not isinstance(body, dict):
        raise Refused(400, 'send {"page": ID, "paths": [notebook paths]}')
    try:
        page = valid_id(body.get("page"), "page")
    except ValueError as exc:
        raise Refused(400, str(exc)) from None
    paths = body.get("paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise Refused(400, "paths must be a list of notebook paths relative to the server root")
    if len(paths) > MAX_PATHS:
        raise Refused(400, f"at most {MAX_PATHS} open notebooks a report, not {len(paths)}")
    files = Beneath(root)
    by_project: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        notebook = below(path)
        if not notebook.endswith(".ipynb"):
            continue
        project = _project_of(files, notebook)
        if project is not None:
            by_project[project].append(notebook)
    with _lock:
        closed = _reported.pop(page, set()) - set(by_project)
        if by_project:
            _reported[page] = set(by_project)
    changes: list[PageChange] = []
    for project in closed:
        _report(files, project, page, [])
    for project, notebooks in sorted(by_project.items()):
        inside = [_inside(project, notebook) for notebook in notebooks]
        tree = _report(files, project, page, inside)
        if tree is None:
            continue
        for change in take_changes(tree, inside):
            if _workers(tree, change["path"]):
                changes.append(_handed(project, change))
            else:
                settle(tree, change["id"], "failed", "it is not a notebook a worker made")
    return {"changes": changes}


def notebook_change(root: Path, body: Any) -> SettledAnswer:
    """A page's report on a change it took."""
    if not isinstance(body, dict):
        raise Refused(400, 'send {"project", "id", "outcome", "detail"}')
    project = below(str(body.get("project") or ""))
    detail = str(body.get("detail") or "")[:2000]
    try:
        if not Beneath(root).is_file(join(project, STATE_FILE)):
            raise Refused(404, f"no LightScientist project at '{project or '(server root)'}'")
        tree = Beneath(root / project) if project else Beneath(root)
        settle(tree, str(body.get("id")), str(body.get("outcome")), detail)
    except ValueError as exc:
        raise Refused(400, str(exc)) from None
    except KeyError:
        raise Refused(
            410, "no writer waits for that change any more (it gave up); nothing was passed on"
        ) from None
    except PathRefused as exc:
        raise Refused(403, str(exc)) from None
    return {"id": str(body["id"]), "outcome": str(body["outcome"])}


# ------------------------------------------------------------------ helpers


def _project_of(files: Beneath, notebook: str) -> str | None:
    """The project folder (server-relative) that holds `notebook`, nearest first."""
    parents = list(PurePosixPath(notebook).parents)[:-1]  # not the server root's "."
    for folder in [*parents, PurePosixPath("")]:
        rel = "" if str(folder) == "." else folder.as_posix()
        try:
            if files.is_file(join(rel, STATE_FILE)):
                return rel
        except (OSError, PathRefused):
            return None
    return None


def _inside(project: str, notebook: str) -> str:
    return PurePosixPath(notebook).relative_to(project).as_posix() if project else notebook


def _report(files: Beneath, project: str, page: str, notebooks: list[str]) -> Beneath | None:
    try:
        tree = Beneath(files.path(project)) if project else files
        report_pages(tree, page, notebooks)
    except (OSError, PathRefused):
        return None  # a project folder that cannot be written: its writers write the file
    return tree


def _workers(tree: Beneath, notebook: str) -> bool:
    """Whether the notebook on disk is one a worker made."""
    try:
        data = json.loads(tree.read_text(notebook))
    except (OSError, ValueError, PathRefused):
        return False
    return isinstance(data, dict) and written_by(data) is not None


def _handed(project: str, change: Change) -> PageChange:
    return {
        "id": change["id"],
        "project": project,
        "path": join(project, change["path"]),
        "base": json.loads(base) if (base := change["base"]) else None,
        "next": json.loads(change["next"]),
        "by": change["by"],
    }
