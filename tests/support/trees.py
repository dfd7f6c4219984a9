"""A search stage's tree on disk, written the way layer 1 writes it: a `Tree` grown with the
rules of `controller.search`, saved as `json.dumps(tree.to_dict())` in `experiment/tree.json`
of a real project folder."""

from __future__ import annotations

import json
from pathlib import Path

from lightscientist_jupyter.controller import ResearchController, StageTable
from lightscientist_jupyter.controller.search import ended, next_nodes, started
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.values.search import TREE_FILE, SearchSpec, Tree
from lightscientist_jupyter.workspace import Workspace
from support.waiting import wait_for

TRAIN = "lr = 0.1\nwarmup = 0\nfor step in range(100):\n    pass\n"
"""n001's script in `with_node_files`; n004 changes its warmup."""


def _start(tree: Tree, at: float) -> tuple[Tree, list[str]]:
    plans = next_nodes(tree)
    for plan in plans:
        tree = started(tree, plan, at, job=f"j{len(tree.nodes) + 1}")
    return tree, [p.id for p in plans]


def grown_tree() -> Tree:
    """Six nodes, two at a time: drafts n001 (ok 0.52) and n002 (failed); n003 fixes n002
    (ok 0.47), n004 improves n001 (ok 0.41, the best); n005 (failed) and n006 (running)
    improve n004."""
    tree = Tree(SearchSpec("final_loss", "min", nodes=6, parallel=2))
    tree, _ = _start(tree, 1.0)
    tree = ended(tree, "n001", 10.0, metric=0.52, summary="a two-layer MLP, no warmup")
    tree = ended(tree, "n002", 11.0, metric=None, summary="NaN loss at step 40")
    tree, _ = _start(tree, 12.0)
    tree = ended(tree, "n003", 20.0, metric=0.47, summary="a lower learning rate")
    files = ("experiment/tree/n004/train.py",)
    tree = ended(tree, "n004", 30.0, metric=0.41, summary="warmup for 500 steps", files=files)
    tree, _ = _start(tree, 31.0)
    return ended(tree, "n005", 40.0, metric=None, summary="cosine schedule: out of memory")


GROWN_TEXT = """\
node      kind     status     final_loss  (lower is better)
n001      draft    ok               0.52          a two-layer MLP, no warmup
  n004    improve  ok               0.41  ★ best  warmup for 500 steps
    n005  improve  failed                         cosine schedule: out of memory
    n006  improve  running
n002      draft    failed                         NaN loss at step 40
  n003    debug    ok               0.47          a lower learning rate
6 nodes: 3 ok, 2 failed, 1 running; best n004 (final_loss 0.41) against the first draft n001 \
(0.52): 0.11 lower (21%)
"""
"""`grown_tree` as `lightscientist tree` prints it."""


def write_tree(root: Path, tree: Tree) -> Path:
    """`tree` saved as layer 1 saves it; returns the file."""
    path = root / TREE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(tree.to_dict()), encoding="utf-8")
    return path


def searched_project(workspace: Workspace, table: StageTable) -> Path:
    """A real project whose search has grown `grown_tree`; returns the tree file."""
    ResearchController.create(workspace, "find x", mode="manual", table=table, bus=EventBus())
    return write_tree(workspace.root, grown_tree())


def with_node_files(workspace: Workspace) -> Workspace:
    """A project grown as `searched_project`, given n001's and n004's folders (n004 copied
    n001's script and changed its warmup, dropped its notes and wrote its result), and its
    nodes' jobs j1…j4 run for real (`node-n00N`, each printing two lines)."""
    root = workspace.root
    (root / "experiment/tree/n001").mkdir(parents=True)
    (root / "experiment/tree/n001/train.py").write_text(TRAIN)
    (root / "experiment/tree/n001/notes.md").write_text("first try\n")
    (root / "experiment/tree/n004").mkdir(parents=True)
    (root / "experiment/tree/n004/train.py").write_text(TRAIN.replace("warmup = 0", "warmup = 500"))
    (root / "experiment/tree/n004/result.json").write_text('{"final_loss": 0.41}\n')
    jobs = JobManager(workspace, EventBus(), ProcessGroups())
    for n in range(1, 5):  # the tree names its nodes' jobs j1…j4
        job = jobs.submit("w1", f"echo node {n} ran; echo final_loss=0.4{n}", f"node-n{n:03d}")
        wait_for(
            lambda j=job.id: getattr(jobs.get(j), "status", None) == "succeeded",
            "its end",
            within=30,
        )
    return workspace
