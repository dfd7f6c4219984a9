"""A search stage's tree: where each node's box goes (`drawing`, what both live screens draw
with `labextension/src/tree.ts`: the dashboard's search widget and the side panel), and the
same tree as deterministic static SVG for `%lightscientist tree` (`render_svg`).

Drafts are stacked top to bottom, each node's children in a column to its right, a parent
level with the middle of its children, so a long branch of improvements grows sideways and
many nodes grow downwards. A node is a box with its id and kind, then its status and metric
in words; its status is also the colour of its border (`dashboard/style/theme.css`, `.ls-tree`, from
the dashboard's status colours), never the only cue. The best node carries `★ best` and a
thicker border, and the edges that lead to it are drawn darker. The same `SearchView` always
gives the same text; pure functions, like the stage graph's (`dashboard/graph.py`).
"""

from __future__ import annotations

import html

from lightscientist_jupyter.app.search import (
    SearchView,
    TreeUnavailable,
    metric_text,
    read_tree,
    summary_line,
    tree_lines,
)
from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.jupyter.dashboard.graph import scroll_box, style_tag
from lightscientist_jupyter.jupyter.server.answers import SearchCard, SearchDrawing
from lightscientist_jupyter.values.search import Node
from lightscientist_jupyter.workspace import Workspace

BOX_WIDTH, BOX_HEIGHT = 150, 40
COLUMN_GAP, ROW_GAP, MARGIN = 36, 10, 8


def positions(view: SearchView) -> dict[str, tuple[float, float]]:
    """The top left corner of each node's box: a leaf takes the next row, a parent the
    middle of its children's rows, each depth a column."""
    walked = view.walk()
    rows: dict[str, float] = {}
    leaves = 0
    for node, _ in walked:
        if not view.tree.children(node.id):
            rows[node.id] = leaves
            leaves += 1
    for node, _ in reversed(walked):  # children before their parent
        children = view.tree.children(node.id)
        if children:
            rows[node.id] = (rows[children[0].id] + rows[children[-1].id]) / 2
    return {
        node.id: (
            MARGIN + depth * (BOX_WIDTH + COLUMN_GAP),
            MARGIN + rows[node.id] * (BOX_HEIGHT + ROW_GAP),
        )
        for node, depth in walked
    }


def to_best(view: SearchView) -> set[str]:
    """The best node and every node above it (the edges between them are drawn darker)."""
    on_path: set[str] = set()
    current = view.best
    while current is not None:
        on_path.add(current)
        current = view.tree.node(current).parent
    return on_path


def size(view: SearchView) -> tuple[float, float]:
    """The drawing's width and height."""
    columns = 1 + max((depth for _, depth in view.walk()), default=0)
    rows = max(sum(1 for n in view.tree.nodes if not view.tree.children(n.id)), 1)
    width = 2 * MARGIN + columns * BOX_WIDTH + (columns - 1) * COLUMN_GAP
    height = 2 * MARGIN + rows * BOX_HEIGHT + (rows - 1) * ROW_GAP
    return width, height


NO_NODE_YET = "no node has started yet"


def search_card(ws: Workspace, table: StageTable) -> SearchCard | None:
    """The tree of the table's search stages as both screens show it (drawn by
    `labextension/src/tree.ts`), or why there is none yet; None without a search stage."""
    stages = [s.id for s in table if s.search is not None]
    if not stages:
        return None
    try:
        view = read_tree(ws)
    except TreeUnavailable as exc:
        note = NO_NODE_YET if "no search tree" in str(exc) else str(exc)
        return {"stages": stages, "drawing": None, "note": note}
    return {"stages": stages, "drawing": drawing(view), "note": None}


def drawing(view: SearchView) -> SearchDrawing:
    """The boxes `render_svg` draws, where it draws them: the side panel draws the same."""
    where = positions(view)
    darker = to_best(view)
    width, height = size(view)
    spec = view.tree.spec
    return {
        "metric": spec.metric,
        "goal": spec.goal,
        "best": view.best,
        "words": summary_words(view),
        "width": width,
        "height": height,
        "box_width": BOX_WIDTH,
        "box_height": BOX_HEIGHT,
        "nodes": [
            {
                "id": node.id,
                "parent": node.parent,
                "kind": str(node.kind),
                "status": str(node.status),
                "metric": node.metric,
                "summary": node.summary,
                "x": where[node.id][0],
                "y": where[node.id][1],
                "best": node.id == view.best,
                "to_best": node.id in darker,
            }
            for node in view.tree.nodes
        ],
    }


