"""The stage graph: a layered layout computed from a `StageTable`, drawn as deterministic SVG.

Pure functions only, so that any user table draws, the drawing is testable as text, and the
same SVG serves the live dashboard and the static fallback of a saved notebook.

Layout, in three steps:

1. **Edge kinds.** A depth-first walk from `start` (default `next` first, then `allowed` in
   table order) marks edges into a stage still on the walk's stack as `back` (loops such as
   `experiment.analyze → experiment.loop`); `a → a` is `self`; every other edge is `forward`.
2. **Columns.** A stage's depth is its longest forward path from `start`, so a detour (the
   probe branch) sits between the stages it connects. `done` takes the last column.
3. **Rows.** Stages are grouped in bands by phase (the id before its first dot), one band per
   phase in order of depth, wrapped after `MAX_COLUMNS` columns. In a band, stages on the
   default path (`start` following `next`) take the first row; branch stages go below.

Drawing: gates have a double border and a "gate" tag; the state of each stage (visited,
current, waiting, failed) colours it; forward edges are solid, loop edges dashed below the
row, self edges a small loop above the stage, branch stages dashed; edges the project has
taken are drawn darker.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from lightscientist_jupyter.controller.table import DONE, StageTable

EdgeKind = Literal["forward", "back", "self"]
StageState = Literal["pending", "visited", "current", "waiting", "failed", "done"]

MAX_COLUMNS = 6
NODE_W, NODE_H = 132, 34
GAP_X, GAP_Y = 30, 26
BAND_LABEL_H, BAND_GAP = 16, 22
PAD = 14
LABEL_CHARS = 20

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


@dataclasses.dataclass(frozen=True)
class Node:
    id: str
    x: int
    y: int
    gate: bool
    branch: bool
    """Off the default path (`start` following `next`): a detour such as the probe branch."""


@dataclasses.dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind
    default: bool
    """The source's default next stage."""


@dataclasses.dataclass(frozen=True)
class Layout:
    nodes: dict[str, Node]
    edges: tuple[Edge, ...]
    bands: tuple[tuple[str, int], ...]
    """`(label, y)` of each band's caption."""
    width: int
    height: int


# ------------------------------------------------------------------------- layout

def default_path(table: StageTable) -> list[str]:
    """`start`, then each stage's `next`, until `done` or a repeat."""
    path, stage = [], table.start
    while stage not in path:
        path.append(stage)
        if stage == DONE:
            break
        stage = table[stage].next
    return path


def _successors(table: StageTable, stage_id: str) -> list[str]:
    stage = table[stage_id]
    return [stage.next] + [s for s in stage.allowed if s != stage.next]


def classify_edges(table: StageTable) -> tuple[Edge, ...]:
    """Every allowed transition with its kind, in table order."""
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # 1 on the stack, 2 finished

    def visit(stage_id: str) -> None:
        state[stage_id] = 1
        if stage_id != DONE:
            for target in _successors(table, stage_id):
                if target == stage_id:
                    continue
                if state.get(target) == 1:
                    back.add((stage_id, target))
                elif target not in state:
                    visit(target)
        state[stage_id] = 2

    visit(table.start)
    for stage in table:  # unreachable stages cannot load, but stay total
        if stage.id not in state:
            visit(stage.id)
    edges = []
    for stage in table:
        for target in stage.allowed:
            kind: EdgeKind = ("self" if target == stage.id else
                              "back" if (stage.id, target) in back else "forward")
            edges.append(Edge(stage.id, target, kind, target == stage.next))
    return tuple(edges)


def depths(table: StageTable, edges: Iterable[Edge]) -> dict[str, int]:
    """Longest forward path from `start`; `done` one past the deepest stage."""
    forward: dict[str, list[str]] = {}
    indegree = {s.id: 0 for s in table}
    indegree[DONE] = 0
    for e in edges:
        if e.kind == "forward":
            forward.setdefault(e.source, []).append(e.target)
            indegree[e.target] += 1
    depth = {stage_id: 0 for stage_id in indegree}
    ready = [s for s in indegree if indegree[s] == 0]
    while ready:  # Kahn's algorithm over the acyclic forward edges, in a stable order
        stage_id = ready.pop(0)
        for target in forward.get(stage_id, ()):
            depth[target] = max(depth[target], depth[stage_id] + 1)
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    depth[DONE] = max((d for s, d in depth.items() if s != DONE), default=0) + 1
    return depth


def phase_of(stage_id: str) -> str:
    return stage_id.split(".", 1)[0] if "." in stage_id else ""


