"""The stage graph's layout: one pure function from a `StageTable` to plain JSON-able data.

The dashboard draws its SVG from this layout (`jupyter.dashboard.graph`) and the server
extension sends the same layout to the side panel, which only draws it: both screens show one
graph. Every position, size and edge route is decided here, so the drawing code has no
geometry to get wrong and the layout is testable as data.

Layout, in three steps:

1. **Edge kinds.** A depth-first walk from `start` (default `next` first, then `allowed` in
   table order) marks edges into a stage still on the walk's stack as `back` (loops such as
   `experiment.analyze → experiment.loop`); `a → a` is a `loop`; every other edge goes
   forward, as the stage's default `next` or as another `allowed` stage.
2. **Columns.** A stage's depth is its longest forward path from `start`, so a detour (the
   probe branch) sits between the stages it connects. `done` takes the last column.
3. **Rows.** Stages are grouped in bands by phase (the id before its first dot), one band per
   phase in order of depth, wrapped after `MAX_COLUMNS` columns. In a band, stages on the
   default path (`start` following `next`) take the first row; branch stages go below.

Edges come with their route as SVG path data: forward edges run straight or arc above their
row, loop edges arc below it, self loops sit above their stage.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypedDict

from lightscientist_jupyter.controller.table import DONE, StageTable

EdgeKind = Literal["next", "allowed", "loop", "back"]
"""`next`: the source's default next stage (forward); `allowed`: another forward choice;
`loop`: a stage to itself; `back`: an edge that closes a cycle."""
_Shape = Literal["forward", "back", "self"]

MAX_COLUMNS = 6
NODE_W, NODE_H = 132, 34
GAP_X, GAP_Y = 30, 26
BAND_LABEL_H, BAND_GAP = 16, 22
PAD = 14
LABEL_CHARS = 20
AGENT_TAG_CHARS = 16


class NodeLayout(TypedDict):
    id: str
    label: str
    """The id, shortened to fit the box."""
    x: int
    y: int
    width: int
    height: int
    band: int
    column: int
    """Column within the band (depth from `start`, wrapped every `MAX_COLUMNS`)."""
    row: int
    gate: bool
    """The stage waits for approval (in manual mode)."""
    agent: str | None
    """The coding agent (`[agents.NAME]`) that works the stage, shortened to fit the box's
    corner (the hover title names it whole); None: the built-in worker."""
    branch: bool
    """Off the default path (`start` following `next`): a detour such as the probe branch."""
    done: bool


class EdgeLayout(TypedDict):
    source: str
    target: str
    kind: EdgeKind
    default: bool
    """The target is the source's default next stage (also true for a default `back`)."""
    path: str
    """SVG path data of the edge's route."""


class BandLayout(TypedDict):
    label: str
    x: int
    y: int
    """Baseline of the band's caption."""


class GraphLayout(TypedDict):
    width: int
    height: int
    nodes: list[NodeLayout]
    edges: list[EdgeLayout]
    bands: list[BandLayout]


# ------------------------------------------------------------------------- structure


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


def edge_kinds(table: StageTable) -> list[tuple[str, str, EdgeKind, bool]]:
    """Every allowed transition as `(source, target, kind, default)`, in table order."""
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
    edges: list[tuple[str, str, EdgeKind, bool]] = []
    for stage in table:
        for target in stage.allowed:
            default = target == stage.next
            kind: EdgeKind = (
                "loop"
                if target == stage.id
                else "back"
                if (stage.id, target) in back
                else "next"
                if default
                else "allowed"
            )
            edges.append((stage.id, target, kind, default))
    return edges


def _shape(kind: EdgeKind) -> _Shape:
    return "self" if kind == "loop" else "back" if kind == "back" else "forward"


def depths(table: StageTable, edges: Iterable[tuple[str, str, EdgeKind, bool]]) -> dict[str, int]:
    """Longest forward path from `start`; `done` one past the deepest stage."""
    forward: dict[str, list[str]] = {}
    indegree = {s.id: 0 for s in table}
    indegree[DONE] = 0
    for source, target, kind, _ in edges:
        if _shape(kind) == "forward":
            forward.setdefault(source, []).append(target)
            indegree[target] += 1
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


