"""The stage graph: a layered layout from the table, drawn as deterministic SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from lightscientist_jupyter.controller import DONE, ResearchController, load_table
from lightscientist_jupyter.jupyter import graph

SVG = "{http://www.w3.org/2000/svg}"


def stage_nodes(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {g.get("data-stage"): g for g in root.iter(f"{SVG}g") if g.get("data-stage")}


def edges(svg: str) -> dict[tuple[str, str], ET.Element]:
    root = ET.fromstring(svg)
    return {(p.get("data-from"), p.get("data-to")): p for p in root.iter(f"{SVG}path")
            if p.get("data-from")}


def test_the_same_table_and_state_draw_the_same_svg(default_table):
    state_free = graph.render_svg(default_table)
    assert state_free == graph.render_svg(load_table())  # a fresh load: same text
    states = {"idea.survey": "visited", "idea.generate": "current"}
    assert graph.render_svg(default_table, states) == graph.render_svg(default_table, dict(states))
    assert graph.render_svg(default_table, states) != state_free


def test_default_table_layout_is_layered_from_start(default_table):
    lay = graph.layout(default_table)
    x = {s: n.x for s, n in lay.nodes.items()}
    main = ["idea.survey", "idea.generate", "idea.evaluate", "idea.gate"]
    assert [x[s] for s in main] == sorted(x[s] for s in main)
    # the probe branch sits between evaluate and the gate, one row below the default path
    assert x["idea.evaluate"] < x["idea.probe_batch"] < x["idea.probe_collect"] < x["idea.gate"]
    assert lay.nodes["idea.probe_batch"].y > lay.nodes["idea.evaluate"].y
    assert lay.nodes["idea.probe_batch"].branch and not lay.nodes["idea.gate"].branch
    # one band per phase, in order; done ends the last one
    assert lay.nodes["idea.survey"].y < lay.nodes["experiment.setup"].y < lay.nodes["paper.plan"].y
    assert lay.nodes[DONE].y == lay.nodes["paper.review"].y
    assert lay.nodes[DONE].x > lay.nodes["paper.review"].x
    assert [label for label, _ in lay.bands] == ["idea", "experiment", "paper"]
    assert lay.width <= 14 + graph.MAX_COLUMNS * (graph.NODE_W + graph.GAP_X) + 14


def test_edge_kinds_mark_loops_self_edges_and_branches(default_table):
    kinds = {(e.source, e.target): e.kind for e in graph.classify_edges(default_table)}
    assert kinds[("experiment.loop", "experiment.loop")] == "self"
    assert kinds[("experiment.analyze", "experiment.loop")] == "back"
    assert kinds[("paper.review", "paper.write")] == "back"
    assert kinds[("idea.probe_collect", "idea.evaluate")] == "back"
    assert kinds[("idea.evaluate", "idea.probe_batch")] == "forward"
    assert kinds[("idea.gate", "experiment.setup")] == "forward"
    svg = graph.render_svg(default_table)
    drawn = edges(svg)
    assert set(drawn) == set(default_table.edges())
    assert "ls-edge-self" in drawn[("experiment.loop", "experiment.loop")].get("class")
    assert "ls-edge-back" in drawn[("experiment.analyze", "experiment.loop")].get("class")
    assert drawn[("experiment.analyze", "experiment.loop")].get("stroke-dasharray")
    nodes = stage_nodes(svg)
    assert {s for s, g in nodes.items() if "ls-gate" in g.get("class")} == set(
        default_table.gates())
    assert {s for s, g in nodes.items() if "ls-branch" in g.get("class")} == {
        "idea.probe_batch", "idea.probe_collect"}


def test_the_graph_reflects_transitions(workspace, default_table, advance):
    controller = ResearchController.create(workspace, "find x", mode="manual",
                                           table=default_table)
    before = stage_nodes(graph.render_state(default_table, controller.state))
    assert before["idea.survey"].get("data-state") == "current"
    assert before["idea.generate"].get("data-state") == "pending"

    advance(controller)                             # survey → generate
    advance(controller)                             # generate → evaluate
    advance(controller, "idea.probe_batch")         # into the probe branch
    svg = graph.render_state(default_table, controller.state)
    nodes = stage_nodes(svg)
    assert nodes["idea.survey"].get("data-state") == "visited"
    assert nodes["idea.evaluate"].get("data-state") == "visited"
    assert nodes["idea.probe_batch"].get("data-state") == "current"
    assert nodes["idea.gate"].get("data-state") == "pending"
    drawn = edges(svg)
    assert "ls-taken" in drawn[("idea.evaluate", "idea.probe_batch")].get("class")
    assert "ls-taken" not in drawn[("idea.evaluate", "idea.gate")].get("class")

    advance(controller)                             # probe_batch → probe_collect
    advance(controller)                             # probe_collect → gate
    advance(controller)                             # the gate waits (manual mode)
    nodes = stage_nodes(graph.render_state(default_table, controller.state))
    assert nodes["idea.gate"].get("data-state") == "waiting"
    controller.reply(True)
    nodes = stage_nodes(graph.render_state(default_table, controller.state))
    assert nodes["idea.gate"].get("data-state") == "visited"
    assert nodes["experiment.setup"].get("data-state") == "current"


def test_a_user_table_draws(small_table, workspace, advance):
    svg = graph.render_svg(small_table)
    ET.fromstring(svg)  # well-formed
    nodes = stage_nodes(svg)
    assert set(nodes) == {"a", "gate", "b", DONE}
    assert "ls-gate" in nodes["gate"].get("class")
    kinds = {(e.source, e.target): e.kind for e in graph.classify_edges(small_table)}
    assert kinds == {("a", "gate"): "forward", ("a", "a"): "self", ("gate", "b"): "forward",
                     ("b", "done"): "forward", ("b", "a"): "back"}
    lay = graph.layout(small_table)
    assert lay.nodes["a"].x < lay.nodes["gate"].x < lay.nodes["b"].x < lay.nodes[DONE].x
    assert lay.bands == ()  # ids without a phase: one unlabelled band

    controller = ResearchController.create(workspace, "g", mode="auto", table=small_table)
    advance(controller, "a")                        # a loops on itself
    state = controller.state
    svg = graph.render_state(small_table, state)
    assert "ls-taken" in edges(svg)[("a", "a")].get("class")
    assert stage_nodes(svg)["a"].get("data-state") == "current"


def test_a_long_phase_wraps_into_more_rows(tmp_path, write_table):
    n = 14
    parts = ['start = "s0"\n']
    for i in range(n):
        nxt = f"s{i + 1}" if i + 1 < n else "done"
        parts.append(f'[stages.s{i}]\nskill = "skills/s.md"\noutputs = ["o{i}.md"]\n'
                     f'next = "{nxt}"\nallowed = ["{nxt}"]\n')
    table = load_table(write_table(tmp_path / "long", "\n".join(parts)))
    lay = graph.layout(table)
    assert lay.width <= 14 + graph.MAX_COLUMNS * (graph.NODE_W + graph.GAP_X) + 14
    rows = sorted({node.y for node in lay.nodes.values()})
    assert len(rows) == 3  # 15 nodes (with done) in rows of 6
    ET.fromstring(graph.render_svg(table))


def test_table_diagram_shows_svg_and_text(default_table):
    diagram = graph.TableDiagram(default_table)
    assert "<svg" in diagram._repr_html_()
    text = repr(diagram)
    assert "idea.gate" in text and "gate" in text and "start: idea.survey" in text
