"""The stage graph's view (`graph_view`) and its static SVG (`dashboard/graph.py`): drawn from
the layout `jupyter.layout` computes, the same text for the same view."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from lightscientist_jupyter.controller import DONE, ResearchController, load_table
from lightscientist_jupyter.jupyter.dashboard import graph
from lightscientist_jupyter.jupyter.graph_view import COLUMNS, graph_view
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


def test_the_same_table_and_state_draw_the_same_svg(default_table, workspace, advance):
    state_free = graph.render_state(default_table, None)
    assert state_free == graph.render_state(load_table(), None)  # a fresh load: same text
    controller = ResearchController.create(workspace, "find x", mode="manual", table=default_table)
    advance(controller)
    moved = graph.render_state(default_table, controller.state)
    assert moved == graph.render_state(load_table(), controller.state)
    assert moved != state_free


def test_the_view_holds_every_width_and_the_words_of_each_stage(workspace, default_table, advance):
    """Both screens draw this view: the layouts at each width (the widest first), each
    stage's hover title and the graph in words come with it."""
    controller = ResearchController.create(workspace, "find x", mode="manual", table=default_table)
    advance(controller)  # survey → generate
    view = graph_view(default_table, controller.state)
    assert view["layouts"] == [graph_layout(default_table, c) for c in COLUMNS]
    widths = [lay["width"] for lay in view["layouts"]]
    assert widths == sorted(widths, reverse=True) and widths[-1] < 250 < widths[0]
    assert view["taken"] == [["idea.survey", "idea.generate"]]
    gate = view["titles"]["idea.gate"].splitlines()
    assert gate[0] == "idea.gate (pending, a gate: waits for approval in manual mode)"
    assert gate[2] == "next: experiment.setup"
    assert view["titles"][DONE] == DONE
    assert view["label"].startswith("stage graph: idea.generate (running): ")
    assert "now at idea.generate (current); visited idea.survey" in view["label"]


def test_the_svg_draws_the_layout(default_table):
    lay = graph_layout(default_table)
    root = ET.fromstring(graph.render_state(default_table, None))
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
    assert {
        key: p.get("d") for key, p in edges(graph.render_state(default_table, None)).items()
    } == {(e["source"], e["target"]): e["path"] for e in lay["edges"]}
    captions = [
        (t.text, int(t.get("y"))) for t in root.iter(f"{SVG}text") if t.get("class") == "ls-band"
    ]
    assert captions == [(b["label"], b["y"]) for b in lay["bands"]]


def test_edges_are_styled_by_kind_and_stages_by_flags(default_table):
    svg = graph.render_state(default_table, None)
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
    svg = graph.render_state(small_table, None)
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
    """Two static drawings on one page (two saved dashboards, a table diagram) must not share
    a marker id: every edge would end with the first one's, which is not drawn when its
    drawing is hidden."""
    box = "".join(graph.scroll_box(graph.render_state(default_table, None)) for _ in range(3))
    defined = re.findall(r'<marker id="([^"]+)"', box)
    assert len(defined) == 3 and len(set(defined)) == 3
    drawings = box.split("<svg ")[1:]
    for drawing, marker in zip(drawings, defined, strict=True):
        used = set(re.findall(r'marker-end="url\(#([^)]+)\)"', drawing))
        assert used == {marker}


def test_a_stage_an_agent_works_names_it_in_its_corner_its_title_and_the_words(
    tmp_path, write_table
):
    table = load_table(
        write_table(
            tmp_path,
            """\
start = "a"

[agents.claude-code-for-the-lab]
command = ["claude-code-acp"]

[stages.a]
skill = "skills/a.md"
outputs = ["out/a.md"]
next = "done"
allowed = ["done"]
agent = "claude-code-for-the-lab"
""",
        )
    )
    view = graph_view(table, None)
    (node, end) = view["layouts"][0]["nodes"]
    assert (node["agent"], end["agent"]) == ("claude-code-for…", None)  # shortened to fit
    assert view["titles"]["a"].splitlines()[-1] == (
        "worked by the coding agent 'claude-code-for-the-lab' (claude-code-acp)"
    )
    assert view["label"].endswith("worked by coding agents: a by claude-code-for-the-lab")
    drawn = stage_nodes(graph.render_svg(view))
    (tag,) = drawn["a"].findall(f"{SVG}text[@class='ls-agent-tag']")
    assert tag.text == "claude-code-for…"
    assert not list(drawn["done"].findall(f"{SVG}text[@class='ls-agent-tag']"))
