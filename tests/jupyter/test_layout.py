"""The stage graph's layout: one pure function from a table to JSON-able positions and routes."""

from __future__ import annotations

import json

from lightscientist_jupyter.controller import DONE, load_table
from lightscientist_jupyter.jupyter import layout
from lightscientist_jupyter.jupyter.layout import GAP_X, MAX_COLUMNS, NODE_W, PAD, graph_layout

WIDEST = PAD + MAX_COLUMNS * (NODE_W + GAP_X) + PAD


def by_id(lay: layout.GraphLayout) -> dict[str, layout.NodeLayout]:
    return {node["id"]: node for node in lay["nodes"]}


def kinds(lay: layout.GraphLayout) -> dict[tuple[str, str], str]:
    return {(e["source"], e["target"]): e["kind"] for e in lay["edges"]}


def test_the_layout_is_plain_json_and_the_same_for_the_same_table(default_table):
    lay = graph_layout(default_table)
    assert json.loads(json.dumps(lay)) == lay  # nothing but dicts, lists, str, int, bool
    assert graph_layout(load_table()) == lay  # a fresh load: the same layout
    assert {n["id"] for n in lay["nodes"]} == {*default_table.ids(), DONE}
    assert {(e["source"], e["target"]) for e in lay["edges"]} == set(default_table.edges())


def test_default_table_layout_is_layered_from_start(default_table):
    lay = graph_layout(default_table)
    nodes = by_id(lay)
    x = {s: n["x"] for s, n in nodes.items()}
    main = ["idea.survey", "idea.generate", "idea.evaluate", "idea.gate"]
    assert [x[s] for s in main] == sorted(x[s] for s in main)
    assert [nodes[s]["column"] for s in main] == [0, 1, 2, 5]
    # the probe branch sits between evaluate and the gate, one row below the default path
    assert x["idea.evaluate"] < x["idea.probe_batch"] < x["idea.probe_collect"] < x["idea.gate"]
    assert nodes["idea.probe_batch"]["y"] > nodes["idea.evaluate"]["y"]
    assert nodes["idea.probe_batch"]["row"] == 1 and nodes["idea.evaluate"]["row"] == 0
    assert nodes["idea.probe_batch"]["branch"] and not nodes["idea.gate"]["branch"]
    # one band per phase, in order; done ends the last one
    assert nodes["idea.survey"]["y"] < nodes["experiment.setup"]["y"] < nodes["paper.plan"]["y"]
    assert nodes[DONE]["y"] == nodes["paper.review"]["y"]
    assert nodes[DONE]["x"] > nodes["paper.review"]["x"]
    assert nodes[DONE]["done"] and not nodes["paper.review"]["done"]
    assert [band["label"] for band in lay["bands"]] == ["idea", "experiment", "paper"]
    assert lay["width"] <= WIDEST
    assert {s for s, n in nodes.items() if n["gate"]} == set(default_table.gates())
    for node in nodes.values():  # every box inside the drawing
        assert 0 < node["x"] and node["x"] + node["width"] <= lay["width"]
        assert 0 < node["y"] and node["y"] + node["height"] <= lay["height"]


def test_edge_kinds_mark_default_next_allowed_loops_and_back_edges(default_table):
    found = kinds(graph_layout(default_table))
    assert found[("experiment.loop", "experiment.loop")] == "loop"
    assert found[("experiment.analyze", "experiment.loop")] == "back"
    assert found[("paper.review", "paper.write")] == "back"
    assert found[("idea.probe_collect", "idea.evaluate")] == "back"
    assert found[("idea.evaluate", "idea.probe_batch")] == "allowed"
    assert found[("idea.evaluate", "idea.gate")] == "next"
    assert found[("idea.gate", "experiment.setup")] == "next"
    for edge in graph_layout(default_table)["edges"]:
        assert edge["default"] == (edge["target"] == default_table[edge["source"]].next)


def test_edge_routes_start_at_their_source(small_table):
    lay = graph_layout(small_table)
    nodes = by_id(lay)
    routes = {(e["source"], e["target"]): e["path"] for e in lay["edges"]}
    a, gate = nodes["a"], nodes["gate"]
    # a straight line from a's right side to the next column's left side
    assert routes[("a", "gate")] == (
        f"M{a['x'] + a['width']},{a['y'] + a['height'] // 2} "
        f"L{gate['x']},{gate['y'] + gate['height'] // 2}"
    )
    assert routes[("a", "a")].startswith(f"M{a['x'] + a['width'] - 22},{a['y']} c")
    assert routes[("b", "a")].startswith("M") and " C" in routes[("b", "a")]  # an arc back


def test_a_user_table_lays_out(small_table):
    lay = graph_layout(small_table)
    nodes = by_id(lay)
    assert kinds(lay) == {
        ("a", "gate"): "next",
        ("a", "a"): "loop",
        ("gate", "b"): "next",
        ("b", "done"): "next",
        ("b", "a"): "back",
    }
    assert nodes["a"]["x"] < nodes["gate"]["x"] < nodes["b"]["x"] < nodes[DONE]["x"]
    assert nodes["gate"]["gate"] and not nodes["a"]["gate"]
    assert lay["bands"] == []  # ids without a phase: one unlabelled band


def test_a_long_phase_wraps_into_more_rows(tmp_path, write_table):
    n = 14
    parts = ['start = "s0"\n']
    for i in range(n):
        nxt = f"s{i + 1}" if i + 1 < n else "done"
        parts.append(
            f'[stages.s{i}]\nskill = "skills/s.md"\noutputs = ["o{i}.md"]\n'
            f'next = "{nxt}"\nallowed = ["{nxt}"]\n'
        )
    table = load_table(write_table(tmp_path / "long", "\n".join(parts)))
    lay = graph_layout(table)
    assert lay["width"] <= WIDEST
    rows = sorted({node["y"] for node in lay["nodes"]})
    assert len(rows) == 3  # 15 nodes (with done) in rows of 6
    assert max(node["column"] for node in lay["nodes"]) == MAX_COLUMNS - 1


def test_long_ids_are_shortened_in_labels():
    assert layout._label("a" * 20) == "a" * 20
    assert layout._label("a" * 25) == "a" * 19 + "…"
