"""The controller's search calls (a mixin of `ResearchController`): layer 1 keeps a search
stage's tree and decides, by the pure rules of `controller.search`, which nodes start next
and when the search is over; layer 2 carries the nodes out and reports how each ended.

The tree is `experiment/tree.json` (`values.search.TREE_FILE`), replaced atomically at every
change through the workspace's guarded path, so a reader (the views, a resumed run, the
history's snapshot) sees the tree before a change or after it, never half of it. Every
change is a `search.node` event carrying the node's record and what happened to it
(`created`, `started`, `finished`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Collection, Sequence

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.controller import search
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.values.search import TREE_FILE, Expansion, Node, SearchSpec, Tree
from lightscientist_jupyter.vocab import EventType, NodeStatus
from lightscientist_jupyter.workspace import Workspace

SUMMARY_CHARS = 2000
"""A node's summary is cut here (the tree file is read whole by every view)."""


class SearchCalls:
    """The search calls of `ResearchController` (which provides these attributes)."""

    workspace: Workspace
    table: StageTable
    bus: EventBus
    _state: ProjectState
    _lock: threading.RLock

    def search_spec(self) -> SearchSpec | None:
        """The current stage's `search` table, or None for a stage that is no search."""
        stage = self._state.stage
        return self.table[stage].search if stage in self.table else None

    def search_tree(self) -> Tree | None:
        """The current stage's tree as `experiment/tree.json` holds it (empty before its
        first node); None for a stage that is no search."""
        with self._lock:
            spec = self.search_spec()
            return self._load_tree(spec) if spec is not None else None

    def search_next(self, live: Collection[str] = ()) -> list[Expansion]:
        """The nodes to start now, created in the tree (running, not started yet).

        `live` names the nodes whose work layer 2 watches: a node the tree says is running
        but nobody watches was left by a run that was killed, and is marked cancelled —
        never run again (its files stay)."""
        with self._lock:
            spec, tree = self._search()
            now = time.time()
            for node in tree.running():
                if node.id not in live:
                    tree = search.ended(tree, node.id, now, metric=None, cancelled=True)
                    self._node_event(tree.node(node.id), "finished", tree)
            plans = search.next_nodes(tree)
            for plan in plans:
                tree = tree.with_node(Node(plan.id, plan.kind, plan.parent))
            self._save_tree(tree)
            for plan in plans:
                self._node_event(tree.node(plan.id), "created", tree)
            return plans

    def search_node_started(self, node: str, job: str | None = None) -> None:
        """Node `node`'s work began (its job `job` was submitted)."""
        with self._lock:
            _, tree = self._search()
            old = self._running(tree, node)
            tree = search.started(tree, Expansion(old.id, old.kind, old.parent), time.time(), job)
            self._save_tree(tree)
            self._node_event(tree.node(node), "started", tree)

    def search_node_ended(
        self,
        node: str,
        *,
        metric: float | None,
        summary: str = "",
        files: Sequence[str] = (),
        cancelled: bool = False,
        job: str | None = None,
    ) -> str | None:
        """Node `node` ended: ok with `metric` (read from its job's result file), failed
        without one, or cancelled. Returns why the search is now over, or None."""
        with self._lock:
            _, tree = self._search()
            self._running(tree, node)
            tree = search.ended(
                tree,
                node,
                time.time(),
                metric=metric,
                summary=redact(summary)[:SUMMARY_CHARS],
                files=tuple(files),
                cancelled=cancelled,
                job=job,
            )
            self._save_tree(tree)
            self._node_event(tree.node(node), "finished", tree)
            return search.search_over(tree)

    def search_over(self) -> str | None:
        """Why the current stage's search is over, or None while it goes on."""
        with self._lock:
            return search.search_over(self._search()[1])

    # ------------------------------------------------------------------ the file

    def _search(self) -> tuple[SearchSpec, Tree]:
        spec = self.search_spec()
        if spec is None:
            raise ControllerError(f"stage '{self._state.stage}' is no search stage")
        return spec, self._load_tree(spec)

    def _running(self, tree: Tree, node: str) -> Node:
        try:
            found = tree.node(node)
        except KeyError:
            raise ControllerError(f"no node '{node}' in {TREE_FILE}") from None
        if found.status != NodeStatus.RUNNING:
            raise ControllerError(f"node {node} has ended ({found.status})")
        return found

    def _load_tree(self, spec: SearchSpec) -> Tree:
        where = Beneath(self.workspace.root)
        try:
            text = where.read_text(TREE_FILE)
        except FileNotFoundError:
            return Tree(spec)
        except PathRefused as exc:
            raise ControllerError(f"{TREE_FILE}: {exc}") from None
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise ValueError("not a JSON object")
            return Tree.from_dict(spec, raw)
        except ValueError as exc:
            raise ControllerError(
                f"{self.workspace.root / TREE_FILE} is damaged ({exc}); move it aside to "
                "start the search afresh, or rewind the project"
            ) from None

    def _save_tree(self, tree: Tree) -> None:
        text = json.dumps(tree.to_dict(), indent=2, ensure_ascii=False) + "\n"
        Beneath(self.workspace.root).write_text_atomic(TREE_FILE, text)

    def _node_event(self, node: Node, what: str, tree: Tree) -> None:
        best = tree.best()
        record = node.to_dict()
        self.bus.emit(
            EventType.SEARCH_NODE,
            _line(node, what, tree.spec, best is not None and best.id == node.id),
            stage=self._state.stage,
            task_id=self._state.task_id,
            data={**record, "event": what, "best": best.id if best else None},
        )


def _line(node: Node, what: str, spec: SearchSpec, best: bool) -> str:
    """One line for the event stream: `n004 improve of n001 finished ok: loss 0.41 (best)`."""
    origin = f" of {node.parent}" if node.parent else ""
    head = f"{node.id} {node.kind}{origin}"
    if what != "finished":
        return f"{head} {what}" + (f" (job {node.job})" if what == "started" and node.job else "")
    if node.status == NodeStatus.OK and node.metric is not None:
        return f"{head} ok: {spec.metric} {node.metric:g}" + (" (best)" if best else "")
    return f"{head} {node.status}"
