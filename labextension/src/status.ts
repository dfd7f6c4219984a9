/**
 * The status-bar item: the project that needs the researcher — the most recent pending
 * decision across the projects under the server root — else the one the current notebook's
 * kernel runs, else the one selected in the side panel. It follows the project watcher
 * (`notify.ts`, about once a second), so it is right from the moment JupyterLab starts,
 * whether the panel was ever opened or not. A click opens the panel on that project.
 */

import { Widget } from '@lumino/widgets';

import type { IProjectSummary } from './answers';
import { shownPath, statusWords } from './dom';
import { pendingWords } from './notify';

/** The project the status bar names, or null. */
export function projectToShow(
  projects: readonly IProjectSummary[],
  notebookKernel: string | null,
  selected: string | null
): IProjectSummary | null {
  const waiting = projects
    .filter(p => p.pending && !p.error)
    .sort((a, b) => b.pending!.requested_at - a.pending!.requested_at);
  if (waiting.length) {
    return waiting[0];
  }
  const own = notebookKernel
    ? projects.find(p => p.runner?.kernel === notebookKernel)
    : undefined;
  return own ?? projects.find(p => p.path === selected) ?? null;
}

/** What the item says of `project`. */
export function statusText(project: IProjectSummary): string {
  const name = project.name || shownPath(project.path);
  if (project.error) {
    return `LightScientist: ${name} cannot be read`;
  }
  if (project.pending) {
    return `LightScientist: ${name} ${pendingWords(project)}`;
  }
  if (project.status === 'done' || project.stage === project.status) {
    return `LightScientist: ${name} · ${statusWords(project.status)}`;
  }
  return `LightScientist: ${name} · ${project.stage ?? '?'} · ${statusWords(project.status)}`;
}

export class StageStatus extends Widget {
  constructor(onClick: (path: string | null) => void) {
    super();
    this.addClass('ls-StatusItem');
    this.node.setAttribute('role', 'button');
    this.node.tabIndex = 0;
    this.node.addEventListener('click', () => onClick(this._path));
    this.node.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        onClick(this._path);
      }
    });
    this.showProject(null, 0);
  }

  /** Show `project` (null: none); `count` projects are known under the server root. */
  showProject(project: IProjectSummary | null, count: number): void {
    this._path = project?.path ?? null;
    if (!project) {
      this.node.textContent = count ? 'LightScientist' : '';
      this.node.title = 'LightScientist: open the side panel';
      delete this.node.dataset.status;
      delete this.node.dataset.path;
      return;
    }
    this.node.textContent = statusText(project);
    this.node.title =
      `${project.goal ?? ''}\nClick to show it in the LightScientist panel`.trim();
    this.node.dataset.status = project.status ?? '';
    this.node.dataset.path = project.path;
  }

  private _path: string | null = null;
}
