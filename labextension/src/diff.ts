/**
 * Beside each file under review at a gate: what changed since the last approved state
 * (new, changed, removed), with the changed lines as a unified diff. The server computes it
 * from the workspace's history (`detail.gate_diff`, built by `jupyter/diff_card.py`); the
 * panel only draws it, as text.
 */

import type { IFileDiff } from './answers';
import { el } from './dom';

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
    file.open = diff.lines.length <= SHORT_DIFF; // a short diff is read at once
    const pre = el('pre', { className: 'ls-diff-text' }, file);
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
