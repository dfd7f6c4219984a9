/**
 * `lightscientist:open-notebook-cell` (args `path`, `cell`): open a notebook and make the cell
 * with that nbformat id the active one, scrolled into view — where a number of the paper was
 * printed (`lightscientist check` traces it to the cell).
 *
 * `path` is relative to the server root, or absolute under it: the kernel that draws a link
 * knows the workspace's absolute path, not the server root, so the command makes it relative
 * here. The links are `data-commandlinker-*` buttons in a kernel's output
 * (`jupyter/provenance_links.py`), which JupyterLab's command linker runs on a click.
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import type { IDocumentManager } from '@jupyterlab/docmanager';

import { OPEN_CELL } from './checks';

export { OPEN_CELL };

/** What of JupyterLab's `Notebook` the command needs (no dependency on the package). */
interface INotebookCells {
  widgets: ReadonlyArray<{ model: { id: string } }>;
  activeCellIndex: number;
  node: HTMLElement;
  scrollToItem?(index: number, align?: string): Promise<void>;
}

const LAYOUT_WAIT_MS = 3000;

function nextFrame(): Promise<void> {
  return new Promise(resolve => requestAnimationFrame(() => resolve()));
}

/** Resolves once `node` has a height: Lumino lays out a panel just opened or revealed a
 * frame or more later, and a scroll asked before that has no viewport to move (on a busy
 * machine the notebook stayed at its top, its active cell out of view). */
async function laidOut(node: HTMLElement): Promise<void> {
  const started = performance.now();
  while (
    node.clientHeight === 0 &&
    performance.now() - started < LAYOUT_WAIT_MS
  ) {
    await nextFrame();
  }
  await nextFrame();
}

interface INotebookPanelLike {
  content: INotebookCells;
  context: { ready: Promise<void> };
  revealed?: Promise<void>;
}

function isNotebookPanel(value: unknown): value is INotebookPanelLike {
  const panel = value as Partial<INotebookPanelLike> | null;
  return (
    !!panel &&
    !!panel.context &&
    !!panel.content &&
    Array.isArray((panel.content as Partial<INotebookCells>).widgets)
  );
}

/** `path` relative to the server root (an absolute one under it made relative). */
export function serverPath(path: string, serverRoot: string): string {
  const root = serverRoot.replace(/\/+$/, '');
  if (!path.startsWith('/')) {
    return path;
  }
  if (root && (path === root || path.startsWith(`${root}/`))) {
    return path.slice(root.length + 1);
  }
  return path.replace(/^\/+/, '');
}

async function ask(label: string): Promise<string> {
  const answer = await InputDialog.getText({ title: label });
  return answer.button.accept ? (answer.value ?? '').trim() : '';
}

/** Open `path` and activate its cell `cell`; an error dialog names what is missing. */
export async function openNotebookCell(
  app: JupyterFrontEnd,
  docManager: IDocumentManager,
  path: string,
  cell: string
): Promise<boolean> {
  const rel = serverPath(path, PageConfig.getOption('serverRoot'));
  const widget: unknown = docManager.openOrReveal(rel, 'Notebook');
  if (!isNotebookPanel(widget)) {
    await showErrorMessage(
      'LightScientist',
      `${rel} cannot be opened as a notebook.`
    );
    return false;
  }
  await widget.context.ready;
  await widget.revealed;
  const notebook = widget.content;
  const index = notebook.widgets.findIndex(c => c.model.id === cell);
  if (index < 0) {
    const ids = notebook.widgets.map(c => c.model.id).join(', ');
    await showErrorMessage(
      'LightScientist',
      `${rel} has no cell ${cell} (its cells: ${ids || 'none'}).`
    );
    return false;
  }
  notebook.activeCellIndex = index;
  app.shell.activateById((widget as unknown as { id: string }).id);
  await laidOut(notebook.node);
  await notebook.scrollToItem?.(index, 'center');
  return true;
}

const ARGS = {
  args: {
    type: 'object' as const,
    properties: {
      path: {
        type: 'string' as const,
        description:
          'The notebook: relative to the server root, or absolute under it'
      },
      cell: {
        type: 'string' as const,
        description: 'The cell id (nbformat 4.5)'
      }
    }
  }
};

/** Register the command (asking for the path and the cell when the palette runs it). */
export function addOpenCellCommand(
  app: JupyterFrontEnd,
  docManager: IDocumentManager,
  category: string,
  palette: {
    addItem(item: { command: string; category: string }): unknown;
  } | null
): void {
  app.commands.addCommand(OPEN_CELL, {
    describedBy: ARGS,
    label: args =>
      args.cell
        ? `LightScientist: Open Notebook at Cell ${String(args.cell)}`
        : 'LightScientist: Open Notebook at Cell…',
    caption:
      'Open a notebook scrolled to one cell (where a number was printed)',
    execute: async args => {
      const path = args.path ? String(args.path) : await ask('Notebook path');
      const cell =
        path && (args.cell ? String(args.cell) : await ask('Cell id'));
      return path && cell
        ? openNotebookCell(app, docManager, path, cell)
        : false;
    }
  });
  palette?.addItem({ command: OPEN_CELL, category });
}
