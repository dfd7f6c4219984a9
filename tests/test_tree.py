"""A search stage's tree at the doors: `app.search` reads the file layer 1 writes
(`experiment/tree.json`) in a real project; `lightscientist tree` (run as a real subprocess)
prints it, `api.tree` gives its DataFrame."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pandas as pd
import pytest
from support.trees import GROWN_TEXT, grown_tree, searched_project, write_tree

from lightscientist_jupyter import api
from lightscientist_jupyter.app import search
from lightscientist_jupyter.app.search import TreeUnavailable
from lightscientist_jupyter.controller.search import Expansion, ended, started
from lightscientist_jupyter.errors import BadInput
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


# ------------------------------------------------------------------------- the command line


def tree_command(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", "tree", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_text_has_a_line_per_node_under_its_parent_and_marks_the_best(workspace, tree_file):
    result = tree_command(cwd=workspace.root)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == GROWN_TEXT


def test_json_is_the_tree_file(workspace, tree_file):
    result = tree_command("--json", "--workspace", str(workspace.root), cwd=workspace.root.parent)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(tree_file.read_text(encoding="utf-8"))


def test_a_project_without_a_tree_file_is_one_line_and_exit_1(workspace, tree_file):
    tree_file.unlink()
    result = tree_command(cwd=workspace.root)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"lightscientist tree: no search tree in {workspace.root} (the project has no search "
        "stage, or it has not started)"
    ]


def test_a_damaged_tree_file_is_one_line_naming_it_and_exit_1(workspace, tree_file):
    tree_file.write_text('{"metric": "final_loss", "goal": "min", "nodes": [', encoding="utf-8")
    result = tree_command(cwd=workspace.root)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"lightscientist tree: the search tree {tree_file} is damaged: not JSON "
        "(Expecting value: line 1 column 51 (char 50))"
    ]


def test_a_folder_that_is_no_project_says_so_as_status_does(tmp_path):
    result = tree_command(cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"lightscientist tree: error: no LightScientist project in {tmp_path}; start one there "
        'with `research "<goal>"`, or name a project\'s folder with --workspace'
    ]
    with pytest.raises(BadInput, match="no LightScientist project in"):
        api.tree(tmp_path)


# ------------------------------------------------------------------------- the API


def test_the_api_gives_a_row_per_node_with_its_depth_and_whether_it_is_best(workspace, tree_file):
    frame = api.tree(workspace.root)
    assert list(frame.columns) == [*json.loads(tree_file.read_text())["nodes"][0], "depth", "best"]
    assert list(frame["id"]) == ["n001", "n002", "n003", "n004", "n005", "n006"]
    assert list(frame["depth"]) == [0, 0, 1, 1, 2, 2]
    assert list(frame.loc[frame["best"], "id"]) == ["n004"]
    n004 = frame.set_index("id").loc["n004"]
    assert (n004["kind"], n004["status"], n004["metric"], n004["parent"]) == (
        "improve",
        "ok",
        0.41,
        "n001",
    )
    assert n004["files"] == ["experiment/tree/n004/train.py"]
    assert n004["ended"] == pd.Timestamp(30, unit="s")
    assert pd.isna(frame.set_index("id").loc["n006", "ended"])  # still running


def test_a_tree_written_again_is_read_again(workspace, tree_file):
    tree = ended(grown_tree(), "n006", 50.0, metric=0.39)
    write_tree(workspace.root, tree)
    assert list(api.tree(workspace.root).query("best")["id"]) == ["n006"]
