/**
 * The dashboard's event stream: a bounded, filterable list fed by batched custom messages
 * (`jupyter/dashboard/widgets.py`, `EventStream`). Filtering happens here, so it answers at
 * once while a cell runs and the kernel cannot read widget messages; the rule is
 * `lightscientist_jupyter.events.make_filter`'s.
 */

import { el } from '../dom';
import type { IRenderProps, IWidgetModel } from './host';
import type { IEventRow } from './views';

/** The stream's synced traits. */
export interface IEventsTraits {
  tail: IEventRow[];
  maxlen: number;
  layer: number;
  type_filter: string;
  worker: string;
  total: number;
}

const LAYERS: [string, string][] = [
  ['0', 'all layers'],
  ['1', 'L1 controller'],
  ['2', 'L2 supervisor'],
  ['3', 'L3 workers']
];
/** Rows drawn at most (the newest). */
const SHOWN_MAX = 300;

/** `hh:mm:ss` of a time in seconds, in the browser's zone. */
export function clock(ts: number): string {
  const d = new Date((ts || 0) * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()]
    .map(n => String(n).padStart(2, '0'))
    .join(':');
}

/** The filter the traits say: layer, type or type prefix (`stage.` or `stage*`), worker. */
export function keeper(
  layer: number,
  typeFilter: string,
  worker: string
): (e: IEventRow) => boolean {
  const type = typeFilter.trim();
  const who = worker.trim();
  return e => {
    if (layer && e.layer !== layer) {
      return false;
    }
    if (who && e.worker !== who) {
      return false;
    }
    if (type) {
      if (type.endsWith('.') || type.endsWith('*')) {
        return (e.type || '').startsWith(type.replace(/\*+$/, ''));
      }
      return e.type === type;
    }
    return true;
  };
}

function render({ model, el: root }: IRenderProps<IEventsTraits>): () => void {
  root.classList.add('ls-events');
  const bar = el('div', { className: 'ls-events-bar' }, root);
  const layer = el('select', { className: 'ls-events-layer' }, bar);
  for (const [value, label] of LAYERS) {
    el('option', { text: label }, layer).value = value;
  }
  layer.setAttribute('aria-label', 'Show the events of this layer');
  const type = el('input', { className: 'ls-events-type' }, bar);
  type.placeholder = 'type or prefix (stage.)';
  type.setAttribute('aria-label', 'Show events of this type or type prefix');
  const worker = el('input', { className: 'ls-events-worker' }, bar);
  worker.placeholder = 'worker id';
  worker.setAttribute('aria-label', 'Show the events of this worker');
  const count = el('span', { className: 'ls-events-count' }, bar);
  const list = el('div', { className: 'ls-events-list' }, root);
  list.tabIndex = 0; // it scrolls: keys must reach it
  list.setAttribute('role', 'log');
  list.setAttribute(
    'aria-label',
    'events, newest first; Enter on a row shows it whole'
  );
  const stream = new Stream(model, list, count);

  const onCustom = (msg: any) => {
    if (msg?.kind === 'events') {
      stream.add(msg.events, msg.skipped || 0, msg.total || 0);
    }
  };
  const onTail = () => stream.add(model.get('tail'), 0, model.get('total'));
  const syncControls = () => {
    layer.value = String(model.get('layer') || 0);
    if (document.activeElement !== type) {
      type.value = model.get('type_filter');
    }
    if (document.activeElement !== worker) {
      worker.value = model.get('worker');
    }
    stream.schedule();
  };
  const edit = <K extends 'layer' | 'type_filter' | 'worker'>(
    name: K,
    value: IEventsTraits[K]
  ) => {
    model.set(name, value);
    model.save_changes();
    stream.schedule();
  };
  layer.addEventListener('change', () => edit('layer', Number(layer.value)));
  type.addEventListener('input', () => edit('type_filter', type.value));
  worker.addEventListener('input', () => edit('worker', worker.value));
  const filters = 'change:layer change:type_filter change:worker';
  model.on('msg:custom', onCustom);
  model.on('change:tail', onTail);
  model.on(filters, syncControls);
  onTail();
  syncControls();
  return () => {
    model.off('msg:custom', onCustom);
    model.off('change:tail', onTail);
    model.off(filters, syncControls);
  };
}

/** The events a view keeps (by sequence number, each once), drawn at most once a frame. */
class Stream {
  constructor(
    private readonly _model: IWidgetModel<IEventsTraits>,
    private readonly _list: HTMLElement,
    private readonly _count: HTMLElement
  ) {}

  add(batch: IEventRow[] | undefined, skipped: number, total: number): void {
    this._skipped += skipped;
    this._total = Math.max(this._total, total);
    const events = this._events;
    const last = events.length ? events[events.length - 1].seq : -Infinity;
    let unsorted = false;
    for (const e of batch || []) {
      if (this._seen.has(e.seq)) {
        continue;
      }
      this._seen.add(e.seq);
      unsorted = unsorted || e.seq < last;
      events.push(e);
    }
    if (unsorted) {
      events.sort((a, b) => a.seq - b.seq);
    }
    const max = this._model.get('maxlen') || 500;
    for (const e of events.splice(0, Math.max(0, events.length - max))) {
      this._seen.delete(e.seq);
    }
    this.schedule();
  }

  schedule(): void {
    if (!this._pending) {
      this._pending = true;
      requestAnimationFrame(() => this._draw());
    }
  }

  private _draw(): void {
    this._pending = false;
    const m = this._model;
    const keep = keeper(m.get('layer'), m.get('type_filter'), m.get('worker'));
    const shown = this._events.filter(keep);
    const rows = shown
      .slice(-SHOWN_MAX)
      .reverse()
      .map(e => this._row(e));
    this._list.replaceChildren(...rows);
    const burst = this._skipped ? ` · ${this._skipped} not sent (burst)` : '';
    const total = Math.max(this._total, this._events.length);
    this._count.textContent = `${shown.length} shown · ${total} events${burst}`;
  }

  /** One row; a click or Enter shows it whole (a disclosure), kept across redraws. */
  private _row(e: IEventRow): HTMLElement {
    const line = el('div', { className: `ls-event ls-l${e.layer}` });
    const cells: [string, string][] = [
      ['ls-ev-time', clock(e.ts)],
      ['ls-ev-layer', `L${e.layer}`],
      ['ls-ev-type', e.type],
      ['ls-ev-stage', e.stage],
      ['ls-ev-worker', e.worker],
      ['ls-ev-msg', e.message]
    ];
    for (const [className, text] of cells) {
      el('span', { className, text }, line);
    }
    line.title = `#${e.seq} ${e.type} ${e.stage} ${e.worker}\n${e.message}`;
    line.tabIndex = 0;
    line.setAttribute('role', 'button');
    const open = this._open;
    const mark = () => {
      line.classList.toggle('ls-open', open.has(e.seq));
      line.setAttribute('aria-expanded', open.has(e.seq) ? 'true' : 'false');
    };
    const toggle = () => {
      if (!open.delete(e.seq)) {
        open.add(e.seq);
      }
      mark();
    };
    mark();
    line.addEventListener('click', toggle);
    line.addEventListener('keydown', ev => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        toggle();
      }
    });
    return line;
  }

  private _events: IEventRow[] = [];
  private _seen = new Set<number>();
  private _open = new Set<number>();
  private _skipped = 0;
  private _total = 0;
  private _pending = false;
}

export default { render };
