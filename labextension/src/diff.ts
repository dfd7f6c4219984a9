/**
 * Beside each file under review at a gate: what changed since the last approved state
 * (new, changed, removed), with the changed lines as a unified diff — a Markdown file drawn
 * as it reads, its insertions and deletions marked, with the source diff a click away. The
 * server computes it from the workspace's history (`detail.gate_diff`, built by
 * `jupyter/diff_card.py` and `jupyter/markdown_diff.py`); the panel only draws it.
 */

import { Sanitizer } from '@jupyterlab/apputils';

import type { IFileDiff } from './answers';
import { el, focusable } from './dom';

const sanitizer = new Sanitizer();

/** A diff of at most this many lines is shown unfolded; a longer one folds to its line. */
const SHORT_DIFF = 8;

/** Append the diff of each file to `node` under the line `title` (nothing when there is
 * no file). */
export function renderDiffs(
  node: HTMLElement,
  diffs: IFileDiff[] | undefined,
  title = 'What changed since the last approval'
): void {
  if (!diffs || diffs.length === 0) {
    return;
  }
  const box = el('div', { className: 'ls-diff-card' }, node);
  el('p', { text: title }, box);
  for (const diff of diffs) {
    const file = el('details', { className: 'ls-diff-file' }, box);
    file.dataset.path = diff.path;
    file.dataset.status = diff.status;
    const counted = diff.summary ? ` · ${diff.summary}` : '';
    el('summary', { text: `${diff.path} — ${diff.status}${counted}` }, file);
    if (diff.lines.length === 0) {
      continue;
    }
    file.open = diff.lines.length <= SHORT_DIFF || !!diff.rendered; // read at once
    let source: HTMLElement = file;
    if (diff.rendered) {
      // escaped and marked by the server; sanitized again here before it is drawn
      const shown = el('div', { className: 'ls-diff-rendered' }, file);
      shown.innerHTML = sanitizer.sanitize(diff.rendered);
      focusable(shown, `${diff.path} as it reads`);
      source = el('details', { className: 'ls-diff-source' }, file);
      el('summary', { text: 'Source diff' }, source);
    }
    const pre = el('pre', { className: 'ls-diff-text' }, source);
    pre.tabIndex = 0; // it scrolls: focusable, so that the keyboard scrolls it too
    pre.setAttribute('aria-label', `diff of ${diff.path}`);
    for (const line of diff.lines) {
      el('div', { className: `ls-diff-${lineKind(line)}`, text: line }, pre);
    }
  }
}

/** A unified diff line's class, as `diff_card.line_kind`: file names and hunk ranges are
 * `head`, then `add`, `del` or `ctx`. */
export function lineKind(line: string): string {
  if (/^(\+\+\+ |--- |@@)/.test(line)) {
    return 'head';
  }
  return line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
}
