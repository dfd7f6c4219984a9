"""Layer 1's rules for a search stage: which nodes to start next, and when the search is over.

Pure functions of the tree (`values.search.Tree`): they read no clock and no disk, so a
resumed run that loads the tree back decides exactly as the run before it would have.

Best-first, as the design card has it:
1. a failed node whose chain of fixes is shorter than `debug_depth` and that has no fix yet
   is debugged first (the most recent first): a bug left alone wastes its branch;
2. otherwise the best ok node so far is improved (several improvements of it may run at
   once: each is its own child);
3. when no node is ok and no failed one may be fixed (at the start, or every branch is
   stuck), a new draft is written from the plan.
The nodes run in rounds of up to `parallel` at once: the next round is chosen when the last
node of the round before has ended, so the tree depends on the nodes' results and never on
which job happened to finish first (a recorded run replays to the same tree, and a resumed
one goes on as the first would have). The stage creates at most `nodes` in all. The search
is over when every node it may create has ended, or as soon as an ok node reaches `target`.
"""

from __future__ import annotations

import dataclasses

from lightscientist_jupyter.values.search import Expansion, Node, SearchSpec, Tree
from lightscientist_jupyter.vocab import NodeKind, NodeStatus


def node_id(number: int) -> str:
    """The id of the tree's `number`-th node (1-based): `n001`, `n002`…"""
    return f"n{number:03d}"


def next_nodes(tree: Tree) -> list[Expansion]:
    """The nodes to start now (none while the search is over or every slot is taken)."""
    spec = tree.spec
    if search_over(tree) is not None or tree.running():
        return []
    slots = min(spec.parallel, spec.nodes - len(tree.nodes))
    planned: list[Expansion] = []
    for _ in range(max(slots, 0)):
        planned.append(_choose(tree, spec, planned, len(tree.nodes) + len(planned) + 1))
    return planned


def _choose(tree: Tree, spec: SearchSpec, planned: list[Expansion], number: int) -> Expansion:
    fixed = {n.parent for n in tree.nodes if n.kind == NodeKind.DEBUG}
    fixed |= {p.parent for p in planned if p.kind == NodeKind.DEBUG}
    for node in reversed(tree.nodes):
        if (
            node.status == NodeStatus.FAILED
            and node.id not in fixed
            and tree.depth_of_fixes(node.id) < spec.debug_depth
        ):
            return Expansion(node_id(number), NodeKind.DEBUG, node.id)
    best = tree.best()
    if best is not None:
        return Expansion(node_id(number), NodeKind.IMPROVE, best.id)
    return Expansion(node_id(number), NodeKind.DRAFT, None)


def search_over(tree: Tree) -> str | None:
    """Why the search is over (a line for PROCESS.md and the events), or None."""
    spec = tree.spec
    best = tree.best()
    if best is not None and best.metric is not None and spec.reached(best.metric):
        return (
            f"node {best.id} reached the target: {spec.metric} {best.metric:g} "
            f"({'≤' if spec.goal == 'min' else '≥'} {spec.target:g})"
        )
    if len(tree.nodes) >= spec.nodes and not tree.running():
        return f"all {spec.nodes} nodes have run"
    return None


def started(tree: Tree, expansion: Expansion, at: float, job: str | None = None) -> Tree:
    """The tree once `expansion` started (a running node)."""
    return tree.with_node(
        Node(
            expansion.id, expansion.kind, expansion.parent, NodeStatus.RUNNING, job=job, started=at
        )
    )


def ended(
    tree: Tree,
    node: str,
    at: float,
    *,
    metric: float | None,
    summary: str = "",
    files: tuple[str, ...] = (),
    cancelled: bool = False,
    job: str | None = None,
) -> Tree:
    """The tree once node `node` ended: ok with its metric, failed without one, or
    cancelled. A node that already ended stays as it was (a late report changes nothing)."""
    old = tree.node(node)
    if old.status != NodeStatus.RUNNING:
        return tree
    if cancelled:
        status = NodeStatus.CANCELLED
    else:
        status = NodeStatus.OK if metric is not None else NodeStatus.FAILED
    return tree.with_node(
        dataclasses.replace(
            old,
            status=status,
            metric=metric if status == NodeStatus.OK else None,
            ended=at,
            summary=summary or old.summary,
            files=files or old.files,
            job=job or old.job,
        )
    )


def cancel_running(tree: Tree, at: float) -> Tree:
    """Every running node marked cancelled (a cancel, or a resume after a kill: a node
    whose job no run watches any more is never rerun)."""
    for node in tree.running():
        tree = ended(tree, node.id, at, metric=None, cancelled=True)
    return tree
