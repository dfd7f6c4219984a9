"""The stage graph drawn as deterministic SVG, from the layout `jupyter.layout` computes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from lightscientist_jupyter.controller import DONE, ResearchController, load_table
from lightscientist_jupyter.jupyter.dashboard import graph
from lightscientist_jupyter.jupyter.layout import graph_layout

SVG = "{http://www.w3.org/2000/svg}"


def stage_nodes(svg: str) -> dict[str, ET.Element]:
    root = ET.fromstring(svg)
    return {g.get("data-stage"): g for g in root.iter(f"{SVG}g") if g.get("data-stage")}


def edges(svg: str) -> dict[tuple[str, str], ET.Element]:
    root = ET.fromstring(svg)
    return {
        (p.get("data-from"), p.get("data-to")): p
        for p in root.iter(f"{SVG}path")
        if p.get("data-from")
    }


def test_the_same_table_and_state_draw_the_same_svg(default_table):
    state_free = graph.render_svg(default_table)
    assert state_free == graph.render_svg(load_table())  # a fresh load: same text
    states = {"idea.survey": "visited", "idea.generate": "current"}
    assert graph.render_svg(default_table, states) == graph.render_svg(default_table, dict(states))
    assert graph.render_svg(default_table, states) != state_free


def test_the_svg_draws_the_layout(default_table):
    lay = graph_layout(default_table)
    root = ET.fromstring(graph.render_svg(default_table))
    assert (root.get("width"), root.get("height")) == (str(lay["width"]), str(lay["height"]))
    boxes = {
        g.get("data-stage"): g.find(f"{SVG}rect")
        for g in root.iter(f"{SVG}g")
        if g.get("data-stage")
    }
    assert {
        stage: tuple(int(float(r.get(k))) for k in ("x", "y", "width", "height"))
        for stage, r in boxes.items()
    } == {n["id"]: (n["x"], n["y"], n["width"], n["height"]) for n in lay["nodes"]}
    assert {key: p.get("d") for key, p in edges(graph.render_svg(default_table)).items()} == {
        (e["source"], e["target"]): e["path"] for e in lay["edges"]
    }
    captions = [
        (t.text, int(t.get("y"))) for t in root.iter(f"{SVG}text") if t.get("class") == "ls-band"
    ]
    assert captions == [(b["label"], b["y"]) for b in lay["bands"]]


def test_edges_are_styled_by_kind_and_stages_by_flags(default_table):
    svg = graph.render_svg(default_table)
    drawn = edges(svg)
    assert set(drawn) == set(default_table.edges())
    assert "ls-edge-loop" in drawn[("experiment.loop", "experiment.loop")].get("class")
    assert "ls-edge-back" in drawn[("experiment.analyze", "experiment.loop")].get("class")
    assert "ls-edge-allowed" in drawn[("idea.evaluate", "idea.probe_batch")].get("class")
    assert "ls-edge-next" in drawn[("idea.evaluate", "idea.gate")].get("class")
    # no colour or dash as an attribute (a theme could not change it): classes only
    assert not re.search(r'(fill|stroke|stroke-dasharray|color)="', svg)
    nodes = stage_nodes(svg)
    assert {s for s, g in nodes.items() if "ls-node-gate" in g.get("class")} == set(
        default_table.gates()
    )
    assert {s for s, g in nodes.items() if "ls-node-branch" in g.get("class")} == {
        "idea.probe_batch",
        "idea.probe_collect",
    }


def test_the_graph_reflects_transitions(workspace, default_table, advance):
    controller = ResearchController.create(workspace, "find x", mode="manual", table=default_table)
    before = stage_nodes(graph.render_state(default_table, controller.state))
    assert before["idea.survey"].get("data-state") == "current"
    assert before["idea.generate"].get("data-state") == "pending"

    advance(controller)  # survey → generate
    advance(controller)  # generate → evaluate
    advance(controller, "idea.probe_batch")  # into the probe branch
    svg = graph.render_state(default_table, controller.state)
    nodes = stage_nodes(svg)
    assert nodes["idea.survey"].get("data-state") == "visited"
    assert nodes["idea.evaluate"].get("data-state") == "visited"
    assert nodes["idea.probe_batch"].get("data-state") == "current"
    assert nodes["idea.gate"].get("data-state") == "pending"
    drawn = edges(svg)
    assert "ls-taken" in drawn[("idea.evaluate", "idea.probe_batch")].get("class")
    assert "ls-taken" not in drawn[("idea.evaluate", "idea.gate")].get("class")

    advance(controller)  # probe_batch → probe_collect
    advance(controller)  # probe_collect → gate
    advance(controller)  # the gate waits (manual mode)
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
    assert "ls-node-gate" in nodes["gate"].get("class")

    controller = ResearchController.create(workspace, "g", mode="auto", table=small_table)
    advance(controller, "a")  # a loops on itself
    state = controller.state
    svg = graph.render_state(small_table, state)
    assert "ls-taken" in edges(svg)[("a", "a")].get("class")
    assert stage_nodes(svg)["a"].get("data-state") == "current"


def test_table_diagram_shows_svg_and_text(default_table):
    diagram = graph.TableDiagram(default_table)
    assert "<svg" in diagram._repr_html_()
    text = repr(diagram)
    assert "idea.gate" in text and "gate" in text and "start: idea.survey" in text


def test_each_drawing_shown_has_markers_of_its_own(default_table):
    """Two drawings on one page (two dashboards, a wide and a narrow copy, the side panel's)
    must not share a marker id: every edge would end with the first one's, which is not
    drawn when its drawing is hidden."""
    box = graph.responsive_box(default_table, None) + graph.scroll_box(
        graph.render_state(default_table, None)
    )
    defined = re.findall(r'<marker id="([^"]+)"', box)
    assert len(defined) == 3 and len(set(defined)) == 3
    drawings = box.split("<svg ")[1:]
    for drawing, marker in zip(drawings, defined, strict=True):
        used = set(re.findall(r'marker-end="url\(#([^)]+)\)"', drawing))
        assert used == {marker}
