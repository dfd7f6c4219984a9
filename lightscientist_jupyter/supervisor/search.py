"""Layer 2's side of a search stage: it runs the nodes layer 1 asks for, one worker each.

Layer 1 decides which nodes start (`StageHost.search_next`, best-first) and keeps the tree;
this module carries the nodes out without a turn of the supervisor agent: it starts a worker
for each node (labelled `node <id>`, its task naming the node's folder, its parent and the
result file), watches it, and when it has ended reads the node's metric from the result file
its job wrote — never from the worker's own text — and reports it to layer 1. Up to the
stage's `parallel` nodes run at once, each a worker whose job runs beside the others'.

The agent hears of the search once, when it is over: a `search_over` event with the best
node, the first draft and the counts, upon which it starts the stage's worker as on any
stage's start. Its input stays the size of one event however many nodes ran.

After a kill, the loop's recovery revives the node workers it knew; a node the tree says is
running but no revived worker carries was left by the killed run and is marked cancelled by
layer 1 (`search_next`'s `live`), never rerun.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.errors import ControllerError, RuntimeLayerError, SupervisorError
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.search import NODE_LABEL, NODES_DIR, TREE_FILE, Expansion, Tree
from lightscientist_jupyter.values.task import StageHost
from lightscientist_jupyter.vocab import (
    FINAL_WORKER_STATUSES,
    NodeKind,
    NodeStatus,
    SchedulingKind,
    WorkerStatus,
)
from lightscientist_jupyter.workspace import Workspace

TOLD_SUMMARY_CHARS = 300
"""A node's summary is cut to this in the `search_over` event (the tree file keeps it)."""
RESULT = "result.json"
"""The file a node's job writes in the node's folder: a JSON object holding the metric."""


def node_of(record: WorkerRecord) -> str | None:
    """The node a worker carries out (its label `node <id>`), or None for another worker."""
    label = record.label
    return label[len(NODE_LABEL) :] if label.startswith(NODE_LABEL) else None


def node_dir(node: str) -> str:
    return f"{NODES_DIR}/{node}"


class SearchRunner:
    """Runs a search stage's nodes (see the module's text); one per stage supervisor."""

    def __init__(
        self, host: StageHost, control: WorkerControl, jobs: JobManager, workspace: Workspace
    ):
        self.host = host
        self.control = control
        self.jobs = jobs
        self.workspace = workspace
        self._due = True
        """Layer 1 is to be asked for nodes: at a stage's start or resume, after a node ended."""

    def begin(self) -> None:
        """A stage (or a resumed one) is starting: ask layer 1 for nodes on the next tick."""
        self._due = True

    def tick(self, stage: SupervisedStage) -> None:
        """Start the nodes layer 1 asks for; tell the agent once the search is over."""
        if stage.task.search is None or stage.state.search_told or not self._due:
            return
        self._due = False
        workers = self._node_workers(stage)
        tree = self.host.search_tree()
        running = {n.id for n in tree.running()} if tree is not None else set()
        for node, record in workers:  # ended since the last tick, or before a restart
            if record.status in FINAL_WORKER_STATUSES and node in running:
                self._report(stage, node, record)
        live = {n for n, r in workers if r.status not in FINAL_WORKER_STATUSES}
        tree = self.host.search_tree()
        for plan in self.host.search_next(live):
            self._start(stage, plan, tree)
        if any(r.status not in FINAL_WORKER_STATUSES for _, r in self._node_workers(stage)):
            return
        reason = self.host.search_over()
        tree = self.host.search_tree()
        if reason is None or tree is None:
            return
        with stage.lock:
            stage.state.search_told = True
            stage.enqueue(
                SchedulingEvent(
                    SchedulingKind.SEARCH_OVER,
                    stage.task.task_id,
                    None,
                    _over_data(tree, reason),
                    time.time(),
                )
            )

    def screen(
        self, stage: SupervisedStage, event: SchedulingEvent | None
    ) -> SchedulingEvent | None:
        """The event for the agent, or None for a node worker's end (reported to layer 1 on
        the next tick, outside the loop's lock: layer 1's lock is never taken under it).
        Other events of a node worker (a question, a stall) reach the agent as any
        worker's do."""
        if event is None or not event.worker_id:
            return event
        record = stage.state.records.get(event.worker_id)
        node = node_of(record) if record is not None else None
        if record is None or node is None:
            return event
        ends = {
            SchedulingKind.WORKER_FINISHED,
            SchedulingKind.WORKER_FAILED,
            SchedulingKind.WORKER_CANCELLED,
        }
        if event.kind not in ends:
            return event
        self._due = True
        return None

    # ------------------------------------------------------------------ one node

    def _start(self, stage: SupervisedStage, plan: Expansion, tree: Tree | None) -> None:
        fields = node_fields(plan, tree, stage.task.search.metric if stage.task.search else "")
        if stage.task.search is not None:
            fields["metric_goal"] = stage.task.search.goal
        try:
            self.control.start_worker(label=f"{NODE_LABEL}{plan.id}", header=fields)
        except (SupervisorError, RuntimeLayerError) as exc:
            self.host.search_node_ended(plan.id, metric=None, summary=f"not started: {exc}")
            self._due = True
            return
        self.host.search_node_started(plan.id)

    def _report(self, stage: SupervisedStage, node: str, record: WorkerRecord) -> None:
        """Tell layer 1 how node `node` ended, from its worker's record and result file."""
        cancelled = record.status == WorkerStatus.CANCELLED
        spec = stage.task.search
        metric = None if cancelled or spec is None else self._metric(node, spec.metric)
        result = record.result or {}
        summary = str(result.get("summary") or record.error or "")
        jobs = self.jobs.of_worker(record.id)
        if metric is None and not cancelled:
            summary = _failure(summary, node, [j.log for j in jobs])
        try:
            self.host.search_node_ended(
                node,
                metric=metric,
                summary=summary,
                files=self._files(node),
                cancelled=cancelled,
                job=jobs[-1].id if jobs else None,
            )
        except ControllerError:
            pass  # it had ended already: an end seen again after a restart changes nothing

    def _metric(self, node: str, name: str) -> float | None:
        """The number `name` in the node's result file; None when it is missing or no
        finite number (the node failed)."""
        try:
            raw = json.loads(Beneath(self.workspace.root).read_text(f"{node_dir(node)}/{RESULT}"))
        except (FileNotFoundError, PathRefused, ValueError, UnicodeDecodeError):
            return None
        value = raw.get(name) if isinstance(raw, dict) else None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) else None

    def _files(self, node: str) -> list[str]:
        try:
            return sorted(
                p.as_posix() for p in Beneath(self.workspace.root).walk_files(node_dir(node))
            )
        except (FileNotFoundError, PathRefused, NotADirectoryError):
            return []

    def _node_workers(self, stage: SupervisedStage) -> list[tuple[str, WorkerRecord]]:
        with stage.lock:
            records = list(stage.state.records.values())
        return [(n, r) for r in records if (n := node_of(r)) is not None]


