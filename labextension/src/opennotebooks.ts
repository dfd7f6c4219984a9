/**
 * The notebooks this page has open, told to the server, and the changes workers hand them.
 *
 * A worker's notebook tool never rewrites a notebook the researcher has open: JupyterLab
 * would hold an older copy ("File Changed" on the next save), and with real-time
 * collaboration the server would reload the file into the shared document and drop what
 * the researcher typed. So this page reports its open notebooks every second (every five
 * while hidden) to `POST open-notebooks`, whose answer carries the changes waiting for them.
 * Each change is applied cell by cell to the open model, in one transaction, and saved by
 * JupyterLab; `POST notebook-change` tells the worker how it went. The researcher's unsaved
 * edits of other cells stay; a change to a cell the researcher has edited and not saved is
 * refused as a conflict, naming the cells, and nothing is changed.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type { IDocumentManager } from '@jupyterlab/docmanager';
import type * as nbformat from '@jupyterlab/nbformat';
import type { ISharedNotebook, SharedCell } from '@jupyter/ydoc';
import { UUID } from '@lumino/coreutils';

import type { IPageChange } from './answers';
import { api } from './api';

const VISIBLE_EVERY_MS = 1000;
const HIDDEN_EVERY_MS = 5000;

type Cell = nbformat.ICell;

/** A cell's text, whether nbformat wrote it as one string or as lines. */
function text(source: nbformat.MultilineString | undefined): string {
  return Array.isArray(source) ? source.join('') : (source ?? '');
}

/** What a worker's change of a cell is measured by: its kind, text and outputs. */
function content(cell: Cell): string {
  return JSON.stringify([
    cell.cell_type,
    text(cell.source),
    cell.outputs ?? null,
    cell.execution_count ?? null
  ]);
}

/** Whether the researcher's cell still reads as the file did (kind and text). */
function unchanged(mine: Cell, base: Cell): boolean {
  return (
    mine.cell_type === base.cell_type && text(mine.source) === text(base.source)
  );
}

function indexOf(notebook: ISharedNotebook, id: string): number {
  return notebook.cells.findIndex(cell => cell.id === id);
}

/**
 * Apply the change from `base` to `next` over the open notebook: the cells the worker
 * deleted, changed or added, and its metadata. Returns the ids of the cells the researcher
 * has edited too (nothing is then changed).
 */
export function applyChange(
  notebook: ISharedNotebook,
  base: nbformat.INotebookContent | null,
  next: nbformat.INotebookContent
): string[] {
  if (!base) {
    notebook.transact(() => notebook.fromJSON(next));
    return [];
  }
  const before = new Map(base.cells.map(cell => [String(cell.id), cell]));
  const after = new Map(next.cells.map(cell => [String(cell.id), cell]));
  const touched = (id: string) => {
    const was = before.get(id);
    const will = after.get(id);
    return !was || !will || content(was) !== content(will);
  };
  const open = new Set(notebook.cells.map(cell => cell.id));
  const conflicts = [
    // a cell the researcher edited that the worker changed or deleted
    ...notebook.cells
      .map(cell => cell.toJSON() as Cell)
      .filter(mine => {
        const id = String(mine.id);
        const was = before.get(id);
        return was && !unchanged(mine, was) && touched(id);
      })
      .map(mine => String(mine.id)),
    // a cell the researcher deleted that the worker changed
    ...[...before.keys()].filter(
      id => !open.has(id) && after.has(id) && touched(id)
    )
  ];
  if (conflicts.length) {
    return conflicts;
  }
  notebook.transact(() => {
    for (let i = notebook.cells.length - 1; i >= 0; i--) {
      const id = notebook.cells[i].id;
      if (before.has(id) && !after.has(id)) {
        notebook.deleteCell(i);
      }
    }
    let previous = -1;
    for (const cell of next.cells) {
      const id = String(cell.id);
      const at = indexOf(notebook, id);
      if (at < 0) {
        if (before.has(id)) {
          continue; // the researcher deleted it, and the worker left it as it was
        }
        previous += 1;
        notebook.insertCell(previous, cell as SharedCell.Cell);
        continue;
      }
      previous = at;
      if (!touched(id)) {
        continue;
      }
      const shared = notebook.cells[at];
      if (shared.cell_type !== cell.cell_type) {
        notebook.deleteCell(at);
        notebook.insertCell(at, cell as SharedCell.Cell);
      } else {
        shared.setSource(text(cell.source));
        if (cell.cell_type === 'code' && shared.cell_type === 'code') {
          const code = shared as unknown as {
            setOutputs(outputs: nbformat.IOutput[]): void;
            execution_count: nbformat.ExecutionCount;
          };
          code.setOutputs((cell.outputs as nbformat.IOutput[]) ?? []);
          code.execution_count =
            cell.execution_count as nbformat.ExecutionCount;
        }
      }
    }
    if (JSON.stringify(base.metadata) !== JSON.stringify(next.metadata)) {
      notebook.setMetadata(next.metadata);
    }
  });
  return [];
}

