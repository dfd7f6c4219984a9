"""A search stage's rules (`controller.search`) and its values (`values.search`): which nodes
start next, best-first, and when the search is over; the `search` key of a stage table."""

from __future__ import annotations

import json

import pytest

from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.controller.search import (
    cancel_running,
    ended,
    next_nodes,
    search_over,
    started,
)
from lightscientist_jupyter.values.search import SearchSpec, Tree, parse_spec
from lightscientist_jupyter.vocab import NodeKind, NodeStatus
from tests.controller.test_loader import GOOD, line_of, load_error, only_problem

SKILLS = {"skills/first.md": "x", "skills/second.md": "y"}


def start_all(tree: Tree, at: float = 0.0) -> tuple[Tree, list[str]]:
    """Start every node the rules ask for; returns the tree and the started ids."""
    plans = next_nodes(tree)
    for plan in plans:
        tree = started(tree, plan, at)
    return tree, [p.id for p in plans]


def shape(tree: Tree) -> list[tuple[str, str, str | None, str]]:
    return [(n.id, str(n.kind), n.parent, str(n.status)) for n in tree.nodes]


# ------------------------------------------------------------------------- the policy


def test_a_search_drafts_first_then_debugs_a_failure_then_improves_the_best():
    tree = Tree(SearchSpec("loss", "min", nodes=6, parallel=2, debug_depth=1))
    tree, first = start_all(tree)
    assert first == ["n001", "n002"]  # nothing is ok yet: two drafts at once
    tree = ended(tree, "n001", 1.0, metric=0.50, summary="lr 0.1")
    # a round waits for its last node: which job ends first never shapes the tree
    assert next_nodes(tree) == []
    tree = ended(tree, "n002", 1.5, metric=None, summary="NaN in epoch 2")
    tree, second = start_all(tree, 2.0)
    # the failed draft is fixed first; the other slot improves the best node
    assert shape(tree)[2:] == [
        ("n003", "debug", "n002", "running"),
        ("n004", "improve", "n001", "running"),
    ]
    tree = ended(tree, "n003", 3.0, metric=None)  # the fix failed too: depth 1 reached
    tree = ended(tree, "n004", 3.0, metric=0.40)
    tree, third = start_all(tree, 4.0)
    assert [(n.kind, n.parent) for n in tree.nodes[4:]] == [
        (NodeKind.IMPROVE, "n004"),
        (NodeKind.IMPROVE, "n004"),
    ]
    best = tree.best()
    assert best is not None and best.id == "n004"
    assert search_over(tree) is None  # two still running
    tree = ended(tree, "n005", 5.0, metric=0.45)
    tree = ended(tree, "n006", 5.0, metric=0.30)
    assert next_nodes(tree) == []
    assert search_over(tree) == "all 6 nodes have run"
    assert tree.to_dict()["best"] == "n006"


def test_a_stuck_search_drafts_anew():
    tree = Tree(SearchSpec("acc", "max", nodes=4, parallel=1, debug_depth=1))
    tree, _ = start_all(tree)
    tree = ended(tree, "n001", 1.0, metric=None)
    tree, _ = start_all(tree)
    tree = ended(tree, "n002", 2.0, metric=None)  # the fix failed: that branch is stuck
    tree, ids = start_all(tree)
    assert shape(tree)[2] == ("n003", "draft", None, "running") and ids == ["n003"]


def test_the_target_ends_the_search_early():
    tree = Tree(SearchSpec("acc", "max", nodes=10, parallel=2, target=0.9))
    tree, _ = start_all(tree)
    tree = ended(tree, "n001", 1.0, metric=0.95)
    assert search_over(tree) == "node n001 reached the target: acc 0.95 (≥ 0.9)"
    assert next_nodes(tree) == []  # the running draft may end; nothing new starts


def test_a_node_ended_once_stays_ended_and_a_kill_cancels_the_running():
    tree = Tree(SearchSpec("loss", nodes=3, parallel=2))
    tree, _ = start_all(tree)
    tree = ended(tree, "n001", 1.0, metric=0.2)
    assert ended(tree, "n001", 9.0, metric=0.1) == tree
    tree = cancel_running(tree, 2.0)
    assert [str(n.status) for n in tree.nodes] == ["ok", "cancelled"]
    tree, ids = start_all(tree)
    assert ids == ["n003"] and tree.node("n003").kind == NodeKind.IMPROVE


def test_the_tree_file_round_trips_and_a_damaged_one_is_named():
    spec = SearchSpec("loss")
    tree, _ = start_all(Tree(spec, ()))
    tree = ended(tree, "n001", 1.0, metric=0.5, files=("experiment/tree/n001/run.py",))
    text = json.dumps(tree.to_dict())
    assert Tree.from_dict(spec, json.loads(text)) == tree
    broken = json.loads(text)
    broken["nodes"][0]["status"] = "exploded"
    with pytest.raises(ValueError, match="node n001: 'exploded' is not a valid NodeStatus"):
        Tree.from_dict(spec, broken)
    for key, value, says in (
        ("parent", 7, "'parent' must be a node id"),
        ("files", "a.py", "'files' must be a list"),
    ):
        bad = json.loads(text)
        bad["nodes"][0][key] = value
        with pytest.raises(ValueError, match=f"node n001: {says}"):
            Tree.from_dict(spec, bad)
    orphan = {"nodes": [{"id": "n002", "parent": "n001", "kind": "improve", "status": "ok"}]}
    with pytest.raises(ValueError, match="its parent n001 is not a node before it"):
        Tree.from_dict(spec, orphan)


def test_running_nodes_are_in_the_tree_with_their_status():
    tree, _ = start_all(Tree(SearchSpec("loss", parallel=3, nodes=2)))
    assert [n.status for n in tree.running()] == [NodeStatus.RUNNING, NodeStatus.RUNNING]


# ------------------------------------------------------------------------- the table key


def test_a_search_stage_reaches_the_table(tmp_path, write_table):
    text = GOOD.replace(
        'allowed = ["second"]',
        'allowed = ["second"]\nsearch = { metric = "final_loss", nodes = 12, parallel = 2 }',
    )
    table = load_table(write_table(tmp_path, text, SKILLS))
    assert table["first"].search == SearchSpec("final_loss", "min", 12, 2, 2, None)
    assert table["second"].search is None


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ('{ goal = "min" }', "'metric' must name the result's number"),
        ('{ metric = "loss", goal = "lowest" }', "'goal' must be \"min\" or \"max\", not 'lowest'"),
        ('{ metric = "loss", nodes = 0 }', "'nodes' must be an integer from 1 to 500, not 0"),
        ('{ metric = "loss", parallel = true }', "'parallel' must be an integer from 1 to 64"),
        ('{ metric = "loss", target = "low" }', "'target' must be a number, not 'low'"),
        ('{ metric = "loss", width = 3 }', "unknown key 'width'"),
    ],
)
def test_a_bad_search_value_is_refused_with_its_line(tmp_path, write_table, search, expected):
    text = GOOD.replace('allowed = ["second"]', f'allowed = ["second"]\nsearch = {search}')
    problem = only_problem(load_error(write_table(tmp_path, text, SKILLS)))
    assert problem.startswith(f"stage 'first', key 'search' (line {line_of(text, 'search =')}): ")
    assert expected in problem


def test_parse_spec_reports_every_problem_at_once():
    with pytest.raises(ValueError) as info:
        parse_spec({"goal": "up", "nodes": -1})
    assert str(info.value).count("must") == 3
