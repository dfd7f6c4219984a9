"""The stage graph drawn as deterministic SVG, from the layout `jupyter.layout` computes.

Pure functions only, so that any user table draws, the drawing is testable as text, and the
same SVG serves the live dashboard and the static fallback of a saved notebook. The side
panel draws the same layout (the server sends it), so both show one graph.

Drawing: gates have a double border and a "gate" tag; the state of each stage (visited,
current, waiting, failed) colours it; forward edges are solid (dashed when not the default
next), loop edges dashed, self loops a small arc above the stage, branch stages dashed;
edges the project has taken are drawn darker.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from lightscientist_jupyter.app.text import table_text
from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.jupyter.layout import EdgeLayout, NodeLayout, graph_layout
from lightscientist_jupyter.vocab import ProjectStatus

StageState = Literal["pending", "visited", "current", "waiting", "failed", "done"]
"""How a stage is drawn."""
_SHOWN_AS: dict[str, StageState] = {
    ProjectStatus.WAITING_USER: "waiting",
    ProjectStatus.FAILED: "failed",
    ProjectStatus.CANCELLED: "failed",
}
"""The drawing state of the current stage by project status (otherwise `current`)."""

# fill, stroke, text colour of a stage in each state; inline so the SVG stands on its own
PALETTE: dict[str, tuple[str, str, str]] = {
    "pending": ("#f6f7f9", "#9aa3ad", "#3b4550"),
    "visited": ("#e3f4e6", "#3f9b57", "#1f4d2b"),
    "current": ("#fff1d6", "#e08600", "#4d2e00"),
    "waiting": ("#fde7f1", "#c2185b", "#5c0b2b"),
    "failed": ("#fde2e1", "#c62828", "#5c1111"),
    "done": ("#e3f4e6", "#3f9b57", "#1f4d2b"),
}
EDGE_COLOR, EDGE_TAKEN, LOOP_COLOR = "#aab2bb", "#48525c", "#8e7cc3"


# ------------------------------------------------------------------------- state


def stage_states(table: StageTable, state: Any | None) -> dict[str, StageState]:
    """The drawing state of every stage from a `ProjectState` (or None: all pending)."""
    states: dict[str, StageState] = {s: "pending" for s in [*table.ids(), DONE]}
    if state is None:
        return states
    for step in state.history:
        if step.get("to") in states:
            states[step["to"]] = "visited"
    current = state.stage
    if current == DONE or state.status == ProjectStatus.DONE:
        states[DONE] = "done"
    elif current in states:
        states[current] = _SHOWN_AS.get(state.status, "current")
    return states


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
) -> str:
    """The stage graph as an SVG document; the same inputs always give the same text."""
    lay = graph_layout(table)
    states = dict(states or {})
    taken = set(taken)
    width, height = lay["width"], lay["height"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ls-graph" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'style="max-width:100%;height:auto;font-family:system-ui,-apple-system,'
        f'Segoe UI,Helvetica,Arial,sans-serif" role="img">',
        f"<title>{html.escape(title or f'stage graph of {table.path.name}')}</title>",
        "<defs>",
    ]
    for name, color in (("a", EDGE_COLOR), ("t", EDGE_TAKEN), ("l", LOOP_COLOR)):
        out.append(
            f'<marker id="ls-arrow-{name}" viewBox="0 0 8 8" refX="7" refY="4" '
            f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{color}"/></marker>'
        )
    out.append("</defs>")
    for band in lay["bands"]:
        out.append(
            f'<text class="ls-band" x="{band["x"]}" y="{band["y"]}" font-size="11" '
            f'font-weight="600" fill="#6b7580">{html.escape(band["label"])}</text>'
        )
    out += [_edge_svg(edge, (edge["source"], edge["target"]) in taken) for edge in lay["edges"]]
    for node in lay["nodes"]:
        out += _node_svg(table, node, states.get(node["id"], "pending"))
    out.append("</svg>")
    return "\n".join(out)


def _edge_svg(edge: EdgeLayout, taken: bool) -> str:
    kind = edge["kind"]
    looped = kind in ("back", "loop")
    marker = "t" if taken else ("l" if looped else "a")
    color = EDGE_TAKEN if taken else (LOOP_COLOR if looped else EDGE_COLOR)
    dash = ' stroke-dasharray="4 3"' if kind in ("back", "allowed") else ""
    return (
        f'<path class="ls-edge ls-edge-{kind}{" ls-taken" if taken else ""}" '
        f'data-from="{html.escape(edge["source"])}" data-to="{html.escape(edge["target"])}" '
        f'd="{edge["path"]}" fill="none" stroke="{color}" '
        f'stroke-width="{1.8 if taken else 1.2}"{dash} '
        f'marker-end="url(#ls-arrow-{marker})"/>'
    )


def _node_svg(table: StageTable, node: NodeLayout, state: str) -> list[str]:
    stage_id, x, y, w, h = node["id"], node["x"], node["y"], node["width"], node["height"]
    fill, stroke, ink = PALETTE.get(state, PALETTE["pending"])
    classes = (
        ["ls-stage", f"ls-{state}"]
        + (["ls-gate"] if node["gate"] else [])
        + (["ls-branch"] if node["branch"] else [])
        + (["ls-done"] if node["done"] else [])
    )
    width = 2.6 if state in ("current", "waiting") else 1.3
    dash = ' stroke-dasharray="5 3"' if node["branch"] else ""
    tip = stage_id if node["done"] else _tooltip(table, stage_id, state)
    radius = h / 2 if node["done"] else 6
    out = [
        f'<g class="{" ".join(classes)}" data-stage="{html.escape(stage_id)}" '
        f'data-state="{state}"><title>{html.escape(tip)}</title>',
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{radius:.0f}" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="{width}"{dash}/>',
    ]
    if node["gate"]:
        out.append(
            f'<rect x="{x + 3}" y="{y + 3}" width="{w - 6}" height="{h - 6}" rx="4" '
            f'fill="none" stroke="{stroke}" stroke-width="0.8"/>'
        )
        out.append(
            f'<text x="{x + w - 6}" y="{y + 11}" font-size="8" text-anchor="end" '
            f'fill="{stroke}" font-weight="700">GATE</text>'
        )
    bold = ' font-weight="700"' if state in ("current", "waiting") else ""
    out.append(
        f'<text x="{x + w / 2:.0f}" y="{y + h / 2 + 4:.0f}" font-size="11.5" '
        f'text-anchor="middle" fill="{ink}"{bold}>{html.escape(node["label"])}</text></g>'
    )
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


def render_state(table: StageTable, state: Any | None) -> str:
    """`render_svg` for a project state (a `ProjectState`, or None for the bare table)."""
    title = None
    if state is not None:
        title = f"stage graph: {state.stage} ({state.status})"
    return render_svg(table, stage_states(table, state), taken_edges(state), title=title)


class TableDiagram:
    """A stage table for display: the graph as SVG above the table as text."""

    def __init__(self, table: StageTable, state: Any | None = None):
        self.table = table
        self.state = state

    def _repr_html_(self) -> str:
        return (
            f"<div>{render_state(self.table, self.state)}</div>"
            f"<pre style='font-size:11px'>{html.escape(table_text(self.table))}</pre>"
        )

    def __repr__(self) -> str:
        return table_text(self.table)
