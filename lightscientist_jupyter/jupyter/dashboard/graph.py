"""The stage graph as static SVG, for pages without JavaScript: the HTML a saved notebook keeps
beside the live dashboard, and `%lightscientist stages`.

The live screens (the dashboard's graph widget and the side panel) draw the same
`graph_view.GraphView` with `labextension/src/graph.ts`; this draws its widest layout with the
same elements and classes (`style/theme.css` colours them from the theme), so a saved
notebook shows the graph the dashboard showed. Pure functions: the same view always gives the
same text.

Drawing: gates have a double border and the gate glyph (◆); the state of each stage
(visited, current, waiting, failed) is a class; forward edges are solid (dashed when not the
default next), loop edges dashed, self loops a small arc above the stage, branch stages
dashed; edges the project has taken are drawn darker; a stage visited more than once shows
its count (×2).
"""

from __future__ import annotations

import html
import itertools
import re
import secrets
from pathlib import Path
from typing import Any

from lightscientist_jupyter.app.text import table_text
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.jupyter.graph_view import GraphView, graph_view
from lightscientist_jupyter.jupyter.layout import MAX_COLUMNS, EdgeLayout, NodeLayout

GATE_GLYPH = "◆"
"""The one mark of a gate, on the dashboard and in the side panel."""
STYLE_FILE = Path(__file__).with_name("style") / "theme.css"
"""Colours come from classes styled there with JupyterLab's --jp-* variables (any theme)."""


def render_svg(view: GraphView) -> str:
    """The widest layout of `view` as an SVG document, at its own size (a narrow page scrolls
    it rather than shrinking its text). It carries no colours, only classes (`ls-node-current`,
    `ls-edge ls-taken`, ...), as the live drawing does."""
    lay = view["layouts"][0]
    taken = {(a, b) for a, b in view["taken"]}
    width, height = lay["width"], lay["height"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ls-graph" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{html.escape(view["label"])}">',
        f"<title>{html.escape(view['title'])}</title>",
        "<defs>",
        '<marker id="ls-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path class="ls-arrowhead" d="M0,0 L8,4 L0,8 z"/></marker>',
        "</defs>",
    ]
    for band in lay["bands"]:
        out.append(
            f'<text class="ls-band" x="{band["x"]}" y="{band["y"]}">'
            f"{html.escape(band['label'])}</text>"
        )
    out += [_edge_svg(edge, (edge["source"], edge["target"]) in taken) for edge in lay["edges"]]
    for node in lay["nodes"]:
        out += _node_svg(node, view)
    out.append("</svg>")
    return "\n".join(out)


def _edge_svg(edge: EdgeLayout, taken: bool) -> str:
    kind = edge["kind"]
    return (
        f'<path class="ls-edge ls-edge-{kind}{" ls-taken" if taken else ""}" '
        f'data-from="{html.escape(edge["source"])}" data-to="{html.escape(edge["target"])}" '
        f'd="{edge["path"]}" marker-end="url(#ls-arrow)">'
        f"<title>{html.escape(edge['source'])} → {html.escape(edge['target'])}</title></path>"
    )


def _node_svg(node: NodeLayout, view: GraphView) -> list[str]:
    stage_id, x, y, w, h = node["id"], node["x"], node["y"], node["width"], node["height"]
    state = view["states"].get(stage_id, "pending")
    visits = view["visits"].get(stage_id, 0)
    flags = {
        "ls-node-gate": node["gate"],
        "ls-node-branch": node["branch"],
        "ls-node-done": node["done"],
        "ls-node-visited": state in ("visited", "done"),
    }
    classes = ["ls-node", f"ls-node-{state}", *(name for name, on in flags.items() if on)]
    tip = view["titles"].get(stage_id, stage_id)
    radius = h / 2 if node["done"] else 6
    out = [
        f'<g class="{" ".join(classes)}" data-stage="{html.escape(stage_id)}" '
        f'data-state="{state}"><title>{html.escape(tip)}</title>',
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{radius:.0f}"/>',
    ]
    if node["gate"]:
        out.append(
            f'<rect class="ls-gate-mark" x="{x + 3}" y="{y + 3}" width="{w - 6}" '
            f'height="{h - 6}" rx="4"/>'
        )
        out.append(f'<text class="ls-gate-tag" x="{x + w - 6}" y="{y + 12}">{GATE_GLYPH}</text>')
    if node["agent"]:
        out.append(
            f'<text class="ls-agent-tag" x="{x + 6}" y="{y + 11}">'
            f"{html.escape(node['agent'])}</text>"
        )
    out.append(
        f'<text class="ls-label" x="{x + w / 2:.0f}" y="{y + h / 2 + 4:.0f}">'
        f"{html.escape(node['label'])}</text>"
    )
    if visits > 1:
        out.append(f'<text class="ls-visits" x="{x + w - 6}" y="{y + h - 4}">×{visits}</text>')
    out.append("</g>")
    return out


def render_state(table: StageTable, state: Any | None) -> str:
    """`render_svg` of a project state's graph (`state` a `ProjectState`, or None for the bare
    table)."""
    return render_svg(graph_view(table, state, (MAX_COLUMNS,)))


def scroll_box(svg: str, cls: str = "", label: str = "stage graph") -> str:
    """The graph in a box that scrolls sideways when narrow (focusable, so keys scroll it);
    `label` names the drawing for a screen reader. The drawing's markers get ids of its own
    (`own_markers`)."""
    return (
        f'<div class="{f"ls-graph-scroll {cls}".strip()}" tabindex="0" role="region" '
        f'aria-label="{label} (scrolls sideways)">{own_markers(svg)}</div>'
    )


_MARKER = re.compile(r'<marker id="([^"]+)"')
_PAGE = secrets.token_hex(3)
"""This process's part of a marker's id: a notebook keeps the outputs of kernels before."""
_DRAWINGS = itertools.count(1)


def own_markers(svg: str) -> str:
    """`svg` with each marker's id (and the edges' `url(#…)` of it) made unique to this
    drawing. An id is the page's: with two drawings defining `ls-arrow` (two dashboards, the
    side panel's graph, a narrow copy), every edge would end with the first drawing's, and a
    marker in a hidden or zero-size drawing is not drawn — the edges lose their heads."""
    suffix = f"{_PAGE}-{next(_DRAWINGS)}"
    for marker in set(_MARKER.findall(svg)):
        svg = svg.replace(f'id="{marker}"', f'id="{marker}-{suffix}"')
        svg = svg.replace(f"url(#{marker})", f"url(#{marker}-{suffix})")
    return svg


def style_tag() -> str:
    """The shared style sheet as a `<style>` element, for HTML shown outside the widgets."""
    return f"<style>{STYLE_FILE.read_text(encoding='utf-8')}</style>"


class TableDiagram:
    """A stage table for display: the graph as SVG above the table as text."""

    def __init__(self, table: StageTable, state: Any | None = None):
        self.table = table
        self.state = state

    def _repr_html_(self) -> str:
        return (
            f'{style_tag()}<div class="lightscientist-static">'
            f"{scroll_box(render_state(self.table, self.state))}</div>"
            f"<pre style='font-size:11px'>{html.escape(table_text(self.table))}</pre>"
        )

    def __repr__(self) -> str:
        return table_text(self.table)
