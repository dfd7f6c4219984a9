/**
 * A search stage's tree in the panel, drawn from the boxes the server sends
 * (`search_tree.drawing`), where the notebook's `%lightscientist tree` and dashboard draw
 * them, with the same classes (the shared theme colours them). A node is a button: a click,
 * or Enter / Space, shows it whole below the drawing (`renderNode`): its summary, its files
 * against its parent's as a diff, and the end of its job's log.
 */

import type {
  INodeAnswer,
  ISearchCard,
  ISearchDrawing,
  ITreeBox
} from './answers';
import { asText, renderDiffs } from './diff';
import { el, focusable, svg } from './dom';
import { defineArrowhead, uniqueId } from './graph';

/** A node's metric as the notebook writes it (`%g`: at most six significant digits). */
export function metricText(metric: number | null): string {
  return metric === null ? '' : String(Number(metric.toPrecision(6)));
}

/** Draw `drawing` as an SVG element; `pick` is called with the id of a node chosen. */
export function renderTree(
  drawing: ISearchDrawing,
  picked: string | null,
  pick: (node: string) => void,
  markerId = uniqueId('ls-panel-tree-arrow')
): SVGSVGElement {
  const { width, height } = drawing;
  const root = svg('svg', {
    class: 'ls-graph ls-tree',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'group',
    'aria-label': drawing.words
  });
  svg('title', {}, root).textContent = drawing.words;
  defineArrowhead(root, markerId);
  const byId = new Map(drawing.nodes.map(n => [n.id, n]));
  for (const node of drawing.nodes) {
    const parent = node.parent === null ? undefined : byId.get(node.parent);
    if (parent) {
      drawEdge(parent, node, drawing, markerId, root);
    }
  }
  for (const node of drawing.nodes) {
    drawBox(node, drawing, node.id === picked, pick, root);
  }
  return root;
}

function drawEdge(
  parent: ITreeBox,
  child: ITreeBox,
  drawing: ISearchDrawing,
  markerId: string,
  root: Element
): void {
  const x1 = parent.x + drawing.box_width;
  const y1 = parent.y + drawing.box_height / 2;
  const x2 = child.x;
  const y2 = child.y + drawing.box_height / 2;
  const middle = (x1 + x2) / 2;
  svg(
    'path',
    {
      class: child.to_best ? 'ls-edge ls-taken' : 'ls-edge',
      'data-from': parent.id,
      'data-to': child.id,
      d: `M${x1},${y1} C${middle},${y1} ${middle},${y2} ${x2},${y2}`,
      'marker-end': `url(#${markerId})`
    },
    root
  );
}

function drawBox(
  node: ITreeBox,
  drawing: ISearchDrawing,
  picked: boolean,
  pick: (node: string) => void,
  root: Element
): void {
  const classes = ['ls-tree-node'];
  if (node.best) {
    classes.push('ls-tree-best');
  }
  if (picked) {
    classes.push('ls-tree-picked');
  }
  const metric = metricText(node.metric);
  const state = metric ? `${node.status} · ${metric}` : node.status;
  const g = svg(
    'g',
    {
      class: classes.join(' '),
      'data-node': node.id,
      'data-status': node.status,
      'data-kind': node.kind,
      tabindex: 0,
      role: 'button',
      'aria-pressed': String(picked),
      'aria-label':
        `node ${node.id}: ${node.kind}, ${state}` +
        (node.best ? ', the best' : '')
    },
    root
  );
  const tip = [`${node.id}: ${node.kind}, ${node.status}`];
  if (metric) {
    tip.push(`${drawing.metric} ${metric}`);
  }
  if (node.summary) {
    tip.push(node.summary);
  }
  tip.push('Click to see its diff and log');
  svg('title', {}, g).textContent = tip.join('\n');
  const { x, y } = node;
  svg(
    'rect',
    { x, y, width: drawing.box_width, height: drawing.box_height, rx: 6 },
    g
  );
  svg('text', { class: 'ls-tree-name', x: x + 8, y: y + 16 }, g).textContent =
    `${node.id} · ${node.kind}`;
  svg('text', { class: 'ls-tree-state', x: x + 8, y: y + 32 }, g).textContent =
    state;
  if (node.best) {
    svg(
      'text',
      { class: 'ls-tree-mark', x: x + drawing.box_width - 8, y: y + 32 },
      g
    ).textContent = '★ best';
  }
  g.addEventListener('click', () => pick(node.id));
  g.addEventListener('keydown', event => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      pick(node.id);
    }
  });
}