def layout(table: StageTable) -> Layout:
    """Positions of every stage (and `done`) and the kind of every edge."""
    edges = classify_edges(table)
    depth = depths(table, edges)
    main = default_path(table)
    order = {stage_id: i for i, stage_id in enumerate([*table.ids(), DONE])}
    before_done = next((s for s in reversed(main) if s != DONE), table.start)
    phase = {s: phase_of(s) for s in table.ids()}
    phase[DONE] = phase[before_done] if DONE in main else ""

    # bands: one per phase (by its smallest depth), wrapped every MAX_COLUMNS columns
    first: dict[str, int] = {}
    for stage_id in sorted(depth, key=lambda s: (depth[s], order[s])):
        first.setdefault(phase[stage_id], depth[stage_id])
    cells: dict[tuple[int, int], list[str]] = {}  # (band, column) -> stages
    band_names: dict[int, str] = {}
    phases = sorted(first, key=lambda p: (first[p], p))
    band_of_phase: dict[tuple[str, int], int] = {}
    for p in phases:
        chunks = sorted({(depth[s] - first[p]) // MAX_COLUMNS for s in depth if phase[s] == p})
        for chunk in chunks:
            band_of_phase[(p, chunk)] = len(band_of_phase)
            band_names[band_of_phase[(p, chunk)]] = p + (f" ({chunk + 1})" if chunk else "")
    for stage_id in sorted(depth, key=lambda s: order[s]):
        offset = depth[stage_id] - first[phase[stage_id]]
        band = band_of_phase[(phase[stage_id], offset // MAX_COLUMNS)]
        cells.setdefault((band, offset % MAX_COLUMNS), []).append(stage_id)
    on_main = set(main)
    band_has_main = {band for (band, _), ids in cells.items() if on_main.intersection(ids)}
    rows_of: dict[tuple[int, int], list[str | None]] = {}
    for (band, column), stage_ids in cells.items():
        main_ids = sorted((s for s in stage_ids if s in on_main), key=order.__getitem__)
        branch_ids = sorted((s for s in stage_ids if s not in on_main), key=order.__getitem__)
        # a branch stage goes below the default path, so that a detour reads as one
        gap = [None] if branch_ids and not main_ids and band in band_has_main else []
        rows_of[(band, column)] = [*main_ids, *gap, *branch_ids]

    nodes: dict[str, Node] = {}
    bands: list[tuple[str, int]] = []
    y = PAD
    width = 0
    for band in range(len(band_names)):
        rows = max(len(v) for (b, _), v in rows_of.items() if b == band)
        has_label = bool(band_names[band])
        if has_label:
            bands.append((band_names[band], y + 11))
            y += BAND_LABEL_H
        y += 12  # room for self loops and arcs above the first row
        for (b, column), stage_ids in sorted(rows_of.items()):
            if b != band:
                continue
            for row, stage_id in enumerate(stage_ids):
                if stage_id is None:
                    continue
                x = PAD + column * (NODE_W + GAP_X)
                nodes[stage_id] = Node(stage_id, x, y + row * (NODE_H + GAP_Y),
                                       stage_id != DONE and table[stage_id].approval,
                                       stage_id not in on_main)
                width = max(width, x + NODE_W + PAD)
        y += rows * NODE_H + (rows - 1) * GAP_Y + BAND_GAP + 8
    return Layout(nodes, edges, tuple(bands), width, y - BAND_GAP + PAD)


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
    if current == DONE or state.status == "done":
        states[DONE] = "done"
    elif current in states:
        states[current] = {"waiting_user": "waiting", "failed": "failed",
                           "cancelled": "failed"}.get(state.status, "current")
    return states


def taken_edges(state: Any | None) -> set[tuple[str, str]]:
    """Transitions the project has made, `(from, to)`."""
    if state is None:
        return set()
    return {(h["from"], h["to"]) for h in state.history if h.get("from")}


# ------------------------------------------------------------------------- drawing

def _center(node: Node) -> tuple[float, float]:
    return node.x + NODE_W / 2, node.y + NODE_H / 2


def _edge_path(a: Node, b: Node, kind: EdgeKind, slot: int) -> str:
    """SVG path data from `a` to `b`; `slot` spreads parallel arcs apart."""
    ax, ay = _center(a)
    bx, by = _center(b)
    if kind == "self":
        x, y = a.x + NODE_W - 22, a.y
        return f"M{x:.0f},{y:.0f} c-4,-14 18,-14 14,0"
    if kind == "back":
        lift = 16 + 7 * slot
        if a.y == b.y:
            y = a.y + NODE_H
            return (f"M{ax - 10:.0f},{y:.0f} C{ax - 10:.0f},{y + lift:.0f} "
                    f"{bx + 10:.0f},{y + lift:.0f} {bx + 10:.0f},{y:.0f}")
        if b.y < a.y:  # up to an earlier row: leave from the top, arrive at the bottom
            sx, tx = ax - 20, bx + 20
            return (f"M{sx:.0f},{a.y:.0f} C{sx:.0f},{a.y - 18:.0f} "
                    f"{tx:.0f},{b.y + NODE_H + 18:.0f} {tx:.0f},{b.y + NODE_H:.0f}")
        sx, tx = ax + 20, bx - 20
        return (f"M{sx:.0f},{a.y + NODE_H:.0f} C{sx:.0f},{a.y + NODE_H + 18:.0f} "
                f"{tx:.0f},{b.y - 18:.0f} {tx:.0f},{b.y:.0f}")
    if a.y == b.y:  # same row
        if b.x - a.x == NODE_W + GAP_X or b.x < a.x:
            return f"M{a.x + NODE_W:.0f},{ay:.0f} L{b.x:.0f},{by:.0f}"
        lift = 14 + 6 * slot
        return (f"M{ax + 12:.0f},{a.y:.0f} C{ax + 12:.0f},{a.y - lift:.0f} "
                f"{bx - 12:.0f},{b.y - lift:.0f} {bx - 12:.0f},{b.y:.0f}")
    if abs(a.y - b.y) < 3 * NODE_H and b.x > a.x:  # within a band, to another row
        return (f"M{a.x + NODE_W:.0f},{ay:.0f} C{a.x + NODE_W + GAP_X / 2:.0f},{ay:.0f} "
                f"{b.x - GAP_X / 2:.0f},{by:.0f} {b.x:.0f},{by:.0f}")
    # to another band: down from the bottom, along the gap above the target row, into its top
    if b.y > a.y:
        sy, ty, lane = a.y + NODE_H, b.y, b.y - 15
    else:
        sy, ty, lane = a.y, b.y + NODE_H, a.y - 15
    turn = 6 if bx < ax else -6
    return (f"M{ax:.0f},{sy:.0f} L{ax:.0f},{lane - 6:.0f} Q{ax:.0f},{lane:.0f} "
            f"{ax - turn:.0f},{lane:.0f} L{bx + turn:.0f},{lane:.0f} Q{bx:.0f},{lane:.0f} "
            f"{bx:.0f},{lane + (6 if ty > lane else -6):.0f} L{bx:.0f},{ty:.0f}")


def _label(stage_id: str) -> str:
    return stage_id if len(stage_id) <= LABEL_CHARS else stage_id[: LABEL_CHARS - 1] + "…"


def render_svg(table: StageTable, states: Mapping[str, str] | None = None,
               taken: Iterable[tuple[str, str]] = (), *, title: str | None = None) -> str:
    """The stage graph as an SVG document; the same inputs always give the same text."""
    lay = layout(table)
    states = dict(states or {})
    taken = set(taken)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="ls-graph" '
           f'width="{lay.width}" height="{lay.height}" viewBox="0 0 {lay.width} {lay.height}" '
           f'style="max-width:100%;height:auto;font-family:system-ui,-apple-system,'
           f'Segoe UI,Helvetica,Arial,sans-serif" role="img">',
           f"<title>{html.escape(title or f'stage graph of {table.path.name}')}</title>",
           "<defs>"]
    for name, color in (("a", EDGE_COLOR), ("t", EDGE_TAKEN), ("l", LOOP_COLOR)):
        out.append(f'<marker id="ls-arrow-{name}" viewBox="0 0 8 8" refX="7" refY="4" '
                   f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
                   f'<path d="M0,0 L8,4 L0,8 z" fill="{color}"/></marker>')
    out.append("</defs>")
    for label, y in lay.bands:
        out.append(f'<text class="ls-band" x="{PAD}" y="{y}" font-size="11" '
                   f'font-weight="600" fill="#6b7580">{html.escape(label)}</text>')

    slots: dict[tuple[str, int], int] = {}
    for e in lay.edges:
        a, b = lay.nodes[e.source], lay.nodes[e.target]
        key = (e.kind, a.y)
        slot = slots.get(key, 0)
        slots[key] = slot + 1
        is_taken = (e.source, e.target) in taken
        marker = "t" if is_taken else ("l" if e.kind != "forward" else "a")
        color = EDGE_TAKEN if is_taken else (LOOP_COLOR if e.kind != "forward" else EDGE_COLOR)
        dash = ' stroke-dasharray="4 3"' if e.kind == "back" or (
            e.kind == "forward" and not e.default) else ""
        out.append(f'<path class="ls-edge ls-edge-{e.kind}{" ls-taken" if is_taken else ""}" '
                   f'data-from="{html.escape(e.source)}" data-to="{html.escape(e.target)}" '
                   f'd="{_edge_path(a, b, e.kind, slot)}" fill="none" stroke="{color}" '
                   f'stroke-width="{1.8 if is_taken else 1.2}"{dash} '
                   f'marker-end="url(#ls-arrow-{marker})"/>')

    for stage_id, node in lay.nodes.items():
        state = states.get(stage_id, "pending")
        fill, stroke, ink = PALETTE.get(state, PALETTE["pending"])
        classes = ["ls-stage", f"ls-{state}"] + (["ls-gate"] if node.gate else []) + (
            ["ls-branch"] if node.branch else []) + (["ls-done"] if stage_id == DONE else [])
        width = 2.6 if state in ("current", "waiting") else 1.3
        dash = ' stroke-dasharray="5 3"' if node.branch else ""
        tip = stage_id if stage_id == DONE else _tooltip(table, stage_id, state)
        out.append(f'<g class="{" ".join(classes)}" data-stage="{html.escape(stage_id)}" '
                   f'data-state="{state}"><title>{html.escape(tip)}</title>')
        radius = NODE_H / 2 if stage_id == DONE else 6
        out.append(f'<rect x="{node.x}" y="{node.y}" width="{NODE_W}" height="{NODE_H}" '
                   f'rx="{radius:.0f}" fill="{fill}" stroke="{stroke}" '
                   f'stroke-width="{width}"{dash}/>')
        if node.gate:
            out.append(f'<rect x="{node.x + 3}" y="{node.y + 3}" width="{NODE_W - 6}" '
                       f'height="{NODE_H - 6}" rx="4" fill="none" stroke="{stroke}" '
                       f'stroke-width="0.8"/>')
            out.append(f'<text x="{node.x + NODE_W - 6}" y="{node.y + 11}" font-size="8" '
                       f'text-anchor="end" fill="{stroke}" font-weight="700">GATE</text>')
        bold = ' font-weight="700"' if state in ("current", "waiting") else ""
        out.append(f'<text x="{node.x + NODE_W / 2:.0f}" y="{node.y + NODE_H / 2 + 4:.0f}" '
                   f'font-size="11.5" text-anchor="middle" fill="{ink}"{bold}>'
                   f"{html.escape(_label(stage_id))}</text></g>")
    out.append("</svg>")
    return "\n".join(out)


def _tooltip(table: StageTable, stage_id: str, state: str) -> str:
    s = table[stage_id]
    lines = [f"{stage_id} ({state}{', gate' if s.approval else ''})",
             f"outputs: {', '.join(s.outputs)}", f"next: {s.next}",
             f"allowed: {', '.join(s.allowed)}"]
    if s.max_visits:
        lines.append(f"max visits: {s.max_visits}")
    return "\n".join(lines)


def render_state(table: StageTable, state: Any | None) -> str:
    """`render_svg` for a project state (a `ProjectState`, or None for the bare table)."""
    title = None
    if state is not None:
        title = f"stage graph: {state.stage} ({state.status})"
    return render_svg(table, stage_states(table, state), taken_edges(state), title=title)


def table_text(table: StageTable) -> str:
    """The table as aligned text: stage, gate, next, allowed, outputs."""
    rows = [("stage", "gate", "next", "allowed", "outputs")]
    rows += [(s.id, "gate" if s.approval else "", s.next, ", ".join(s.allowed),
              ", ".join(s.outputs)) for s in table]
    rows.append((DONE, "", "", "", "(end of the project)"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"stage table {table.path} · {len(table)} stages + {DONE} · start: {table.start}", ""]
    lines += ["  ".join(c.ljust(width) for c, width in zip(r[:4], widths)) + "  " + r[4]
              for r in rows]
    return "\n".join(line.rstrip() for line in lines)


class TableDiagram:
    """A stage table for display: the graph as SVG above the table as text."""

    def __init__(self, table: StageTable, state: Any | None = None):
        self.table = table
        self.state = state

    def _repr_html_(self) -> str:
        return (f"<div>{render_state(self.table, self.state)}</div>"
                f"<pre style='font-size:11px'>{html.escape(table_text(self.table))}</pre>")

    def __repr__(self) -> str:
        return table_text(self.table)
