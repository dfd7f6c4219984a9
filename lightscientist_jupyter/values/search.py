"""A search stage's settings and its tree of experiment variants, as plain values.

A stage table entry may carry `search = { metric = "final_loss", goal = "min", nodes = 12,
parallel = 2, debug_depth = 2, target = 0.1 }`: the stage is then a best-first search over
variants of its experiment, each a node run as a job. Layer 1 owns the tree and its rules
(`controller.search`); layer 2 schedules the nodes it is told to; the tree is written to
`experiment/tree.json` in the shape `Tree.to_dict` gives (the design's "Search stage"):

    {"metric", "goal", "best", "nodes": [{"id", "parent", "kind", "status", "metric",
     "job", "started", "ended", "summary", "files"}]}

This module is a leaf below the layers (layer 1 decides on these values, layer 2 carries
them out); it reads and writes nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, TypedDict

from lightscientist_jupyter.values.bounded import bounded_ints
from lightscientist_jupyter.vocab import NodeKind, NodeStatus

SEARCH_KEYS = ("metric", "goal", "nodes", "parallel", "debug_depth", "target")
GOALS = ("min", "max")
TREE_FILE = "experiment/tree.json"
"""Where a search stage's tree is kept, relative to the workspace."""
NODES_DIR = "experiment/tree"
"""A node's files are kept in `<NODES_DIR>/<node id>/`."""
MAX_NODES = 500
"""More nodes than this in one stage is a table's mistake, not a search."""


@dataclasses.dataclass(frozen=True)
class SearchSpec:
    """A stage's `search` table, validated."""

    metric: str
    """The name of the number each node's result file (JSON) reports."""
    goal: str = "min"
    """`min` or `max`: which way the metric is better."""
    nodes: int = 8
    """How many nodes the stage runs at most (every kind counted)."""
    parallel: int = 1
    """How many nodes run at once."""
    debug_depth: int = 2
    """How many fixes in a row a failed branch gets before it is left."""
    target: float | None = None
    """A metric that, once reached by an ok node, ends the search early."""

    def better(self, a: float, b: float) -> bool:
        """Whether metric `a` is strictly better than `b` for this goal."""
        return a < b if self.goal == "min" else a > b

    def reached(self, metric: float) -> bool:
        """Whether `metric` reaches the target (never, without one)."""
        if self.target is None:
            return False
        return metric <= self.target if self.goal == "min" else metric >= self.target


def parse_spec(raw: Mapping[str, Any]) -> SearchSpec:
    """The `search` table of a stage, or a `ValueError` naming every key to fix."""
    problems = [f"unknown key '{key}'" for key in raw if key not in SEARCH_KEYS]
    metric = raw.get("metric")
    if not isinstance(metric, str) or not metric.strip():
        problems.append("'metric' must name the result's number (a non-empty string)")
    goal = raw.get("goal", "min")
    if goal not in GOALS:
        problems.append(f'\'goal\' must be "min" or "max", not {goal!r}')
    counts = {"nodes": (8, 1, MAX_NODES), "parallel": (1, 1, 64), "debug_depth": (2, 0, 20)}
    values = bounded_ints(raw, counts, problems)
    target = raw.get("target")
    if target is not None and (
        isinstance(target, bool)
        or not isinstance(target, int | float)
        or not math.isfinite(float(target))
    ):
        problems.append(f"'target' must be a number, not {target!r}")
    if problems:
        raise ValueError("; ".join(problems))
    assert isinstance(metric, str)
    return SearchSpec(
        metric=metric.strip(),
        goal=str(goal),
        target=None if target is None else float(target),
        **values,
    )


class NodeRecord(TypedDict):
    """One node as `experiment/tree.json` and the `search.node` events hold it."""

    id: str
    parent: str | None
    kind: str
    status: str
    metric: float | None
    job: str | None
    started: float | None
    ended: float | None
    summary: str
    files: list[str]


class TreeRecord(TypedDict):
    """`experiment/tree.json`."""

    metric: str
    goal: str
    best: str | None
    nodes: list[NodeRecord]


NODE_LABEL = "node "
"""The label of a node's worker starts so: `node n003`."""


@dataclasses.dataclass(frozen=True)
class Expansion:
    """A node to start: its id, what it is and which node it grows from."""

    id: str
    kind: NodeKind
    parent: str | None


