"""Layer 1 keeps a search stage's tree (`controller.search_calls`): on disk, atomically, with
a `search.node` event for every change, on a real controller and real files."""

from __future__ import annotations

import json

import pytest
from support.tables import search_table

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.values.search import TREE_FILE
from lightscientist_jupyter.workspace import Workspace


def search_controller(tmp_path, write_table, recorder) -> ResearchController:
    table = load_table(write_table(tmp_path / "table", search_table()))
    return ResearchController.create(
        Workspace.at(tmp_path / "ws"), "Does warmup help?", table=table, bus=recorder.bus
    )


def on_disk(controller: ResearchController) -> dict:
    return json.loads((controller.workspace.root / TREE_FILE).read_text(encoding="utf-8"))


def test_layer_1_keeps_the_tree_on_disk_and_tells_each_change(tmp_path, write_table, recorder):
    c = search_controller(tmp_path, write_table, recorder)
    plans = c.search_next()
    assert [(p.id, p.kind) for p in plans] == [("n001", "draft"), ("n002", "draft")]
    assert [n["status"] for n in on_disk(c)["nodes"]] == ["running", "running"]
    assert on_disk(c)["nodes"][0]["started"] is None  # created, its job not yet submitted
    c.search_node_started("n001", job="j-1")
    c.search_node_started("n002", job="j-2")
    assert c.search_next(live={"n001", "n002"}) == []  # both slots taken
    assert c.search_node_ended("n001", metric=0.5, summary="lr 0.1") is None
    assert (
        c.search_node_ended("n002", metric=None, summary="key sk-proj-abcdefghijklmnopqrst") is None
    )
    (fix,) = c.search_next(live=set())
    assert (fix.id, fix.kind, fix.parent) == ("n003", "debug", "n002")
    c.search_node_started("n003")
    assert c.search_node_ended("n003", metric=0.3) == "all 3 nodes have run"
    kept = on_disk(c)
    assert kept["best"] == "n003" and kept["metric"] == "loss" and kept["goal"] == "min"
    assert "sk-proj" not in json.dumps(kept)  # a summary is redacted like every text kept
    events = [e for e in recorder.events if e.type == "search.node"]
    assert [(e.data["id"], e.data["event"]) for e in events][:4] == [
        ("n001", "created"),
        ("n002", "created"),
        ("n001", "started"),
        ("n002", "started"),
    ]
    assert events[-1].message == "n003 debug of n002 ok: loss 0.3 (best)"
    assert all(e.layer == 1 and e.task_id == "a#1" for e in events)


def test_a_node_nobody_watches_after_a_kill_is_cancelled_not_rerun(tmp_path, write_table, recorder):
    c = search_controller(tmp_path, write_table, recorder)
    c.search_next()
    c.search_node_started("n001")
    c.search_node_started("n002")
    c.search_node_ended("n001", metric=0.4)
    # the run is killed; the next one watches nothing: n002 was left running
    again = ResearchController.open(c.workspace, bus=recorder.bus)
    (plan,) = again.search_next(live=())
    assert [n["status"] for n in on_disk(again)["nodes"]] == ["ok", "cancelled", "running"]
    assert (plan.id, plan.kind, plan.parent) == ("n003", "improve", "n001")
    with pytest.raises(ControllerError, match="node n002 has ended"):
        again.search_node_ended("n002", metric=0.1)


def test_a_damaged_tree_file_is_named_and_left_as_it_is(tmp_path, write_table, recorder):
    c = search_controller(tmp_path, write_table, recorder)
    path = c.workspace.root / TREE_FILE
    path.parent.mkdir(parents=True)
    path.write_text('{"nodes": [{"id": "n001", "kind": "draft", "status": "maybe"}]}')
    with pytest.raises(ControllerError, match=r"tree\.json is damaged \(node n001: 'maybe'"):
        c.search_next()
    assert "maybe" in path.read_text()


def test_a_stage_without_search_has_no_tree(workspace, small_table):
    c = ResearchController.create(workspace, "goal", table=small_table)
    assert c.search_tree() is None
    with pytest.raises(ControllerError, match="stage 'a' is no search stage"):
        c.search_next()
