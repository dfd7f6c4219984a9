/**
 * Beside each file under review at a gate: what changed since the last approved state
 * (new, changed, removed), folded to a line with its counts (+54 −3). A text file's changed
 * lines as a unified diff; a Markdown file drawn as it reads, its insertions and deletions
 * marked, with the source diff a click away; a notebook cell by cell (source, printed
 * outputs, images before and after); a small CSV as its changed rows; an image before and
 * after. The kernel or the server computes it (`jupyter/diff_card.py`); this module only
 * draws it, for the side panel and the dashboard's gate widget alike, and imports nothing of
 * JupyterLab's (the widget's module cannot reach it): the caller hands in how rendered HTML
 * is sanitized.
 */

import type { ICellDiff, ICsvDiff, IDiffImages, IFileDiff } from './answers';
import { el, focusable } from './dom';

/** A diff of at most this many lines is shown unfolded; a longer one folds to its line. */
const SHORT_DIFF = 8;

/** How rendered Markdown (escaped and marked by the server) is made safe to draw. */
export type Clean = (html: string) => string;

/** A `Clean` that keeps no markup: the HTML is shown as its text. */
export function asText(html: string): string {
  const box = document.createElement('div');
  box.textContent = html;
  return box.innerHTML;
}

/** Append the diff of each file to `node` under the line `title` (nothing when there is
 * no file). */
export function renderDiffs(
  node: HTMLElement,
  diffs: IFileDiff[] | undefined,
  clean: Clean,
  title = 'What changed since the last approval'
): void {
  if (!diffs || diffs.length === 0) {
    return;
  }
  const box = el('div', { className: 'ls-diff-card' }, node);
  el('p', { text: title }, box);
  for (const diff of diffs) {
    renderFile(box, diff, clean);
  }
}

function renderFile(box: HTMLElement, diff: IFileDiff, clean: Clean): void {
  const file = el('details', { className: 'ls-diff-file' }, box);
  file.dataset.path = diff.path;
  file.dataset.status = diff.status;
  const counted = diff.summary ? ` · ${diff.summary}` : '';
  el('summary', { text: `${diff.path} — ${diff.status}${counted}` }, file);
  if (diff.status === 'removed') {
    el('p', { className: 'ls-muted', text: 'the file was removed' }, file);
    return;
  }
  if (diff.cells) {
    file.open = true; // a notebook's cells are the change itself
    for (const cell of diff.cells) {
      renderCell(file, cell);
    }
  } else if (diff.images) {
    file.open = true;
    renderImages(file, diff.images);
  } else if (diff.table) {
    file.open = true;
    renderTable(file, diff.path, diff.table);
  } else if (diff.rendered) {
    file.open = true; // read at once
    const shown = el('div', { className: 'ls-diff-rendered' }, file);
    shown.innerHTML = clean(diff.rendered);
    focusable(shown, `${diff.path} as it reads`);
    const source = el('details', { className: 'ls-diff-source' }, file);
    el('summary', { text: 'Source diff' }, source);
    renderLines(source, diff.lines, `diff of ${diff.path}`);
  } else if (diff.lines.length) {
    file.open = diff.lines.length <= SHORT_DIFF;
    renderLines(file, diff.lines, `diff of ${diff.path}`);
  }
}

function renderCell(file: HTMLElement, cell: ICellDiff): void {
  const box = el('div', { className: 'ls-diff-cell' }, file);
  box.dataset.cell = cell.id;
  box.dataset.kind = cell.kind;
  const title = el('p', { className: 'ls-diff-cell-title' }, box);
  el('b', { text: `cell ${cell.id}` }, title);
  title.append(` (${cell.type}) — ${cell.how}`);
  if (cell.source.length) {
    renderLines(box, cell.source, `source of cell ${cell.id}`);
  }
  if (cell.outputs.length) {
    renderLines(box, cell.outputs, `outputs of cell ${cell.id}`);
  }
  if (cell.images) {
    renderImages(box, cell.images);
  }
}

/** Unified diff lines as a scrolling block, each line classed by `lineKind`. */
function renderLines(parent: HTMLElement, lines: string[], label: string) {
  const pre = el('pre', { className: 'ls-diff-text' }, parent);
  pre.tabIndex = 0; // it scrolls: focusable, so that the keyboard scrolls it too
  pre.setAttribute('aria-label', label);
  for (const line of lines) {
    el('div', { className: `ls-diff-${lineKind(line)}`, text: line }, pre);
  }
}

function renderImages(parent: HTMLElement, images: IDiffImages): void {
  const row = el('div', { className: 'ls-diff-images' }, parent);
  for (const [label, urls] of [
    ['before', images.before],
    ['after', images.after]
  ] as const) {
    const figure = el('figure', {}, row);
    for (const url of urls) {
      const img = el('img', {}, figure);
      img.src = url;
      img.alt = label;
    }
    el('figcaption', { text: urls.length ? label : `${label}: none` }, figure);
  }
}

function renderTable(parent: HTMLElement, path: string, table: ICsvDiff) {
  const grid = el('table', { className: 'ls-diff-csv' }, parent);
  grid.tabIndex = 0;
  grid.setAttribute('aria-label', `changed rows of ${path}`);
  const head = el('tr', {}, grid);
  for (const name of ['', ...table.header]) {
    el('th', { text: name }, head);
  }
  for (const [kind, ...cells] of table.rows) {
    const row = el('tr', { className: `ls-diff-${kind}` }, grid);
    el('td', { text: kind === 'add' ? '+' : '−' }, row);
    for (const cell of cells) {
      el('td', { text: cell }, row);
    }
  }
}

/** A unified diff line's class, as `notebook_view.line_kind`: file names and hunk ranges
 * are `head`, then `add`, `del` or `ctx`. */
export function lineKind(line: string): string {
  if (/^(\+\+\+ |--- |@@)/.test(line)) {
    return 'head';
  }
  return line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
}