/** Show one node in `box`: its summary, its files against its parent's, its log's end. */
export function renderNode(box: HTMLElement, answer: INodeAnswer): void {
  box.textContent = '';
  const node = answer.node;
  box.dataset.node = node.id;
  const metric = metricText(node.metric);
  el(
    'p',
    {
      className: 'ls-node-head',
      text:
        `Node ${node.id}: ${node.kind}, ${node.status}` +
        (metric ? ` · metric ${metric}` : '')
    },
    box
  );
  if (node.summary) {
    el('p', { className: 'ls-node-summary', text: node.summary }, box);
  }
  const title = filesLine(
    answer.against,
    answer.changes.length,
    answer.unchanged
  );
  if (answer.changes.length) {
    renderDiffs(box, answer.changes, asText, title); // a node's diff is text only
  } else {
    el('p', { className: 'ls-muted', text: title }, box);
  }
  if (answer.log === null) {
    el('p', { className: 'ls-muted', text: 'The node ran no job.' }, box);
    return;
  }
  el(
    'p',
    {
      text: `Log ${answer.log} (last ${answer.log_tail.length} lines)`
    },
    box
  );
  const log = el(
    'pre',
    {
      className: 'ls-node-log',
      text: answer.log_tail.join('\n') || '(empty)'
    },
    box
  );
  focusable(log, `end of ${answer.log}`);
}

/** What a node's files are compared with, in words: as `search_node.files_line` says it. */
export function filesLine(
  against: string | null,
  differ: number,
  unchanged: number
): string {
  if (against === null) {
    return `A draft: its ${differ} file(s) are all new`;
  }
  const same = unchanged ? `, ${unchanged} unchanged` : '';
  return `Files against its parent ${against}: ${differ} differ${same}`;
}

/** How a screen fetches one node's detail (the panel: the server; the dashboard's widget:
 * the server, else its kernel). */
export type NodeFetcher = (node: string) => Promise<INodeAnswer>;

/**
 * A search stage's tree as both screens show it: the tree in words, the drawing (it scrolls
 * sideways), and the node picked below it, whole. The pick is kept across redraws (the
 * node's card follows it as it runs and ends) and dropped when a rewind took the node away.
 */
export class SearchBox {
  constructor(
    parent: HTMLElement,
    private readonly _fetch: NodeFetcher
  ) {
    this._words = el('p', { className: 'ls-muted ls-tree-words' }, parent);
    this._tree = el('div', { className: 'ls-tree-box' }, parent);
    focusable(
      this._tree,
      'Search tree (scrolls sideways); a node shows its diff and log'
    );
    this._node = el('div', { className: 'ls-node-detail' }, parent);
    this._node.setAttribute('aria-live', 'polite');
  }

  /** Forget the pick: another project is shown. */
  reset(): void {
    this._picked = null;
    this._node.textContent = '';
    this._card = null;
  }

  /** Draw `card` (null: no search stage; nothing is drawn). */
  show(card: ISearchCard | null): void {
    this._card = card;
    this._tree.textContent = '';
    this._words.textContent = '';
    if (card === null) {
      return;
    }
    const drawing = card.drawing;
    if (drawing === null) {
      this._words.textContent = card.note ?? '';
      return;
    }
    this._words.textContent = drawing.words;
    if (
      this._picked !== null &&
      !drawing.nodes.some(n => n.id === this._picked)
    ) {
      this._picked = null; // a rewind took it away
      this._node.textContent = '';
    }
    const pick = (node: string) => {
      this._picked = node;
      this.show(this._card);
    };
    this._tree.appendChild(renderTree(drawing, this._picked, pick));
    if (this._picked !== null) {
      void this._showNode(this._picked);
    }
  }

  private async _showNode(node: string): Promise<void> {
    try {
      const answer = await this._fetch(node);
      if (this._picked === node) {
        renderNode(this._node, answer);
      }
    } catch (error) {
      this._node.textContent = `Node ${node} cannot be shown: ${(error as Error).message}`;
    }
  }

  private _card: ISearchCard | null = null;
  private _picked: string | null = null;
  private _words: HTMLElement;
  private _tree: HTMLElement;
  private _node: HTMLElement;
}
