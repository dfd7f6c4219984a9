/**
 * What a stage's visit was given from the user's memory of projects: each entry's kind, the
 * project it came from and its text. The panel's gate form and the dashboard's gate card
 * draw it with this one function.
 */

import type { IRecalledEntry } from './answers';
import { el } from './dom';

/** A section listing `recalled` at the end of `node` (nothing when it is empty). */
export function renderRecalled(
  node: HTMLElement,
  recalled: IRecalledEntry[]
): void {
  if (!recalled.length) {
    return;
  }
  const section = el('section', { className: 'ls-recalled' }, node);
  section.setAttribute('aria-label', 'Recalled from memory');
  el(
    'h4',
    { className: 'ls-recalled-title', text: 'Recalled from memory' },
    section
  );
  const list = el('ul', {}, section);
  for (const entry of recalled) {
    const item = el('li', {}, list);
    item.dataset.entry = String(entry.id);
    el('span', { className: 'ls-badge', text: entry.kind }, item);
    el(
      'span',
      { className: 'ls-muted ls-recalled-project', text: entry.project },
      item
    );
    el('span', { className: 'ls-recalled-text', text: entry.text }, item);
  }
}
