/**
 * The stage graph, drawn from the view the kernel or the server computes
 * (`jupyter/graph_view.py`): the same drawing on the notebook's dashboard (the graph widget,
 * `widgets/graph.ts`) and in the side panel.
 *
 * The view holds every box, band caption and edge route (`jupyter/layout.py`), wrapped at a
 * few widths, and the state, visits and hover title of each stage: this module only turns
 * it into SVG elements and shows the widest drawing that fits (`GraphBox`). Colours come
 * from the theme (dashboard/style/theme.css). A saved notebook's static copy is the same
 * view drawn by `dashboard/graph.py`, for pages without JavaScript.
 */

import type { IGraphLayout, IGraphView, INodeLayout } from './answers';
import { el, focusable, svg } from './dom';

/** The key of an edge in a set of taken ones. */
export function edgeKey(source: string, target: string): string {
  return `${source}\u0000${target}`;
}

let drawings = 0;
/** This copy of the module's part of an id: the panel's bundle and each dashboard widget's
 * bundle (and each kernel's widget module) are copies of it on one page, each counting
 * from 1, so a count alone would repeat. */
const COPY = Math.random().toString(36).slice(2, 8);

/** An id no other element on the page has: an id is the page's, so with two drawings
 * defining the same marker (the panel's graph and a dashboard's, a narrower copy) every edge
 * ends with the first drawing's, which is not drawn when that drawing is hidden; two graph
 * boxes of one class would take each other's container queries. */
export function uniqueId(prefix: string): string {
  drawings += 1;
  return `${prefix}-${COPY}-${drawings}`;
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

/** Draw `layout` as an SVG element at its own size, with the project's state of `view`
 * marked. Each drawing defines its own arrowhead (`uniqueId`). */
export function renderGraph(
  layout: IGraphLayout,
  view: IGraphView,
  markerId = uniqueId('ls-arrow')
): SVGSVGElement {
  const taken = new Set(view.taken.map(([from, to]) => edgeKey(from, to)));
  const root = svg('svg', {
    class: 'ls-graph',
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    role: 'img',
    'aria-label': view.label
  });
  svg('title', {}, root).textContent = view.title;
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
    if (taken.has(edgeKey(edge.source, edge.target))) {
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
    drawNode(node, view, nodeGroup);
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

function drawNode(node: INodeLayout, view: IGraphView, parent: Element): void {
  const { x, y, width: w, height: h } = node;
  const visits = view.visits[node.id] ?? 0;
  const drawn = view.states[node.id] ?? 'pending';
  const g = svg(
    'g',
    {
      class: nodeClasses(node, drawn).join(' '),
      'data-stage': node.id,
      'data-state': drawn
    },
    parent
  );
  svg('title', {}, g).textContent = view.titles[node.id] ?? node.id;
  svg('rect', { x, y, width: w, height: h, rx: node.done ? h / 2 : 6 }, g);
  if (node.gate) {
    // a double border and the gate glyph
    svg(
      'rect',
      {
        x: x + 3,
        y: y + 3,
        width: w - 6,
        height: h - 6,
        rx: 4,
        class: 'ls-gate-mark'
      },
      g
    );
    const tag = svg(
      'text',
      { x: x + w - 6, y: y + 12, class: 'ls-gate-tag' },
      g
    );
    tag.textContent = '◆';
  }
  if (node.agent) {
    // the coding agent that works the stage, named in the top left corner
    const agent = svg(
      'text',
      { x: x + 6, y: y + 11, class: 'ls-agent-tag' },
      g
    );
    agent.textContent = node.agent;
  }
  const label = svg(
    'text',
    { x: x + w / 2, y: Math.round(y + h / 2 + 4), class: 'ls-label' },
    g
  );
  label.textContent = node.label;
  if (visits > 1) {
    const count = svg(
      'text',
      { x: x + w - 6, y: y + h - 4, class: 'ls-visits' },
      g
    );
    count.textContent = `×${visits}`;
  }
}

/** A drawing may be shown down to this part of its size (its text at 10.4 px of 11.5),
 * rather than a narrower drawing with more rows. */
export const SHRINK = 0.9;

/**
 * The graph in a box drawn at each of the view's widths (widest first), which shows the
 * widest drawing that fits the box's width, down to `SHRINK` of its size (else the
 * narrowest, which scrolls sideways). The choice is the box's own style sheet of container
 * queries, so it holds however the page lays the box out: hidden, scrolled out of view,
 * resized. A click fits the shown drawing to the box's width, or back. The dashboard's
 * widget and the side panel use it as it is.
 */
export class GraphBox {
  readonly node: HTMLElement;

  constructor(parent: HTMLElement, name = 'Stage graph') {
    this._id = uniqueId('ls-graph-box');
    const node = (this.node = el('div', { className: 'ls-graph-box' }, parent));
    node.classList.add(this._id);
    node.title = 'Click to fit the graph to the width (or back)';
    focusable(node, `${name} (scrolls sideways)`);
    node.addEventListener('click', () => node.classList.toggle('ls-graph-fit'));
  }

  /** Draw `view` (null: say `missing` instead). */
  show(view: IGraphView | null, missing = 'No stage table.'): void {
    this.node.textContent = '';
    if (!view) {
      el('p', { className: 'ls-reason', text: missing }, this.node);
      return;
    }
    const widths = view.layouts.map(layout => layout.width);
    el('style', { text: fitRules(`.${this._id}`, widths) }, this.node);
    for (const layout of view.layouts) {
      this.node.appendChild(renderGraph(layout, view));
    }
  }

  private readonly _id: string;
}

/** The container queries that show, of drawings `widths` wide in `box`, the one that fits. */
export function fitRules(box: string, widths: number[]): string {
  const px = (value: number) => `${Math.floor(value)}px`;
  const rules = [
    `${box} { container-type: inline-size; }`,
    `${box} > svg.ls-graph { display: none; }`
  ];
  widths.forEach((width, i) => {
    const from = i < widths.length - 1 ? px(width * SHRINK) : null;
    const below = i > 0 ? px(widths[i - 1] * SHRINK) : null;
    const range = [
      from ? `(min-width: ${from})` : '',
      below ? `(max-width: calc(${below} - 0.02px))` : ''
    ]
      .filter(Boolean)
      .join(' and ');
    const shown = `${box} > svg.ls-graph:nth-of-type(${i + 1})`;
    // down to SHRINK of its size; the narrowest keeps that and scrolls
    const size = `display: block; width: 100%; height: auto; max-width: ${width}px; min-width: ${px(width * SHRINK)};`;
    rules.push(
      range
        ? `@container ${range} { ${shown} { ${size} } }`
        : `${shown} { ${size} }`
    );
  });
  // a click fits it to the width, however narrow (the last rule: it wins a tie)
  rules.push(`${box}.ls-graph-fit > svg.ls-graph { min-width: 0; }`);
  return rules.join('\n');
}
