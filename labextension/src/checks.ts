/**
 * At a gate whose stage checks the paper's numbers: each notebook cell with the numbers it
 * printed (a button opens the notebook at that cell), then any number no result file holds.
 * Computed by the kernel or the server (`jupyter/provenance_links.py` `gate_checks`); drawn
 * here for the side panel and the dashboard's gate widget alike (no JupyterLab import: the
 * caller says how a button opens its cell).
 */

import type { IGateChecks } from './answers';
import { el } from './dom';

/** The command that opens a notebook at a cell (`cells.ts`). */
export const OPEN_CELL = 'lightscientist:open-notebook-cell';

/** Make `button` open `path` (a notebook) at cell `cell`. */
export type CellOpener = (
  button: HTMLElement,
  path: string,
  cell: string
) => void;

/** Shown of a cell's numbers before "and N more". */
const NUMBERS_SHOWN = 8;

export function renderChecks(
  node: HTMLElement,
  checks: IGateChecks | null | undefined,
  opener: CellOpener
): void {
  if (!checks || (!checks.cells.length && !checks.unresolved.length)) {
    return;
  }
  const section = el('div', { className: 'ls-gate-checks' }, node);
  el('h4', { text: "The paper's numbers and their cells" }, section);
  const list = el('ul', {}, section);
  for (const traced of checks.cells) {
    const item = el('li', {}, list);
    const button = el(
      'button',
      {
        className: 'ls-link ls-cell-link',
        text: `${traced.path.split('/').pop()} · cell ${traced.cell}`,
        title: `Open ${traced.path} at cell ${traced.cell}`
      },
      item
    );
    button.type = 'button';
    opener(button, traced.path, traced.cell);
    const shown = traced.numbers.slice(0, NUMBERS_SHOWN).join(', ');
    const more =
      traced.numbers.length > NUMBERS_SHOWN
        ? ` and ${traced.numbers.length - NUMBERS_SHOWN} more`
        : '';
    el('span', { text: `: ${shown}${more}` }, item);
  }
  for (const line of checks.unresolved) {
    el('li', { className: 'ls-unresolved', text: `not traced: ${line}` }, list);
  }
}
