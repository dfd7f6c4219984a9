"""One node of a search tree, looked at closely: its record, what it changed against its
parent, and the end of its job's log (`lightscientist tree --node`, the dashboard's and the
side panel's click on a node).

A node's files are its folder, `experiment/tree/<node>/`; an improvement or a fix starts as a
copy of its parent's folder, so comparing the two folders file by file shows the one change
the node made (a draft has no parent: its files are all new). Its log is its job's log, found
through the job's record. Everything is read through the workspace's guarded path, and
reading changes nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lightscientist_jupyter.app.history import FileChange, change_status
from lightscientist_jupyter.app.jobs import project_jobs
from lightscientist_jupyter.app.search import SearchView, TreeUnavailable, read_tree
from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.runtime.jobs.record import log_tail
from lightscientist_jupyter.values.search import NODES_DIR, Node
from lightscientist_jupyter.workspace import Workspace

LOG_LINES = 40
"""How many of the last lines of a node's job log are shown."""
LOG_CHARS = 8000
"""…and at most this many of its last characters."""
MAX_DIFF_LINES = 400
"""Diff lines kept per file (the rest is counted)."""
MAX_FILE_BYTES = 512_000
"""A file larger than this is compared by its size only (its bytes are not read)."""


@dataclasses.dataclass(frozen=True)
class NodeDetail:
    """What a click on a node shows."""

    node: Node
    against: str | None
    """The parent the node's files are compared with (None: a draft, its files all new)."""
    changes: list[FileChange]
    """Each file that differs from the parent's, by its name in the node's folder."""
    unchanged: int
    """How many files are the parent's, unchanged."""
    log: str | None
    """The job log's path in the workspace (None: the node ran no job)."""
    log_tail: list[str]
    """The log's last `LOG_LINES` lines."""


def node_detail(ws: Workspace, node_id: str, view: SearchView | None = None) -> NodeDetail:
    """Node `node_id` of the project's search tree (`view`, when the caller has read it
    already); `TreeUnavailable` naming the tree's nodes when it has none of that id (and as
    `read_tree` when there is no tree)."""
    node = find_node(view or read_tree(ws), node_id)
    guarded = Beneath(ws.root)
    mine = _files(guarded, node.id)
    theirs = _files(guarded, node.parent) if node.parent is not None else {}
    changes: list[FileChange] = []
    unchanged = 0
    for name in sorted(set(mine) | set(theirs)):
        old = _read(guarded, theirs.get(name))
        new = _read(guarded, mine.get(name))
        status = change_status(old, new)
        if status == "unchanged":
            unchanged += 1
            continue
        changes.append(FileChange(name, status, old, new))
    log = _log_path(ws, node)
    return NodeDetail(node, node.parent, changes, unchanged, log, _tail(ws, log))


def find_node(view: SearchView, node_id: str) -> Node:
    try:
        return view.tree.node(node_id)
    except KeyError:
        ids = ", ".join(n.id for n in view.tree.nodes) or "none yet"
        raise TreeUnavailable(
            f"the search tree has no node {node_id!r} (its nodes: {ids})"
        ) from None


def _files(guarded: Beneath, node: str) -> dict[str, str]:
    """The node's files: name within its folder → path in the workspace."""
    folder = f"{NODES_DIR}/{node}"
    try:
        paths = list(guarded.walk_files(folder))
    except (FileNotFoundError, NotADirectoryError, PathRefused):
        return {}
    return {p.as_posix()[len(folder) + 1 :]: p.as_posix() for p in paths}


def _read(guarded: Beneath, path: str | None) -> bytes | None:
    """The file's bytes; None for no file (a file that cannot be read is shown empty)."""
    if path is None:
        return None
    try:
        return guarded.read_bytes(path, limit=MAX_FILE_BYTES)
    except (OSError, PathRefused):
        return b""


def _log_path(ws: Workspace, node: Node) -> str | None:
    if node.job is None:
        return None
    found = [job.log for job in project_jobs(ws) if job.id == node.job]
    return found[0] if found else None


def _tail(ws: Workspace, log: str | None) -> list[str]:
    """The log's last lines, read from its end through no link and redacted, as a worker is
    shown them (a long log is not read whole)."""
    if log is None:
        return []
    return log_tail(ws.root / log, lines=LOG_LINES, chars=LOG_CHARS).splitlines()


def diff_lines(change: FileChange) -> list[str]:
    """A file's change as unified diff lines, cut at `MAX_DIFF_LINES` (the rest counted);
    none for a removed file."""
    if change.status == "removed":
        return []
    lines = change.unified()
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more lines"]
    return lines


def detail_record(detail: NodeDetail) -> dict[str, Any]:
    """The detail as JSON (`tree --node --json`, the side panel): the node's record, the
    parent compared with, each changed file's status and diff lines, the log's end."""
    return {
        "node": detail.node.to_dict(),
        "against": detail.against,
        "changes": [
            {"path": c.path, "status": c.status, "lines": diff_lines(c)} for c in detail.changes
        ],
        "unchanged": detail.unchanged,
        "log": detail.log,
        "log_tail": detail.log_tail,
    }


def files_line(detail: NodeDetail) -> str:
    """What the node's files are compared with, and how many differ, in words."""
    if detail.against is None:
        return f"A draft: its {len(detail.changes)} file(s) are all new"
    same = f", {detail.unchanged} unchanged" if detail.unchanged else ""
    return f"Files against its parent {detail.against}: {len(detail.changes)} differ{same}"


def detail_lines(detail: NodeDetail) -> list[str]:
    """The detail as text for a terminal: the node, its summary, the diff, the log's end."""
    node = detail.node
    metric = "" if node.metric is None else f", metric {node.metric:g}"
    lines = [f"node {node.id}: {node.kind}, {node.status}{metric}"]
    said = node.summary.splitlines()
    lines += [f"summary: {said[0]}", *(f"  {line}" for line in said[1:])] if said else []
    lines.append(files_line(detail))
    for change in detail.changes:
        lines.append(f"{change.path}: {change.status}")
        lines += [f"  {line}" for line in diff_lines(change)]
    if detail.log is None:
        lines.append("log: the node ran no job")
    else:
        lines.append(f"log: {detail.log} (last {len(detail.log_tail)} lines)")
        lines += [f"  {line}" for line in detail.log_tail]
    return lines
