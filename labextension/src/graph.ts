/**
 * The stage graph: a layered layout computed from the stage table, drawn as SVG.
 *
 * Layers are topological depths: edges that close a loop (found by a depth-first walk from
 * the start stage) are set aside, and each stage sits one layer below the deepest stage that
 * leads to it. The side panel is narrow, so layers run top to bottom. Edges to the next layer
 * are straight; longer forward edges bow to the right, loops back bow to the left, dashed.
 */

import { IStageInfo, IStageTable } from './api';

export const DONE = 'done';

export interface IGraphNode {
  id: string;
  layer: number;
  slot: number;
  gate: boolean;
  selfLoop: boolean;
}

export interface IGraphEdge {
  from: string;
  to: string;
  back: boolean;
}

export interface IGraphLayout {
  nodes: IGraphNode[];
  edges: IGraphEdge[];
  layers: number;
  slots: number;
}

/** Lay out a stage table (pure: the same table always gives the same layout). */
export function layoutStages(table: IStageTable): IGraphLayout {
  const stages = new Map<string, IStageInfo>(table.stages.map(s => [s.id, s]));
  const ids = table.stages.map(s => s.id);
  if (table.stages.some(s => s.allowed.includes(DONE))) {
    ids.push(DONE);
  }
  const next = (id: string) =>
    (stages.get(id)?.allowed ?? []).filter(to => to !== id && ids.includes(to));

  // Depth-first from the start (then from any stage left unvisited): edges into a stage
  // still on the walk's stack close a loop.
  const state = new Map<string, 'open' | 'closed'>();
  const back = new Set<string>();
  const finished: string[] = [];
  const visit = (id: string) => {
    state.set(id, 'open');
    for (const to of next(id)) {
      if (state.get(to) === 'open') {
        back.add(`${id}\u0000${to}`);
      } else if (!state.has(to)) {
        visit(to);
      }
    }
    state.set(id, 'closed');
    finished.push(id);
  };
  for (const root of [table.start, ...ids]) {
    if (ids.includes(root) && !state.has(root)) {
      visit(root);
    }
  }

  const layer = new Map<string, number>(ids.map(id => [id, 0]));
  for (const id of [...finished].reverse()) {
    for (const to of next(id)) {
      if (!back.has(`${id}\u0000${to}`)) {
        layer.set(to, Math.max(layer.get(to)!, layer.get(id)! + 1));
      }
    }
  }

  const layers = Math.max(0, ...layer.values()) + 1;
  const slot = new Map<string, number>();
  let slots = 1;
  for (let l = 0; l < layers; l++) {
    const row = ids.filter(id => layer.get(id) === l);
    const parentMean = (id: string) => {
      const parents = ids.filter(p => slot.has(p) && next(p).includes(id));
      return parents.length
        ? parents.reduce((sum, p) => sum + slot.get(p)!, 0) / parents.length
        : ids.indexOf(id);
    };
    row
      .map(id => ({ id, key: parentMean(id), order: ids.indexOf(id) }))
      .sort((a, b) => a.key - b.key || a.order - b.order)
      .forEach((entry, index) => slot.set(entry.id, index));
    slots = Math.max(slots, row.length);
  }

  const nodes = ids.map(id => ({
    id,
    layer: layer.get(id)!,
    slot: slot.get(id)!,
    gate: stages.get(id)?.approval ?? false,
    selfLoop: stages.get(id)?.allowed.includes(id) ?? false
  }));
  const edges: IGraphEdge[] = [];
  for (const id of ids) {
    for (const to of next(id)) {
      edges.push({ from: id, to, back: back.has(`${id}\u0000${to}`) });
    }
  }
  return { nodes, edges, layers, slots };
}

const NODE_W = 150;
const NODE_H = 22;
const ROW = 34;
const COL = 170;
const MARGIN = 44;
const SVG_NS = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  parent?: Element
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    element.setAttribute(key, String(value));
  }
  parent?.appendChild(element);
  return element;
}

export interface IGraphState {
  current: string | null;
  status: string | null;
  visits: Record<string, number>;
  pendingGate: string | null;
}

