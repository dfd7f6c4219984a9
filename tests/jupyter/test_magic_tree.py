"""`%lightscientist tree` on a real project whose search tree layer 1 wrote: drawn as SVG,
its text the command line's, `--json` the file's record; no tree or a damaged one is a
one-line `UsageError`."""

from __future__ import annotations

import json
import re

import pytest
from IPython.core.error import UsageError
from support.trees import GROWN_TEXT, searched_project

from lightscientist_jupyter.app.search import parse_record
from lightscientist_jupyter.jupyter.search_tree import TreeDiagram, render_svg
from lightscientist_jupyter.values.search import SearchSpec, Tree
from tests.jupyter.test_magic import fresh_defaults, ip, ls  # noqa: F401 (fixtures)


@pytest.fixture
def tree_file(workspace, small_table):
    return searched_project(workspace, small_table)


def test_tree_is_drawn_with_every_node_and_the_best_marked(ip, workspace, tree_file):  # noqa: F811
    shown = ls(ip, f'tree -w "{workspace.root}"')
    assert isinstance(shown, TreeDiagram)
    page = shown._repr_html_()
    svg = page[page.index("<svg") : page.index("</svg>")]
    drawn = re.findall(r'<g class="([^"]+)" data-node="(\w+)" data-status="(\w+)"', svg)
    assert [(node, status) for _, node, status in drawn] == [
        ("n001", "ok"),
        ("n002", "failed"),
        ("n003", "ok"),
        ("n004", "ok"),
        ("n005", "failed"),
        ("n006", "running"),
    ]
    assert [node for classes, node, _ in drawn if "ls-tree-best" in classes] == ["n004"]
    assert svg.count("★ best") == 1 and "n004 · improve" in svg and "ok · 0.41" in svg
    edges = re.findall(r'data-from="(\w+)" data-to="(\w+)"', svg)
    assert sorted(edges) == [
        ("n001", "n004"),
        ("n002", "n003"),
        ("n004", "n005"),
        ("n004", "n006"),
    ]
    darker = re.findall(r'class="ls-edge ls-taken" data-from="(\w+)" data-to="(\w+)"', svg)
    assert darker == [("n001", "n004")]  # the way to the best node
    assert ".ls-tree-node" in page  # the style sheet travels with it (a saved notebook)
    assert repr(shown) + "\n" == GROWN_TEXT  # its plain text is the command line's


def test_tree_json_is_the_files_record(ip, workspace, tree_file):  # noqa: F811
    assert ls(ip, f'tree --json -w "{workspace.root}"') == json.loads(tree_file.read_text())


def test_no_tree_or_a_damaged_one_is_one_line(ip, workspace, tree_file, tmp_path):  # noqa: F811
    tree_file.write_text("[]", encoding="utf-8")
    with pytest.raises(UsageError) as damaged:
        ls(ip, f'tree -w "{workspace.root}"')
    assert str(damaged.value) == (
        f"%lightscientist tree: the search tree {tree_file} is damaged: it holds a list, not a "
        "JSON object"
    )
    tree_file.unlink()
    with pytest.raises(UsageError, match=r"^%lightscientist tree: no search tree in .*\)$"):
        ls(ip, f'tree -w "{workspace.root}"')
    with pytest.raises(UsageError, match="no LightScientist project in"):
        ls(ip, f'tree -w "{tmp_path / "elsewhere"}"')


@pytest.mark.unit
def test_a_tree_without_nodes_is_drawn_saying_so():
    empty = parse_record(Tree(SearchSpec("final_loss")).to_dict())
    svg = render_svg(empty)
    assert "no node yet" in svg and "0 nodes: the search has started none yet" in svg
