/**
 * The panel's two lists: the projects under the server root and a project's event tail.
 */

import type { IEventRecord, IProjectSummary } from './answers';
import { el, shownPath, statusWords } from './dom';

const EMPTY_TEXT =
  'No LightScientist projects under the server root yet. Start one with ' +
  '`%lightscientist research "…"` in a notebook or `lightscientist research "…"` ' +
  'in a terminal.';

/** Fill `list` with one entry per project; a click (or Enter) selects one. */
export function renderProjectList(
  list: HTMLElement,
  projects: readonly IProjectSummary[],
  selected: string | null,
  onSelect: (path: string) => void
): void {
  list.textContent = '';
  if (!projects.length) {
    el('li', { className: 'ls-empty', text: EMPTY_TEXT }, list);
    return;
  }
  for (const project of projects) {
    const item = el(
      'li',
      { className: 'ls-project', title: project.goal ?? project.error },
      list
    );
    item.dataset.path = project.path;
    item.setAttribute('role', 'option'); // the list is a listbox: one project selected
    item.setAttribute('aria-selected', String(project.path === selected));
    item.tabIndex = 0;
    el(
      'span',
      { className: 'ls-project-name', text: shownPath(project.path) },
      item
    );
    if (project.error) {
      el(
        'span',
        { className: 'ls-badge ls-badge-error', text: 'unreadable' },
        item
      );
    } else {
      if (project.stage) {
        el('span', { className: 'ls-badge', text: project.stage }, item); // none while starting
      }
      const status = el(
        'span',
        {
          className: 'ls-badge ls-project-status',
          text: statusWords(project.status)
        },
        item
      );
      status.dataset.status = project.status ?? '';
    }
    item.addEventListener('click', () => onSelect(project.path));
    item.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        onSelect(project.path);
      }
    });
  }
}

/** Add `events` at the end of `list`, keeping its newest `keep` entries. */
export function appendEvents(
  list: HTMLElement,
  events: IEventRecord[],
  keep: number
): void {
  if (!events.length) {
    return;
  }
  // follow the tail only when the reader is already at the bottom
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
  for (const event of events) {
    const item = el('li', { className: 'ls-event' }, list);
    item.dataset.seq = String(event.seq);
    item.dataset.layer = String(event.layer);
    const time = new Date(event.ts * 1000).toLocaleTimeString();
    el('span', { className: 'ls-event-seq', text: `#${event.seq}` }, item);
    el('span', { className: 'ls-event-time', text: time }, item);
    el('span', { className: 'ls-event-type', text: event.type }, item);
    el('span', { className: 'ls-event-message', text: event.message }, item);
    if (event.worker_id) {
      const stage = event.stage ? ` · ${event.stage}` : '';
      item.title = `worker ${event.worker_id}${stage}`;
    }
  }
  while (list.childElementCount > keep) {
    list.firstElementChild!.remove();
  }
  if (atBottom) {
    list.scrollTop = list.scrollHeight;
  }
}
