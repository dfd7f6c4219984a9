"""A search stage's tree for the doors: `app.search` reads the file layer 1 writes
(`experiment/tree.json`) in a real project."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support.trees import grown_tree, searched_project

from lightscientist_jupyter.app import search
from lightscientist_jupyter.app.search import TreeUnavailable
from lightscientist_jupyter.controller.search import Expansion, ended, started
from lightscientist_jupyter.values.search import SearchSpec, Tree
from lightscientist_jupyter.vocab import NodeKind


@pytest.fixture
def tree_file(workspace, small_table):
    return searched_project(workspace, small_table)


# ------------------------------------------------------------------------- reading the file


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda r: [r], "it holds a list, not a JSON object"),
        (lambda r: r | {"goal": "lowest"}, "'goal' must be \"min\" or \"max\", not 'lowest'"),
        (lambda r: r | {"nodes": {}}, "'nodes' must be a list"),
        (lambda r: r | {"best": "n009"}, "'best' names no node of the tree: 'n009'"),
        (
            lambda r: r | {"nodes": r["nodes"][1:]},
            "node n004: its parent n001 is not a node before it",
        ),
        (
            lambda r: r | {"nodes": [r["nodes"][0] | {"metric": "low"}]},
            "node n001: 'metric' must be a number or null",
        ),
        (
            lambda r: r | {"nodes": [r["nodes"][0] | {"status": "lost"}]},
            "node n001: 'lost' is not a valid NodeStatus",
        ),
    ],
)
def test_what_is_wrong_in_a_damaged_tree_is_named(workspace, tree_file, change, why):
    record = json.loads(tree_file.read_text(encoding="utf-8"))
    tree_file.write_text(json.dumps(change(record)), encoding="utf-8")
    with pytest.raises(TreeUnavailable) as raised:
        search.read_tree(workspace)
    assert str(raised.value).startswith(f"the search tree {tree_file} is damaged: {why}")
    assert "\n" not in str(raised.value)


def last_line(tree: Tree) -> str:
    return search.summary_line(search.parse_record(tree.to_dict()))


@pytest.mark.unit
def test_the_last_line_of_a_search_with_no_ok_node_yet():
    spec = SearchSpec("accuracy", "max")
    assert last_line(Tree(spec)) == "0 nodes: the search has started none yet"
    tree = started(Tree(spec), Expansion("n001", NodeKind.DRAFT, None), 1.0)
    tree = ended(tree, "n001", 2.0, metric=None)
    tree = started(tree, Expansion("n002", NodeKind.DEBUG, "n001"), 3.0)
    assert last_line(tree) == "2 nodes: 1 failed, 1 running; no node is ok yet"
    tree = ended(tree, "n002", 4.0, metric=0.9)
    assert last_line(tree) == (
        "2 nodes: 1 ok, 1 failed; best n002 (accuracy 0.9); the first draft n001 has no "
        "accuracy (failed)"
    )


@pytest.mark.unit
def test_the_last_line_when_the_first_draft_is_the_best_or_higher_is_better():
    spec = SearchSpec("accuracy", "max")
    tree = started(Tree(spec), Expansion("n001", NodeKind.DRAFT, None), 1.0)
    tree = ended(tree, "n001", 2.0, metric=0.8)
    assert last_line(tree) == "1 node: 1 ok; best n001 (accuracy 0.8), the first draft"
    tree = started(tree, Expansion("n002", NodeKind.IMPROVE, "n001"), 3.0)
    tree = ended(tree, "n002", 4.0, metric=0.9)
    assert last_line(tree).endswith(
        "best n002 (accuracy 0.9) against the first draft n001 (0.8): 0.1 higher (12%)"
    )


@pytest.mark.unit
def test_text_from_the_file_cannot_drive_a_terminal():
    tree = grown_tree()
    node = dataclasses.replace(tree.node("n001"), summary="\x1b[2Jgone")
    lines = search.tree_lines(search.parse_record(tree.with_node(node).to_dict()))
    assert "\x1b" not in "".join(lines) and "\\x1b[2Jgone" in lines[1]