/** Draw `layout` as an SVG element; the current stage and visited stages are marked. */
export function renderGraph(layout: IGraphLayout, state: IGraphState): SVGSVGElement {
  const width = MARGIN * 2 + NODE_W + (layout.slots - 1) * COL;
  const height = layout.layers * ROW + 8;
  const root = svg('svg', {
    class: 'ls-graph',
    viewBox: `0 0 ${width} ${height}`,
    width: '100%',
    role: 'img',
    'aria-label': 'Stage graph'
  });
  const defs = svg('defs', {}, root);
  const marker = svg(
    'marker',
    {
      id: 'ls-arrow',
      viewBox: '0 0 8 8',
      refX: 7,
      refY: 4,
      markerWidth: 6,
      markerHeight: 6,
      orient: 'auto-start-reverse'
    },
    defs
  );
  svg('path', { d: 'M0,0 L8,4 L0,8 z', class: 'ls-arrowhead' }, marker);

  const pos = new Map(
    layout.nodes.map(n => [
      n.id,
      { x: MARGIN + n.slot * COL, y: 4 + n.layer * ROW, node: n }
    ])
  );
  const edgeGroup = svg('g', { class: 'ls-edges' }, root);
  for (const edge of layout.edges) {
    const a = pos.get(edge.from)!;
    const b = pos.get(edge.to)!;
    let d: string;
    if (edge.back) {
      const x1 = a.x;
      const x2 = b.x;
      const bend = Math.min(a.x, b.x) - 26 - Math.abs(a.y - b.y) / 20;
      d = `M${x1},${a.y + NODE_H / 2} C${bend},${a.y + NODE_H / 2} ${bend},${b.y + NODE_H / 2} ${x2},${b.y + NODE_H / 2}`;
    } else if (b.node.layer === a.node.layer + 1 || b.x !== a.x) {
      d = `M${a.x + NODE_W / 2},${a.y + NODE_H} L${b.x + NODE_W / 2},${b.y}`;
    } else {
      const x1 = a.x + NODE_W;
      const bend = Math.max(a.x, b.x) + NODE_W + 26 + Math.abs(a.y - b.y) / 20;
      d = `M${x1},${a.y + NODE_H / 2} C${bend},${a.y + NODE_H / 2} ${bend},${b.y + NODE_H / 2} ${b.x + NODE_W},${b.y + NODE_H / 2}`;
    }
    const path = svg(
      'path',
      {
        d,
        class: edge.back ? 'ls-edge ls-edge-back' : 'ls-edge',
        'marker-end': 'url(#ls-arrow)',
        'data-from': edge.from,
        'data-to': edge.to
      },
      edgeGroup
    );
    svg('title', {}, path).textContent = `${edge.from} → ${edge.to}`;
  }

  const nodeGroup = svg('g', { class: 'ls-nodes' }, root);
  for (const { x, y, node } of pos.values()) {
    const visits = state.visits[node.id] ?? 0;
    const classes = ['ls-node'];
    if (node.gate) {
      classes.push('ls-node-gate');
    }
    if (node.id === DONE) {
      classes.push('ls-node-done');
    }
    if (visits > 0 || (node.id === DONE && state.current === DONE)) {
      classes.push('ls-node-visited');
    }
    if (node.id === state.current) {
      classes.push('ls-node-current');
    }
    if (node.id === state.pendingGate) {
      classes.push('ls-node-waiting');
    }
    const g = svg(
      'g',
      { class: classes.join(' '), 'data-stage': node.id, transform: `translate(${x},${y})` },
      nodeGroup
    );
    svg(
      'rect',
      { width: NODE_W, height: NODE_H, rx: node.id === DONE ? NODE_H / 2 : 4 },
      g
    );
    if (node.gate) {
      svg('path', { d: 'M10,4 L16,11 L10,18 L4,11 z', class: 'ls-gate-mark' }, g);
    }
    if (node.selfLoop) {
      svg(
        'path',
        {
          d: `M${NODE_W},6 C${NODE_W + 18},0 ${NODE_W + 18},${NODE_H} ${NODE_W},${NODE_H - 6}`,
          class: 'ls-edge',
          'marker-end': 'url(#ls-arrow)'
        },
        g
      );
    }
    const label = svg('text', { x: node.gate ? 22 : 8, y: 15 }, g);
    label.textContent = node.id;
    if (visits > 1) {
      const count = svg('text', { x: NODE_W - 6, y: 15, class: 'ls-visits' }, g);
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
  return root;
}
