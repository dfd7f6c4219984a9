/**
 * Word of any project under the server root, even with the panel closed: a JupyterLab
 * notification when a project comes to a gate (or a question) or fails, and the count of
 * waiting decisions on the sidebar tab (`data-ls-waiting`, drawn by the style sheet).
 *
 * It asks the server for the list every few seconds; the first answer only sets what is
 * known (a page opened on a waiting project does not announce it again).
 */

import { Notification } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import type { IProjectSummary } from './answers';
import { api } from './api';
import { shownPath } from './dom';

const EVERY_MS = 4000;

/** What is worth a notification about a project now ('' for nothing). */
function mark(project: IProjectSummary): string {
  if (project.pending) {
    return `pending:${project.pending.id}`;
  }
  return project.status === 'failed' ? 'failed' : '';
}

/** Watch the projects; returns a function that stops watching. */
export function watchProjects(
  panel: Widget,
  open: (path: string) => void
): () => void {
  let known: Map<string, string> | null = null;
  const tick = async () => {
    let projects: IProjectSummary[];
    try {
      projects = (await api.projects()).projects;
    } catch {
      return; // the panel shows the server's errors; the watcher stays quiet
    }
    const now = new Map(projects.map(p => [p.path, mark(p)]));
    if (known !== null) {
      for (const project of projects) {
        const what = now.get(project.path) ?? '';
        if (what && what !== known.get(project.path)) {
          announce(project, open);
        }
      }
    }
    known = now;
    const waiting = projects.filter(p => p.pending && !p.error).length;
    panel.title.dataset = {
      ...panel.title.dataset,
      'ls-waiting': String(waiting) // Lumino writes it as data-ls-waiting
    };
    panel.title.caption = waiting
      ? `LightScientist: ${waiting} waiting for you`
      : 'LightScientist';
  };
  void tick();
  const timer = window.setInterval(() => void tick(), EVERY_MS);
  return () => window.clearInterval(timer);
}

function announce(
  project: IProjectSummary,
  open: (path: string) => void
): void {
  const where = shownPath(project.path);
  const actions = [
    {
      label: 'Show',
      callback: () => open(project.path),
      displayType: 'accent' as const
    }
  ];
  if (project.pending) {
    const what =
      project.pending.kind === 'gate'
        ? `waits for you at ${project.pending.stage}`
        : `asks you a question at ${project.pending.stage}`;
    Notification.warning(`LightScientist: ${where} ${what}`, {
      autoClose: false,
      actions
    });
  } else {
    Notification.error(
      `LightScientist: ${where} failed at ${project.stage ?? '?'}`,
      { autoClose: false, actions }
    );
  }
}
