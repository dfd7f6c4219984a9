"""A search stage's tree for the front doors (`lightscientist tree`, `%lightscientist tree`,
`api.tree`).

Read from `experiment/tree.json` (`values.search.TREE_FILE`), which layer 1 rewrites
atomically at every change of the tree, so a search another process runs shows too; reading
changes nothing. The file is checked with the same `Tree.from_dict` layer 1 loads it back
with, under a `SearchSpec` made of its own `metric` and `goal`, and its `best` must name one
of its nodes: every view marks the node the file calls best, so the drawing, the text and
`--json` never disagree. A missing or damaged file is a `TreeUnavailable` whose one line
names the file and what is wrong.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any, cast

from lightscientist_jupyter.app.commands import require_project
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.values.search import (
    TREE_FILE,
    Node,
    Tree,
    TreeRecord,
    parse_spec,
)
from lightscientist_jupyter.vocab import NodeKind, NodeStatus
from lightscientist_jupyter.workspace import Workspace

COLUMNS = (
    "id",
    "parent",
    "kind",
    "status",
    "metric",
    "job",
    "started",
    "ended",
    "summary",
    "files",
    "depth",
    "best",
)
"""The columns of `node_rows` (and of `api.tree`'s frame): a node's record, its depth below
its draft (a draft is 0) and whether it is the best node."""
BEST_MARK = "★ best"
"""How the text view marks the best node (a column of its own)."""
STATUS_ORDER = (NodeStatus.OK, NodeStatus.FAILED, NodeStatus.RUNNING, NodeStatus.CANCELLED)
"""The order in which the counts by status are said."""
SUMMARY_CHARS = 60
"""A node's summary is cut to this in the text view (the record keeps it whole)."""
_JSON_KINDS: dict[type, str] = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
"""What a file that is JSON but not an object holds, in JSON's words."""


class TreeUnavailable(LightScientistError):
    """There is no search tree to show, or its file is damaged (the message names it). The
    command line exits 1 (`status` and the rest of the project are fine)."""


@dataclasses.dataclass(frozen=True)
class SearchView:
    """A search stage's tree as its file holds it, checked."""

    record: TreeRecord
    """The file's record, as read (what `--json` prints)."""
    tree: Tree
    best: str | None
    """The node the file calls best (None: no node is ok yet)."""

    def walk(self) -> list[tuple[Node, int]]:
        """Every node with its depth, each under its parent (children in the order they
        were made), drafts in order."""
        shown: list[tuple[Node, int]] = []
        stack = [(n, 0) for n in reversed(self.tree.nodes) if n.parent is None]
        while stack:
            node, depth = stack.pop()
            shown.append((node, depth))
            stack += [(child, depth + 1) for child in reversed(self.tree.children(node.id))]
        return shown

    def first_draft(self) -> Node | None:
        return next((n for n in self.tree.nodes if n.kind == NodeKind.DRAFT), None)


def read_tree(ws: Workspace) -> SearchView:
    """The project's search tree; `BadInput` when `ws` holds no project, `TreeUnavailable`
    when it has no tree file or the file is not a tree."""
    require_project(ws)
    path = ws.root / TREE_FILE
    try:
        text = Beneath(ws.root).read_text(TREE_FILE)
    except FileNotFoundError:
        raise TreeUnavailable(
            f"no search tree in {ws.root} (the project has no search stage, or it has not started)"
        ) from None
    except OSError as exc:  # a folder or a link where the file should be, unreadable
        raise TreeUnavailable(f"cannot read the search tree {path}: {exc}") from None
    try:
        return parse_record(json.loads(text))
    except json.JSONDecodeError as exc:  # cut short, or not JSON at all
        raise TreeUnavailable(f"the search tree {path} is damaged: not JSON ({exc})") from None
    except (ValueError, TypeError) as exc:  # a value of the wrong shape or type
        raise TreeUnavailable(f"the search tree {path} is damaged: {exc}") from None


def parse_record(raw: Any) -> SearchView:
    """A tree file's record, checked (`ValueError` saying what is wrong)."""
    if not isinstance(raw, dict):
        raise ValueError(f"it holds {_JSON_KINDS.get(type(raw), 'a value')}, not a JSON object")
    spec = parse_spec({"metric": raw.get("metric"), "goal": raw.get("goal")})
    if not isinstance(raw.get("nodes"), list):
        raise ValueError("'nodes' must be a list")
    tree = Tree.from_dict(spec, raw)
    best = raw.get("best")
    if best is not None and (not isinstance(best, str) or best not in {n.id for n in tree.nodes}):
        raise ValueError(f"'best' names no node of the tree: {best!r}")
    return SearchView(cast(TreeRecord, raw), tree, best)


def node_rows(view: SearchView) -> list[dict[str, Any]]:
    """One dict per node, in the order they were made: its record, `depth` and `best`."""
    depths = {node.id: depth for node, depth in view.walk()}
    return [
        {**node.to_dict(), "depth": depths[node.id], "best": node.id == view.best}
        for node in view.tree.nodes
    ]


# ------------------------------------------------------------------------- text


def metric_text(metric: float | None) -> str:
    return "" if metric is None else f"{metric:g}"


def tree_lines(view: SearchView) -> list[str]:
    """The tree as text for a terminal: a head, one line per node indented under its
    parent (kind, status, metric, the best marked, its summary), then `summary_line`."""
    spec = view.tree.spec
    walked = view.walk()
    names = [printable("  " * depth + node.id) for node, depth in walked]
    width = max([len("node"), *map(len, names)])
    metrics = [metric_text(node.metric) for node, _ in walked]
    column = max([len(printable(spec.metric)), *map(len, metrics)])
    better = "lower" if spec.goal == "min" else "higher"
    lines = [
        f"{'node':<{width}}  {'kind':<7}  {'status':<9}  {printable(spec.metric):>{column}}"
        f"  ({better} is better)"
    ]
    marks = {view.best: BEST_MARK} if view.best else {}
    for name, (node, _), metric in zip(names, walked, metrics, strict=True):
        summary = printable(node.summary)
        if len(summary) > SUMMARY_CHARS:
            summary = summary[: SUMMARY_CHARS - 1] + "…"
        mark = f"{marks.get(node.id, ''):<{len(BEST_MARK)}}  " if marks else ""
        line = f"{name:<{width}}  {node.kind:<7}  {node.status:<9}  {metric:>{column}}"
        lines.append(f"{line}  {mark}{summary}".rstrip())
    lines.append(summary_line(view))
    return lines


def summary_line(view: SearchView) -> str:
    """How many nodes there are by status, and the best node against the first draft."""
    nodes = view.tree.nodes
    if not nodes:
        return "0 nodes: the search has started none yet"
    counts = Counter(node.status for node in nodes)
    by_status = ", ".join(f"{counts[s]} {s}" for s in STATUS_ORDER if counts[s])
    head = f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}: {by_status}"
    if view.best is None:
        return f"{head}; no node is ok yet"
    metric = printable(view.tree.spec.metric)
    best = view.tree.node(view.best)
    said = f"{head}; best {printable(best.id)} ({metric} {metric_text(best.metric)})"
    first = view.first_draft()
    if first is None or first.id == best.id:
        return said + (", the first draft" if first is not None else "")
    if first.metric is None or best.metric is None:
        return f"{said}; the first draft {printable(first.id)} has no {metric} ({first.status})"
    change = best.metric - first.metric
    way = "lower" if change < 0 else "higher"
    share = f" ({abs(change) / abs(first.metric):.0%})" if first.metric else ""
    return (
        f"{said} against the first draft {printable(first.id)} ({metric_text(first.metric)}): "
        f"{abs(change):g} {way}{share}"
    )