def _cells(
    table: StageTable, depth: dict[str, int], main: list[str], columns: int = MAX_COLUMNS
) -> tuple[dict[tuple[int, int], list[str | None]], dict[int, str]]:
    """The stages of each `(band, column)` cell, by row (None: an empty row), and band names."""
    order = {stage_id: i for i, stage_id in enumerate([*table.ids(), DONE])}
    before_done = next((s for s in reversed(main) if s != DONE), table.start)
    phase = {s: phase_of(s) for s in table.ids()}
    phase[DONE] = phase[before_done] if DONE in main else ""

    # bands: one per phase (by its smallest depth), wrapped every `columns` columns
    first: dict[str, int] = {}
    for stage_id in sorted(depth, key=lambda s: (depth[s], order[s])):
        first.setdefault(phase[stage_id], depth[stage_id])
    cells: dict[tuple[int, int], list[str]] = {}
    band_names: dict[int, str] = {}
    band_of_phase: dict[tuple[str, int], int] = {}
    for p in sorted(first, key=lambda p: (first[p], p)):
        chunks = sorted({(depth[s] - first[p]) // columns for s in depth if phase[s] == p})
        for chunk in chunks:
            band_of_phase[(p, chunk)] = len(band_of_phase)
            # a band wrapped onto more rows is named once, on its first
            band_names[band_of_phase[(p, chunk)]] = "" if chunk else p
    for stage_id in sorted(depth, key=lambda s: order[s]):
        offset = depth[stage_id] - first[phase[stage_id]]
        band = band_of_phase[(phase[stage_id], offset // columns)]
        cells.setdefault((band, offset % columns), []).append(stage_id)
    on_main = set(main)
    band_has_main = {band for (band, _), ids in cells.items() if on_main.intersection(ids)}
    rows_of: dict[tuple[int, int], list[str | None]] = {}
    for (band, column), stage_ids in cells.items():
        main_ids = sorted((s for s in stage_ids if s in on_main), key=order.__getitem__)
        branch_ids = sorted((s for s in stage_ids if s not in on_main), key=order.__getitem__)
        # a branch stage goes below the default path, so that a detour reads as one
        gap: list[str | None] = (
            [None] if branch_ids and not main_ids and band in band_has_main else []
        )
        rows_of[(band, column)] = [*main_ids, *gap, *branch_ids]
    return rows_of, band_names


# ------------------------------------------------------------------------- routes


def _center(node: NodeLayout) -> tuple[float, float]:
    return node["x"] + NODE_W / 2, node["y"] + NODE_H / 2


def edge_path(a: NodeLayout, b: NodeLayout, shape: _Shape, slot: int) -> str:
    """SVG path data from `a` to `b`; `slot` spreads parallel arcs apart."""
    ax, ay = _center(a)
    bx, by = _center(b)
    a_x, a_y, b_x, b_y = a["x"], a["y"], b["x"], b["y"]
    if shape == "self":
        x, y = a_x + NODE_W - 22, a_y
        return f"M{x:.0f},{y:.0f} c-4,-14 18,-14 14,0"
    if shape == "back":
        lift = 16 + 7 * slot
        if a_y == b_y:
            y = a_y + NODE_H
            return (
                f"M{ax - 10:.0f},{y:.0f} C{ax - 10:.0f},{y + lift:.0f} "
                f"{bx + 10:.0f},{y + lift:.0f} {bx + 10:.0f},{y:.0f}"
            )
        if b_y < a_y:  # up to an earlier row: leave from the top, arrive at the bottom
            sx, tx = ax - 20, bx + 20
            return (
                f"M{sx:.0f},{a_y:.0f} C{sx:.0f},{a_y - 18:.0f} "
                f"{tx:.0f},{b_y + NODE_H + 18:.0f} {tx:.0f},{b_y + NODE_H:.0f}"
            )
        sx, tx = ax + 20, bx - 20
        return (
            f"M{sx:.0f},{a_y + NODE_H:.0f} C{sx:.0f},{a_y + NODE_H + 18:.0f} "
            f"{tx:.0f},{b_y - 18:.0f} {tx:.0f},{b_y:.0f}"
        )
    if a_y == b_y:  # same row
        if b_x - a_x == NODE_W + GAP_X or b_x < a_x:
            return f"M{a_x + NODE_W:.0f},{ay:.0f} L{b_x:.0f},{by:.0f}"
        lift = 14 + 6 * slot
        return (
            f"M{ax + 12:.0f},{a_y:.0f} C{ax + 12:.0f},{a_y - lift:.0f} "
            f"{bx - 12:.0f},{b_y - lift:.0f} {bx - 12:.0f},{b_y:.0f}"
        )
    if abs(a_y - b_y) < 3 * NODE_H and b_x > a_x:  # within a band, to another row
        return (
            f"M{a_x + NODE_W:.0f},{ay:.0f} C{a_x + NODE_W + GAP_X / 2:.0f},{ay:.0f} "
            f"{b_x - GAP_X / 2:.0f},{by:.0f} {b_x:.0f},{by:.0f}"
        )
    # to another band: down from the bottom, along the gap above the target row, into its top
    if b_y > a_y:
        sy, ty, lane = a_y + NODE_H, b_y, b_y - 15
    else:
        sy, ty, lane = a_y, b_y + NODE_H, a_y - 15
    turn = 6 if bx < ax else -6
    return (
        f"M{ax:.0f},{sy:.0f} L{ax:.0f},{lane - 6:.0f} Q{ax:.0f},{lane:.0f} "
        f"{ax - turn:.0f},{lane:.0f} L{bx + turn:.0f},{lane:.0f} Q{bx:.0f},{lane:.0f} "
        f"{bx:.0f},{lane + (6 if ty > lane else -6):.0f} L{bx:.0f},{ty:.0f}"
    )


def _label(stage_id: str, chars: int = LABEL_CHARS) -> str:
    return stage_id if len(stage_id) <= chars else stage_id[: chars - 1] + "…"


def _agent_tag(table: StageTable, stage_id: str) -> str | None:
    """The coding agent that works a stage, as the box's top left corner shows it."""
    agent = None if stage_id == DONE else table[stage_id].agent
    return None if agent is None else _label(agent, AGENT_TAG_CHARS)


# ------------------------------------------------------------------------- layout


def graph_layout(table: StageTable, columns: int = MAX_COLUMNS) -> GraphLayout:
    """Positions and sizes of every stage (and `done`), the bands, and every edge's route;
    a band wraps after `columns` columns (fewer for a narrow view).

    Pure: the same table always gives the same layout, which `json.dumps` writes as is.
    """
    kinds = edge_kinds(table)
    main = default_path(table)
    rows_of, band_names = _cells(table, depths(table, kinds), main, columns)
    on_main = set(main)

    nodes: dict[str, NodeLayout] = {}
    bands: list[BandLayout] = []
    y = PAD
    width = 0
    for band in range(len(band_names)):
        rows = max(len(v) for (b, _), v in rows_of.items() if b == band)
        if band_names[band]:
            bands.append({"label": band_names[band], "x": PAD, "y": y + 11})
            y += BAND_LABEL_H
        y += 12  # room for self loops and arcs above the first row
        for (b, column), stage_ids in sorted(rows_of.items()):
            if b != band:
                continue
            for row, stage_id in enumerate(stage_ids):
                if stage_id is None:
                    continue
                x = PAD + column * (NODE_W + GAP_X)
                nodes[stage_id] = {
                    "id": stage_id,
                    "label": _label(stage_id),
                    "x": x,
                    "y": y + row * (NODE_H + GAP_Y),
                    "width": NODE_W,
                    "height": NODE_H,
                    "band": band,
                    "column": column,
                    "row": row,
                    "gate": stage_id != DONE and table[stage_id].approval,
                    "agent": _agent_tag(table, stage_id),
                    "branch": stage_id not in on_main,
                    "done": stage_id == DONE,
                }
                width = max(width, x + NODE_W + PAD)
        y += rows * NODE_H + (rows - 1) * GAP_Y + BAND_GAP + 8

    edges: list[EdgeLayout] = []
    slots: dict[tuple[_Shape, int], int] = {}
    for source, target, kind, default in kinds:
        start, end = nodes[source], nodes[target]
        key = (_shape(kind), start["y"])
        slot = slots.get(key, 0)
        slots[key] = slot + 1
        edges.append(
            {
                "source": source,
                "target": target,
                "kind": kind,
                "default": default,
                "path": edge_path(start, end, key[0], slot),
            }
        )
    return {
        "width": width,
        "height": y - BAND_GAP + PAD,
        "nodes": list(nodes.values()),
        "edges": edges,
        "bands": bands,
    }