def render_svg(view: SearchView) -> str:
    """The tree as an SVG document (classes, no colours: `dashboard/style/theme.css` styles
    them)."""
    where = positions(view)
    width, height = size(view)
    words = summary_words(view)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ls-graph ls-tree" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="{html.escape(words)}">',
        f"<title>{html.escape(words)}</title>",
        '<defs><marker id="ls-tree-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto"><path class="ls-arrowhead" d="M0,0 L8,4 L0,8 z"/>'
        "</marker></defs>",
    ]
    if not view.tree.nodes:
        out.append(f'<text x="{MARGIN}" y="{MARGIN + 24}">no node yet</text>')
    darker = to_best(view)
    for node in view.tree.nodes:
        if node.parent is not None:
            out.append(_edge(where[node.parent], where[node.id], node, node.id in darker))
    for node in view.tree.nodes:
        out += _box(view, node, where[node.id])
    out.append("</svg>")
    return "\n".join(out)


def summary_words(view: SearchView) -> str:
    """The drawing in words (its title, for a screen reader): the text's last line."""
    spec = view.tree.spec
    return f"search tree of {spec.metric} ({spec.goal}): {summary_line(view)}"


def _edge(parent: tuple[float, float], child: tuple[float, float], node: Node, dark: bool) -> str:
    x1, y1 = parent[0] + BOX_WIDTH, parent[1] + BOX_HEIGHT / 2
    x2, y2 = child[0], child[1] + BOX_HEIGHT / 2
    middle = (x1 + x2) / 2
    return (
        f'<path class="ls-edge{" ls-taken" if dark else ""}" '
        f'data-from="{html.escape(node.parent or "")}" data-to="{html.escape(node.id)}" '
        f'd="M{x1:.0f},{y1:.0f} C{middle:.0f},{y1:.0f} {middle:.0f},{y2:.0f} {x2:.0f},{y2:.0f}" '
        'marker-end="url(#ls-tree-arrow)"/>'
    )


def _box(view: SearchView, node: Node, corner: tuple[float, float]) -> list[str]:
    x, y = corner
    best = node.id == view.best
    metric = metric_text(node.metric)
    state = f"{node.status} · {metric}" if metric else str(node.status)
    tip = [f"{node.id}: {node.kind}, {node.status}"]
    if metric:
        tip.append(f"{view.tree.spec.metric} {metric}")
    tip += [f"job {node.job}"] if node.job else []
    tip += [node.summary] if node.summary else []
    tip += [f"files: {', '.join(node.files)}"] if node.files else []
    classes = "ls-tree-node" + (" ls-tree-best" if best else "")
    out = [
        f'<g class="{classes}" data-node="{html.escape(node.id)}" data-status="{node.status}" '
        f'data-kind="{node.kind}"><title>{html.escape(chr(10).join(tip))}</title>',
        f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="6"/>',
        f'<text class="ls-tree-name" x="{x + 8:.0f}" y="{y + 16:.0f}">'
        f"{html.escape(node.id)} · {node.kind}</text>",
        f'<text class="ls-tree-state" x="{x + 8:.0f}" y="{y + 32:.0f}">{html.escape(state)}</text>',
    ]
    if best:
        out.append(
            f'<text class="ls-tree-mark" x="{x + BOX_WIDTH - 8:.0f}" y="{y + 32:.0f}">★ best</text>'
        )
    out.append("</g>")
    return out


class TreeDiagram:
    """A search tree for display: the drawing in a notebook, the command line's text as its
    plain form (a terminal, a saved notebook's text)."""

    def __init__(self, view: SearchView):
        self.view = view

    def _repr_html_(self) -> str:
        drawing = scroll_box(render_svg(self.view), label="search tree")
        return f'{style_tag()}<div class="lightscientist-static">{drawing}</div>'

    def __repr__(self) -> str:
        return "\n".join(tree_lines(self.view))
