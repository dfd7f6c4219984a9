/**
 * The stage graph, drawn from the layout the server sends (`jupyter/layout.py`).
 *
 * The layout (every box, band caption and edge route) is computed once, in Python, and the
 * notebook dashboard draws the same one: this module only turns it into SVG elements and
 * marks the project's state on them. The state of each stage (pending, visited, current,
 * waiting, failed, done) comes from the server too, computed by the dashboard's own rule
 * (`look.stage_states`), so both screens draw a budget stop or a failed project alike.
 * Colours come from the theme (style/base.css).
 */

import type { IGraphLayout, INodeLayout } from './answers';
import { svg } from './dom';

export interface IGraphState {
  current: string | null;
  status: string | null;
  visits: Record<string, number>;
  /** How each stage is drawn, as the server sends it (`node_states`). */
  states: Record<string, string>;
  /** Transitions the project has made, as `from\u0000to`. */
  taken: Set<string>;
}

/** The key of an edge in `IGraphState.taken`. */
export function edgeKey(source: string, target: string): string {
  return `${source}\u0000${target}`;
}

let drawings = 0;

/** A marker id no other drawing on the page has: an id is the page's, so with two drawings
 * defining the same one (the panel's graph and a dashboard's, a narrow copy) every edge ends
 * with the first drawing's marker, which is not drawn when that drawing is hidden. */
export function uniqueMarkerId(prefix: string): string {
  drawings += 1;
  return `${prefix}-${drawings}`;
}

/** Define the arrowhead `markerId` in `root`'s own `defs` (edges end with it): each drawing
 * keeps its own, as a marker defined in a hidden drawing is not drawn. */
export function defineArrowhead(root: SVGSVGElement, markerId: string): void {
  const marker = svg(
    'marker',
    {
      id: markerId,
      viewBox: '0 0 8 8',
      refX: 7,
      refY: 4,
      markerWidth: 7,
      markerHeight: 7,
      orient: 'auto-start-reverse'
    },
    svg('defs', {}, root)
  );
  svg('path', { d: 'M0,0 L8,4 L0,8 z', class: 'ls-arrowhead' }, marker);
}

/** Draw `layout` as an SVG element at its own size; the project's state is marked. Each
 * drawing defines its own arrowhead (`uniqueMarkerId`). */
export function renderGraph(
  layout: IGraphLayout,
  state: IGraphState,
  markerId = uniqueMarkerId('ls-panel-arrow')
): SVGSVGElement {
  const root = svg('svg', {
    class: 'ls-graph',
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    role: 'img',
    'aria-label': 'Stage graph'
  });
  defineArrowhead(root, markerId);

  for (const band of layout.bands) {
    const caption = svg(
      'text',
      { class: 'ls-band', x: band.x, y: band.y },
      root
    );
    caption.textContent = band.label;
  }
  const edgeGroup = svg('g', { class: 'ls-edges' }, root);
  for (const edge of layout.edges) {
    const classes = ['ls-edge', `ls-edge-${edge.kind}`];
    if (state.taken.has(edgeKey(edge.source, edge.target))) {
      classes.push('ls-taken');
    }
    const path = svg(
      'path',
      {
        d: edge.path,
        class: classes.join(' '),
        'marker-end': `url(#${markerId})`,
        'data-from': edge.source,
        'data-to': edge.target
      },
      edgeGroup
    );
    svg('title', {}, path).textContent = `${edge.source} → ${edge.target}`;
  }
  const nodeGroup = svg('g', { class: 'ls-nodes' }, root);
  for (const node of layout.nodes) {
    drawNode(node, state, nodeGroup);
  }
  return root;
}

/** The stage's classes, as the dashboard's `graph._node_svg` gives them. */
function nodeClasses(node: INodeLayout, drawn: string): string[] {
  const classes = ['ls-node', `ls-node-${drawn}`];
  const flags: [boolean, string][] = [
    [node.gate, 'ls-node-gate'],
    [node.branch, 'ls-node-branch'],
    [node.done, 'ls-node-done'],
    [drawn === 'visited' || drawn === 'done', 'ls-node-visited']
  ];
  for (const [on, name] of flags) {
    if (on) {
      classes.push(name);
    }
  }
  return classes;
}

function drawNode(
  node: INodeLayout,
  state: IGraphState,
  parent: Element
): void {
  const { x, y, width: w, height: h } = node;
  const visits = state.visits[node.id] ?? 0;
  const drawn = state.states[node.id] ?? 'pending';
  const g = svg(
    'g',
    {
      class: nodeClasses(node, drawn).join(' '),
      'data-stage': node.id,
      'data-state': drawn
    },
    parent
  );
  svg('rect', { x, y, width: w, height: h, rx: node.done ? h / 2 : 5 }, g);
  if (node.gate) {
    // as on the dashboard: a double border and the gate glyph
    svg(
      'rect',
      {
        x: x + 3,
        y: y + 3,
        width: w - 6,
        height: h - 6,
        rx: 3,
        class: 'ls-gate-mark'
      },
      g
    );
    const tag = svg(
      'text',
      { x: x + w - 6, y: y + 11, class: 'ls-gate-tag' },
      g
    );
    tag.textContent = '◆';
  }
  const label = svg(
    'text',
    { x: x + w / 2, y: y + h / 2 + 4, class: 'ls-label' },
    g
  );
  label.textContent = node.label;
  if (visits > 1) {
    const count = svg(
      'text',
      { x: x + w - 6, y: y + h - 5, class: 'ls-visits' },
      g
    );
    count.textContent = `×${visits}`;
  }
  const title = [node.id];
  if (node.gate) {
    title.push('gate: waits for approval in manual mode');
  }
  if (visits) {
    title.push(`visited ${visits}×`);
  }
  if (node.id === state.current && state.status) {
    title.push(`current stage (${state.status})`);
  }
  svg('title', {}, g).textContent = title.join('\n');
}
