"""One node of a search tree looked at closely (`app.search_node`): in a real project whose
nodes' folders and job hold real files, `lightscientist tree --node` (a real subprocess) and
`%lightscientist tree --node` show the node's summary, each file it changed against its
parent's folder, and the end of its job's log."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.trees import searched_project, with_node_files

from lightscientist_jupyter.app import search_node
from lightscientist_jupyter.app.search import TreeUnavailable
from lightscientist_jupyter.jupyter.node_card import NodeCard
from tests.jupyter.test_magic import fresh_defaults, ip, ls  # noqa: F401 (fixtures)


@pytest.fixture
def nodes(workspace, small_table):
    searched_project(workspace, small_table)
    return with_node_files(workspace)


def test_a_node_shows_its_change_against_its_parent_and_its_log(nodes):
    detail = search_node.node_detail(nodes, "n004")
    assert (detail.node.kind, detail.against) == ("improve", "n001")
    shown = {c.path: c.status for c in detail.changes}
    assert shown == {"notes.md": "removed", "result.json": "new", "train.py": "changed"}
    (train,) = [c for c in detail.changes if c.path == "train.py"]
    assert "-warmup = 0" in train.unified() and "+warmup = 500" in train.unified()
    assert detail.log == "jobs/node-n004.log"
    assert detail.log_tail == ["node 4 ran", "final_loss=0.44"]
    # a draft has no parent: its files are all new
    draft = search_node.node_detail(nodes, "n001")
    assert draft.against is None and {c.status for c in draft.changes} == {"new"}


def test_a_node_log_is_shown_from_its_end_with_no_key_in_it(nodes):
    log = nodes.root / "jobs" / "node-n004.log"
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    log.write_text("".join(f"step {i}\n" for i in range(5000)) + f"token {key}\ndone\n")
    tail = search_node.node_detail(nodes, "n004").log_tail
    assert len(tail) == search_node.LOG_LINES and tail[-1] == "done"
    assert key not in "\n".join(tail) and tail[-2].startswith("token ")


def test_tree_node_at_the_command_line(nodes):
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "lightscientist_jupyter", "tree", "-w", str(nodes.root), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    text = cli("--node", "n004")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "node n004: improve, ok, metric 0.41"
    assert lines[1] == "summary: warmup for 500 steps"
    assert lines[2] == "Files against its parent n001: 3 differ"
    assert "  +warmup = 500" in lines and "train.py: changed" in lines
    assert lines[-3:] == ["log: jobs/node-n004.log (last 2 lines)", "  node 4 ran",
                          "  final_loss=0.44"]  # fmt: skip
    record = json.loads(cli("--node", "n004", "--json").stdout)
    assert record["against"] == "n001" and record["node"]["metric"] == 0.41
    assert [c["path"] for c in record["changes"]] == ["notes.md", "result.json", "train.py"]
    unknown = cli("--node", "n042")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.strip() == (
        "lightscientist tree: the search tree has no node 'n042' "
        "(its nodes: n001, n002, n003, n004, n005, n006)"
    )


def test_tree_node_in_a_notebook_is_a_card_with_the_diff(ip, nodes):  # noqa: F811
    card = ls(ip, f'tree --node n004 -w "{nodes.root}"')
    assert isinstance(card, NodeCard)
    page = card._repr_html_()
    assert 'data-node="n004"' in page and "warmup for 500 steps" in page
    assert '<div class="ls-diff-add">+warmup = 500</div>' in page
    assert '<pre class="ls-node-log"' in page and "final_loss=0.44" in page
    assert repr(card).splitlines()[0] == "node n004: improve, ok, metric 0.41"
    with pytest.raises(TreeUnavailable):
        search_node.node_detail(nodes, "n042")