def node_fields(plan: Expansion, tree: Tree | None, metric: str) -> dict[str, Any]:
    """The header fields of a node's task (see `prompts.worker_message`)."""
    fields: dict[str, Any] = {
        "node": plan.id,
        "node_kind": str(plan.kind),
        "node_dir": node_dir(plan.id),
        "result_file": f"{node_dir(plan.id)}/{RESULT}",
        "metric": metric,
        "tree_file": TREE_FILE,
    }
    if plan.parent is not None:
        fields["node_parent"] = plan.parent
        fields["parent_dir"] = node_dir(plan.parent)
        if tree is not None:
            parent = tree.node(plan.parent)
            fields["parent_summary"] = parent.summary
            fields["parent_metric"] = parent.metric
    if tree is not None and (best := tree.best()) is not None:
        fields["best_node"] = best.id
        fields["best_metric"] = best.metric
    if plan.kind == NodeKind.DEBUG:
        fields["instructions"] = (
            f"Node {plan.parent} failed: find the bug from its summary and its job's log, "
            f"copy its files into {node_dir(plan.id)} and fix the bug there."
        )
    elif plan.kind == NodeKind.IMPROVE:
        fields["instructions"] = (
            f"Improve on node {plan.parent} (the best so far): copy its files into "
            f"{node_dir(plan.id)} and change one thing you expect to better the metric."
        )
    else:
        fields["instructions"] = (
            f"Draft a variant of the experiment from the plan, in {node_dir(plan.id)}."
        )
    return fields


def _failure(summary: str, node: str, logs: list[str]) -> str:
    head = f"no '{RESULT}' with the metric in {node_dir(node)}"
    logs_line = f"; its job's log: {', '.join(logs)}" if logs else ""
    return f"{head}{logs_line}. {summary}".strip()


def _over_data(tree: Tree, reason: str) -> dict[str, Any]:
    """What the agent is told of a search that is over: why, the best node, the first
    draft, and how many nodes ended how (never the whole tree)."""
    counts: dict[str, int] = {}
    for node in tree.nodes:
        counts[str(node.status)] = counts.get(str(node.status), 0) + 1
    best = tree.best()
    drafts = [n for n in tree.nodes if n.kind == NodeKind.DRAFT and n.status == NodeStatus.OK]
    data: dict[str, Any] = {"reason": reason, "counts": counts, "tree_file": TREE_FILE}
    if best is not None:
        data["best"] = _short(best.to_dict())
    if drafts:
        data["first_draft"] = _short(drafts[0].to_dict())
    return data


def _short(record: Any) -> dict[str, Any]:
    keep = ("id", "kind", "parent", "metric")
    summary = str(record["summary"])
    if len(summary) > TOLD_SUMMARY_CHARS:
        summary = summary[: TOLD_SUMMARY_CHARS - 1] + "…"
    return {**{k: record[k] for k in keep}, "summary": summary}
