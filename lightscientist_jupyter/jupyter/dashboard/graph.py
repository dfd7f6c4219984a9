"""The stage graph drawn as deterministic SVG, from the layout `jupyter.layout` computes.

Pure functions only, so that any user table draws, the drawing is testable as text, and the
same SVG serves the live dashboard and the static fallback of a saved notebook. The side
panel draws the same layout and the same state of each stage (`look.stage_states`; the
server sends both), so both show one graph.

Drawing: gates have a double border and the gate glyph (◆); the state of each stage
(visited, current, waiting, failed) is a class the shared style sheet colours from the
theme; forward edges are solid (dashed when not the default next), loop edges dashed, self
loops a small arc above the stage, branch stages dashed; edges the project has taken are
drawn darker (a taken loop back in the waiting colour); a stage visited more than once shows
its count (×2).
"""

from __future__ import annotations

import html
import itertools
import re
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lightscientist_jupyter.app.text import table_text
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.jupyter.layout import MAX_COLUMNS, EdgeLayout, NodeLayout, graph_layout
from lightscientist_jupyter.jupyter.look import stage_states

GATE_GLYPH = "◆"
"""The one mark of a gate, on the dashboard and in the side panel."""
STYLE_FILE = Path(__file__).with_name("style") / "theme.css"
"""Colours come from classes styled there with JupyterLab's --jp-* variables (any theme)."""


# ------------------------------------------------------------------------- state


def taken_edges(state: Any | None) -> set[tuple[str, str]]:
    """Transitions the project has made, `(from, to)`."""
    if state is None:
        return set()
    return {(h["from"], h["to"]) for h in state.history if h.get("from")}


# ------------------------------------------------------------------------- drawing


def render_svg(
    table: StageTable,
    states: Mapping[str, str] | None = None,
    taken: Iterable[tuple[str, str]] = (),
    *,
    title: str | None = None,
    visits: Mapping[str, int] | None = None,
    notes: Mapping[str, str] | None = None,
    columns: int = MAX_COLUMNS,
) -> str:
    """The stage graph as an SVG document; the same inputs always give the same text.

    It carries no colours: classes (`ls-node-current`, `ls-edge ls-taken`, ...) that
    `style/theme.css` styles with the theme's variables, as the side panel's drawing does.
    It keeps its layout's size (a narrow view scrolls it rather than shrinking its text).
    """
    lay = graph_layout(table, columns)
    states = dict(states or {})
    taken = set(taken)
    visits = dict(visits or {})
    width, height = lay["width"], lay["height"]
    label = title or f"stage graph of {table.path.name}"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ls-graph" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{html.escape(describe(lay, states, visits, label))}">',
        f"<title>{html.escape(label)}</title>",
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
        state = states.get(node["id"], "pending")
        note = (notes or {}).get(node["id"], "")  # e.g. its tokens and cost
        out += _node_svg(table, node, state, visits.get(node["id"], 0), note)
    out.append("</svg>")
    return "\n".join(out)


def describe(
    lay: Mapping[str, Any], states: Mapping[str, str], visits: Mapping[str, int], label: str
) -> str:
    """The graph in words, for a screen reader: the current stage, what was visited."""
    current = [n["id"] for n in lay["nodes"] if states.get(n["id"]) in _CURRENT]
    seen = [
        f"{n['id']}" + (f" ({visits[n['id']]} visits)" if visits.get(n["id"], 0) > 1 else "")
        for n in lay["nodes"]
        if states.get(n["id"]) == "visited"
    ]
    words = [f"{label}: {len(lay['nodes'])} stages"]
    if current:
        words.append(f"now at {current[0]} ({states[current[0]]})")
    if seen:
        words.append("visited " + ", ".join(seen))
    return "; ".join(words)


_CURRENT = ("current", "waiting", "failed", "done")


def _edge_svg(edge: EdgeLayout, taken: bool) -> str:
    kind = edge["kind"]
    return (
        f'<path class="ls-edge ls-edge-{kind}{" ls-taken" if taken else ""}" '
        f'data-from="{html.escape(edge["source"])}" data-to="{html.escape(edge["target"])}" '
        f'd="{edge["path"]}" marker-end="url(#ls-arrow)"/>'
    )


def _node_svg(
    table: StageTable, node: NodeLayout, state: str, visits: int = 0, note: str = ""
) -> list[str]:
    stage_id, x, y, w, h = node["id"], node["x"], node["y"], node["width"], node["height"]
    flags = {
        "ls-node-gate": node["gate"],
        "ls-node-branch": node["branch"],
        "ls-node-done": node["done"],
        "ls-node-visited": state in ("visited", "done"),
    }
    classes = ["ls-node", f"ls-node-{state}", *(name for name, on in flags.items() if on)]
    tip = stage_id if node["done"] else _tooltip(table, stage_id, state)
    if visits > 1:
        tip += f"\nvisited {visits} times"
    if note:
        tip += f"\n{note}"
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
    out.append(
        f'<text class="ls-label" x="{x + w / 2:.0f}" y="{y + h / 2 + 4:.0f}">'
        f"{html.escape(node['label'])}</text>"
    )
    if visits > 1:
        out.append(f'<text class="ls-visits" x="{x + w - 6}" y="{y + h - 4}">×{visits}</text>')
    out.append("</g>")
    return out


def _tooltip(table: StageTable, stage_id: str, state: str) -> str:
    s = table[stage_id]
    lines = [
        f"{stage_id} ({state}{', gate' if s.approval else ''})",
        f"outputs: {', '.join(s.outputs)}",
        f"next: {s.next}",
        f"allowed: {', '.join(s.allowed)}",
    ]
    if s.max_visits:
        lines.append(f"max visits: {s.max_visits}")
    return "\n".join(lines)


def render_state(table: StageTable, state: Any | None, columns: int = MAX_COLUMNS) -> str:
    """`render_svg` for a project state (a `ProjectState`, or None for the bare table)."""
    title = None
    if state is not None:
        title = f"stage graph: {state.stage} ({state.status})"
    visits = dict(getattr(state, "visits", None) or {}) if state is not None else {}
    notes = {}
    if state is not None:  # each stage's tokens and cost in its hover title
        from lightscientist_jupyter.jupyter.dashboard.budget_card import stage_words

        notes = {s: stage_words(state, s) for s in table.ids()}
    return render_svg(
        table,
        stage_states(table, state),
        taken_edges(state),
        title=title,
        visits=visits,
        notes=notes,
        columns=columns,
    )


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


NARROW_COLUMNS = 3
"""A band's columns in the narrow drawing (about 480 px wide instead of about 970)."""


def responsive_box(table: StageTable, state: Any | None) -> str:
    """The graph drawn twice, wide and narrow; `style/theme.css` shows the one that fits the
    dashboard's width (a container query), so a narrow window wraps the bands into more rows
    at the same text size instead of hiding the current stage off to the side."""
    narrow = render_state(table, state, NARROW_COLUMNS)
    wide = scroll_box(render_state(table, state), "ls-graph-wide")
    return f'<div class="ls-graph-fit">{wide}{scroll_box(narrow, "ls-graph-narrow")}</div>'


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