@dataclasses.dataclass(frozen=True)
class Node:
    """One variant of the experiment: what it is, where it came from, how it went."""

    id: str
    kind: NodeKind
    parent: str | None = None
    status: NodeStatus = NodeStatus.RUNNING
    metric: float | None = None
    """From the node's result file; None until it ends ok."""
    job: str | None = None
    started: float | None = None
    ended: float | None = None
    summary: str = ""
    files: tuple[str, ...] = ()
    """Its files, relative to the workspace (below `NODES_DIR/<id>/`)."""

    def to_dict(self) -> NodeRecord:
        return {
            "id": self.id,
            "parent": self.parent,
            "kind": str(self.kind),
            "status": str(self.status),
            "metric": self.metric,
            "job": self.job,
            "started": self.started,
            "ended": self.ended,
            "summary": self.summary,
            "files": list(self.files),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Node:
        """A node read back from `tree.json`; `ValueError` naming the key that is wrong."""
        node_id = raw.get("id")
        if not isinstance(node_id, str) or not node_id:
            raise ValueError(f"a node without an 'id' string: {dict(raw)!r}")
        try:
            kind, status = NodeKind(str(raw.get("kind"))), NodeStatus(str(raw.get("status")))
        except ValueError as exc:
            raise ValueError(f"node {node_id}: {exc}") from None
        metric = raw.get("metric")
        if metric is not None and (isinstance(metric, bool) or not isinstance(metric, int | float)):
            raise ValueError(f"node {node_id}: 'metric' must be a number or null")
        parent = raw.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise ValueError(f"node {node_id}: 'parent' must be a node id or null")
        files = raw.get("files") or []
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise ValueError(f"node {node_id}: 'files' must be a list of paths")
        return cls(
            id=node_id,
            kind=kind,
            parent=parent,
            status=status,
            metric=None if metric is None else float(metric),
            job=raw.get("job") if isinstance(raw.get("job"), str) else None,
            started=_time(raw.get("started")),
            ended=_time(raw.get("ended")),
            summary=str(raw.get("summary") or ""),
            files=tuple(files),
        )


def _time(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclasses.dataclass(frozen=True)
class Tree:
    """A search stage's nodes, in the order they were created."""

    spec: SearchSpec
    nodes: tuple[Node, ...] = ()

    def node(self, node_id: str) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def children(self, node_id: str) -> list[Node]:
        return [n for n in self.nodes if n.parent == node_id]

    def running(self) -> list[Node]:
        return [n for n in self.nodes if n.status == NodeStatus.RUNNING]

    def best(self) -> Node | None:
        """The ok node with the best metric (the earliest of equals)."""
        best: Node | None = None
        for node in self.nodes:
            if node.status != NodeStatus.OK or node.metric is None:
                continue
            if best is None or self.spec.better(node.metric, best.metric or 0.0):
                best = node
        return best

    def depth_of_fixes(self, node_id: str) -> int:
        """How many debug nodes in a row lead to `node_id` (itself included)."""
        depth = 0
        current: Node | None = self.node(node_id)
        while current is not None and current.kind == NodeKind.DEBUG:
            depth += 1
            current = self.node(current.parent) if current.parent else None
        return depth

    def with_node(self, node: Node) -> Tree:
        """This tree with `node` added, or replacing the node of the same id."""
        kept = [n for n in self.nodes if n.id != node.id]
        if len(kept) == len(self.nodes):
            return dataclasses.replace(self, nodes=(*self.nodes, node))
        return dataclasses.replace(
            self, nodes=tuple(node if n.id == node.id else n for n in self.nodes)
        )

    def to_dict(self) -> TreeRecord:
        best = self.best()
        return {
            "metric": self.spec.metric,
            "goal": self.spec.goal,
            "best": best.id if best else None,
            "nodes": [n.to_dict() for n in self.nodes],
        }

    @classmethod
    def from_dict(cls, spec: SearchSpec, raw: Mapping[str, Any]) -> Tree:
        """The tree kept in `tree.json`, under the stage's spec; `ValueError` naming what is
        wrong (a node twice, a parent that is not a node before it)."""
        nodes: list[Node] = []
        seen: set[str] = set()
        for item in raw.get("nodes") or ():
            if not isinstance(item, Mapping):
                raise ValueError(f"a node must be an object, not {item!r}")
            node = Node.from_dict(item)
            if node.id in seen:
                raise ValueError(f"node {node.id} is listed twice")
            if node.parent is not None and node.parent not in seen:
                raise ValueError(
                    f"node {node.id}: its parent {node.parent} is not a node before it"
                )
            seen.add(node.id)
            nodes.append(node)
        return cls(spec, tuple(nodes))