/** "cell 'load'", "cells 'load' and 'plot'". */
export function cellWords(ids: string[]): string {
  const quoted = ids.map(id => `'${id}'`);
  if (quoted.length === 1) {
    return `cell ${quoted[0]}`;
  }
  return `cells ${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

/** Keeps the server told of this page's open notebooks; applies what workers hand them. */
export class OpenNotebooks {
  constructor(
    private readonly _app: JupyterFrontEnd,
    private readonly _docManager: IDocumentManager
  ) {
    const tick = () => {
      void this._tick().finally(() => {
        const every = document.hidden ? HIDDEN_EVERY_MS : VISIBLE_EVERY_MS;
        this._timer = window.setTimeout(tick, every);
      });
    };
    this._timer = window.setTimeout(tick, VISIBLE_EVERY_MS);
  }

  dispose(): void {
    window.clearTimeout(this._timer);
  }

  /** The open notebooks' contexts by path, relative to the server root. */
  private _open(): Map<string, DocumentRegistry.Context> {
    const open = new Map<string, DocumentRegistry.Context>();
    for (const widget of this._app.shell.widgets('main')) {
      const context = this._docManager.contextForWidget(widget);
      const path = context?.localPath ?? context?.path;
      if (context && path?.endsWith('.ipynb') && context.isReady) {
        open.set(path, context);
      }
    }
    return open;
  }

  private async _tick(): Promise<void> {
    const open = this._open();
    if (!open.size && !this._told) {
      return; // nothing open now, nor at the last report
    }
    let changes: IPageChange[];
    try {
      changes = (await api.openNotebooks(this._page, [...open.keys()])).changes;
    } catch {
      return; // the server is away or older: try again at the next tick
    }
    this._told = open.size > 0;
    for (const change of changes) {
      await this._apply(change, this._open().get(change.path));
    }
  }

  private async _apply(
    change: IPageChange,
    context: DocumentRegistry.Context | undefined
  ): Promise<void> {
    let outcome = 'saved';
    let detail = '';
    try {
      if (!context) {
        throw new Error('the notebook was closed meanwhile');
      }
      const conflicts = applyChange(
        context.model.sharedModel as unknown as ISharedNotebook,
        change.base as nbformat.INotebookContent | null,
        change.next as unknown as nbformat.INotebookContent
      );
      if (conflicts.length) {
        outcome = 'conflict';
        detail = cellWords(conflicts);
      } else {
        await context.save();
      }
    } catch (error) {
      outcome = 'failed';
      detail = error instanceof Error ? error.message : String(error);
    }
    try {
      await api.notebookChange(change.project, change.id, outcome, detail);
    } catch {
      // the worker gave up waiting: it says so itself
    }
  }

  private readonly _page = UUID.uuid4();
  private _told = false;
  private _timer: number;
}
