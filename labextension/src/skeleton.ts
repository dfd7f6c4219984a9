/**
 * The notebook dashboard's "Insert a skeleton cell below"
 * (`jupyter/dashboard/handoff_card.py`). The click reaches the kernel as a comm message, where `set_next_input` does nothing, so the
 * kernel answers with an output of `CELL_MIME` (`{code, id, at}`) and this renderer puts the
 * code into a new code cell below the notebook cell that shows the output — once per `id`,
 * and only for a fresh bundle, so a notebook opened again inserts nothing. Where there is
 * no such cell (an output view of its own), the code is shown to copy.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { IRenderMime } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { el } from './dom';

export const CELL_MIME = 'application/vnd.lightscientist.cell+json';
/** A bundle older than this (seconds) is shown, not inserted. */
const FRESH_S = 300;
/** The ids already inserted, across reloads of the page. */
const DONE_KEY = 'lightscientist:inserted-cells';
const KEEP_IDS = 50;

interface ICellBundle {
  code: string;
  id: string;
  at: number;
}

/** What of JupyterLab's `Notebook` the insert needs (no dependency on the package). */
interface INotebookLike {
  widgets: ReadonlyArray<{ node: HTMLElement }>;
  activeCellIndex: number;
  model: {
    sharedModel: {
      insertCell(
        index: number,
        cell: { cell_type: 'code'; source: string }
      ): unknown;
    };
  } | null;
}

function isNotebook(value: unknown): value is INotebookLike {
  const notebook = value as Partial<INotebookLike> | null;
  return (
    !!notebook &&
    Array.isArray(notebook.widgets) &&
    'activeCellIndex' in notebook
  );
}

function doneIds(): string[] {
  try {
    const ids = JSON.parse(window.localStorage.getItem(DONE_KEY) ?? '[]');
    return Array.isArray(ids) ? ids.map(String) : [];
  } catch {
    return [];
  }
}

function markDone(id: string): void {
  const ids = [...doneIds().filter(known => known !== id), id].slice(-KEEP_IDS);
  try {
    window.localStorage.setItem(DONE_KEY, JSON.stringify(ids));
  } catch {
    // storage refused (a private window): the id is still kept for this page
  }
}

const insertedHere = new Set<string>();

export class SkeletonRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly _app: JupyterFrontEnd) {
    super();
    this.addClass('ls-skeleton-output');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const bundle = model.data[CELL_MIME] as unknown as ICellBundle | undefined;
    this._bundle = bundle && typeof bundle.code === 'string' ? bundle : null;
    this._say('', '');
    if (this.isAttached) {
      this._insert();
    }
  }

  protected onAfterAttach(): void {
    this._insert();
  }

  /** The notebook and the index of its cell that holds this output, or null. */
  private _holder(): { notebook: INotebookLike; index: number } | null {
    for (const widget of this._app.shell.widgets('main')) {
      const content: unknown = (widget as Widget & { content?: unknown })
        .content;
      if (!widget.node.contains(this.node) || !isNotebook(content)) {
        continue;
      }
      const index = content.widgets.findIndex(cell =>
        cell.node.contains(this.node)
      );
      if (index >= 0 && content.model) {
        return { notebook: content, index };
      }
    }
    return null;
  }

  private _insert(): void {
    const bundle = this._bundle;
    if (!bundle || this._handled) {
      return;
    }
    this._handled = true;
    const id = String(bundle.id);
    const fresh = Math.abs(Date.now() / 1000 - Number(bundle.at)) < FRESH_S;
    if (insertedHere.has(id) || doneIds().includes(id) || !fresh) {
      this._say('The skeleton cell was inserted below.', '');
      return;
    }
    const holder = this._holder();
    if (!holder) {
      this._say('Copy the skeleton into a cell:', bundle.code);
      return;
    }
    const { notebook, index } = holder;
    notebook.model!.sharedModel.insertCell(index + 1, {
      cell_type: 'code',
      source: bundle.code
    });
    notebook.activeCellIndex = index + 1;
    insertedHere.add(id);
    markDone(id);
    this.node.dataset.inserted = 'true';
    this._say('Inserted the skeleton as a new cell below.', '');
  }

  private _say(text: string, code: string): void {
    this.node.textContent = '';
    if (text) {
      el('p', { className: 'ls-skeleton-note', text }, this.node);
    }
    if (code) {
      el('pre', { text: code }, this.node);
    }
  }

  private _bundle: ICellBundle | null = null;
  private _handled = false;
}

/** The factory `index.ts` adds to the app's renderers (trusted outputs only). */
export function skeletonFactory(
  app: JupyterFrontEnd
): IRenderMime.IRendererFactory {
  return {
    safe: false,
    mimeTypes: [CELL_MIME],
    defaultRank: 0,
    createRenderer: () => new SkeletonRenderer(app)
  };
}
