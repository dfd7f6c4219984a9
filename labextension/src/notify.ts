/**
 * Word of any project under the server root, even with the panel closed: the list of
 * projects, fetched about once a second, for the status-bar item; the count of waiting
 * decisions on the sidebar tab (`data-ls-waiting`, drawn by the style sheet); and JupyterLab
 * notifications that live exactly as long as what they say.
 *
 * A notification stands for one thing a project is at: a pending decision (by its id), or
 * its end (done, failed). When the project moves on — the decision answered from any door,
 * another stage reached — the notification is dismissed and, when there is news, the next
 * one takes its place: at most one per project, never one that is no longer true. The first
 * answer only sets what is known (a page opened on a waiting project does not announce it
 * again; the status bar and the sidebar badge say it).
 */

import { Notification } from '@jupyterlab/apputils';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { IProjectSummary } from './answers';
import { api } from './api';
import { RAISE_BY, raisedLimit, shown } from './budget';
import { ProjectCommandIDs } from './commands';
import { shownPath } from './dom';

const PREFIX = 'LightScientist:';
const VISIBLE_EVERY_MS = 1000;
const TICK_MS = 250;
const HIDDEN_EVERY_MS = 5000;

/** What is worth a notification about a project now ('' for nothing). */
export function newsKey(project: IProjectSummary): string {
  if (project.error) {
    return '';
  }
  if (project.pending) {
    return `pending:${project.pending.id}`;
  }
  return project.status === 'done' || project.status === 'failed'
    ? `end:${project.status}`
    : '';
}

/** Which news the notifications announce (the `notifications` setting). */
export type Notifications = 'all' | 'decisions' | 'none';

export interface IWatcherSettings {
  notifications: Notifications;
  refreshSeconds: number;
}

/** `key` when the setting announces that kind of news, else '' (no news). */
export function announced(key: string, notifications: Notifications): string {
  if (notifications === 'none') {
    return '';
  }
  return notifications === 'decisions' && key.startsWith('end:') ? '' : key;
}

/** The words of a pending decision, per kind, after the project's name. */
export function pendingWords(project: IProjectSummary): string {
  const pending = project.pending!;
  if (pending.permission) {
    // "codex asks to edit analysis.py": the agent's own request, in one line
    return `— ${pending.permission.question}`;
  }
  switch (pending.kind) {
    case 'gate':
      return `waits for you at ${pending.stage}`;
    case 'question':
      return `asks you a question at ${pending.stage}`;
    case 'handoff':
      return `hands ${pending.stage} over to you`;
    case 'budget':
      return `spent its budget at ${pending.stage}: raise it or stop`;
  }
  return `waits for you at ${pending.stage}`;
}

interface IShown {
  key: string;
  id: string;
}

/**
 * Polls the server's project list; `changed` fires after each answer that differs.
 * `open(path)` shows a project (the panel, selected).
 */
export class ProjectWatcher {
  constructor(
    private readonly _panel: Widget,
    private readonly _open: (path: string) => void,
    private readonly _command: (id: string, path: string) => void = () =>
      undefined
  ) {
    void this._tick();
    this._timer = window.setInterval(() => {
      const every = document.hidden
        ? Math.max(HIDDEN_EVERY_MS, this._every)
        : this._every;
      if (Date.now() - this._at >= every - 50) {
        void this._tick();
      }
    }, TICK_MS);
  }

  /** The user's settings (the Settings Editor's LightScientist section). */
  configure(settings: IWatcherSettings): void {
    this._notifications = settings.notifications;
    this._every = Math.max(1, settings.refreshSeconds) * 1000;
  }

  /** Fires when the list of projects (or what one of them is at) changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get projects(): readonly IProjectSummary[] {
    return this._projects;
  }

  /** Ask the server now (after an action of this page). */
  poke(): void {
    void this._tick();
  }

  dispose(): void {
    window.clearInterval(this._timer);
    for (const shown of this._shown.values()) {
      Notification.dismiss(shown.id);
    }
    this._shown.clear();
  }

  private async _tick(): Promise<void> {
    if (this._busy) {
      return; // one request at a time: two answers at once would announce twice
    }
    this._busy = true;
    this._at = Date.now();
    let projects: IProjectSummary[];
    try {
      projects = (await api.projects()).projects;
    } catch {
      return; // the panel shows the server's errors; the watcher stays quiet
    } finally {
      this._busy = false;
    }
    const first = this._known === null;
    const keys = new Map(
      projects.map(p => [p.path, announced(newsKey(p), this._notifications)])
    );
    for (const project of projects) {
      const key = keys.get(project.path) ?? '';
      const shown = this._shown.get(project.path);
      const news = !first && key && key !== this._known!.get(project.path);
      if (shown && shown.key !== key) {
        // no longer true: the news takes its place (one notification per project), or
        // it goes
        if (
          news &&
          Notification.update({ id: shown.id, ...this._news(project) })
        ) {
          this._shown.set(project.path, { key, id: shown.id });
          continue;
        }
        Notification.dismiss(shown.id);
        this._shown.delete(project.path);
      }
      if (news && !this._shown.has(project.path)) {
        const { message, type, ...options } = this._news(project);
        const id = Notification.manager.notify(message, type, options);
        this._shown.set(project.path, { key, id });
      }
    }
    for (const [path, shown] of [...this._shown]) {
      if (!keys.has(path)) {
        Notification.dismiss(shown.id); // the project is gone
        this._shown.delete(path);
      }
    }
    // whatever else of ours is still listed is stale: it goes
    const ours = new Set([...this._shown.values()].map(shown => shown.id));
    for (const notification of Notification.manager.notifications) {
      if (
        notification.message.startsWith(PREFIX) &&
        !ours.has(notification.id)
      ) {
        Notification.dismiss(notification.id);
      }
    }
    const signature = JSON.stringify(
      projects.map(p => [p.path, p.stage, p.status, p.pending?.id, p.runner])
    );
    this._known = keys;
    this._projects = projects;
    this._badge(projects);
    if (signature !== this._signature) {
      this._signature = signature;
      this._changed.emit();
    }
  }

  private _badge(projects: IProjectSummary[]): void {
    const waiting = projects.filter(p => p.pending && !p.error).length;
    this._panel.title.dataset = {
      ...this._panel.title.dataset,
      'ls-waiting': String(waiting) // Lumino writes it as data-ls-waiting
    };
    this._panel.title.caption = waiting
      ? `LightScientist: ${waiting} waiting for you`
      : 'LightScientist';
  }

  /** The notification of `project`'s news: its words, its kind and its actions (what
   * can be done from it at once, then Show). */
  private _news(project: IProjectSummary): {
    message: string;
    type: Notification.TypeOptions;
    autoClose: false;
    actions: Notification.IAction[];
  } {
    const where = shownPath(project.path);
    const show = {
      label: project.pending ? 'Show' : 'Open',
      caption: `Show ${where} in the LightScientist panel`,
      callback: () => this._open(project.path),
      displayType: 'default' as const
    };
    const [type, words]: [Notification.TypeOptions, string] = project.pending
      ? ['warning', pendingWords(project)]
      : project.status === 'done'
        ? ['success', 'is done: every stage ran and every gate was passed']
        : ['error', `failed at ${project.stage ?? '?'}`];
    return {
      message: `${PREFIX} ${where} ${words}`,
      type,
      autoClose: false,
      actions: [...this._answers(project), show]
    };
  }

  /** The answers a notification offers for `project`'s pending decision: Approve or
   * Reject (its command's dialog asks what should change) for a gate, Yes / No for a
   * question, Raise ×2 (the card's proposal) or Stop for a spent budget, Deliver (its
   * command's dialog) for a stage the researcher holds. */
  private _answers(project: IProjectSummary): Notification.IAction[] {
    const pending = project.pending;
    if (!pending) {
      return [];
    }
    const answer = (
      label: string,
      approve: boolean,
      caption: string,
      comment = ''
    ) => ({
      label,
      caption,
      displayType: 'accent' as const,
      callback: () => void this._reply(project, approve, null, comment)
    });
    if (pending.permission) {
      // the agent's own options: the name picks one, yes or no says which way it goes
      const asked = pending.permission.question;
      return pending.permission.options.map(option =>
        answer(
          option.name,
          option.kind.startsWith('allow'),
          `${option.name}: ${asked}`,
          option.name
        )
      );
    }
    switch (pending.kind) {
      case 'gate':
        return [
          answer(
            'Approve',
            true,
            `Approve ${pending.stage} and move on to ${pending.proposed_next ?? 'the next stage'}`
          ),
          this._dialog(
            'Reject…',
            `Reject ${pending.stage}, saying what should change`,
            ProjectCommandIDs.reject,
            project
          )
        ];
      case 'handoff':
        return [
          this._dialog(
            'Deliver…',
            `Deliver ${pending.stage}: its outputs are checked first`,
            ProjectCommandIDs.deliver,
            project
          )
        ];
      case 'question':
        return [
          answer('Yes', true, `Answer yes: ${pending.question}`),
          answer('No', false, `Answer no: ${pending.question}`)
        ];
      case 'budget': {
        const { key, value } = raisedLimit(pending.details);
        return [
          {
            label: `Raise ×${RAISE_BY}`,
            caption: `Raise the ${key} limit to ${shown(key, value)} and go on`,
            displayType: 'accent' as const,
            callback: () => void this._reply(project, true, { [key]: value })
          },
          answer('Stop', false, 'End the project where it is')
        ];
      }
    }
    return [];
  }

  /** An action that runs a command on `project` (the command asks what it needs); the
   * notification stays until the decision is answered, so a dialog cancelled loses nothing. */
  private _dialog(
    label: string,
    caption: string,
    command: string,
    project: IProjectSummary
  ): Notification.IAction {
    return {
      label,
      caption,
      displayType: 'default',
      callback: (event: Event) => {
        event.preventDefault();
        this._command(command, project.path);
      }
    };
  }

  private _failed(project: IProjectSummary, error: Error): void {
    Notification.error(
      // not our prefix: this one is not a project's news, and stays its 8 s
      `LightScientist could not answer ${shownPath(project.path)}: ${error.message}`,
      { autoClose: 8000 }
    );
  }

  private async _reply(
    project: IProjectSummary,
    approve: boolean,
    budget: Record<string, number> | null = null,
    comment = ''
  ): Promise<void> {
    const pending = project.pending!;
    try {
      await api.reply({
        path: project.path,
        approve,
        comment,
        to_stage: null,
        decision_id: pending.id,
        budget
      });
    } catch (error) {
      this._failed(project, error as Error);
    }
    this.poke(); // the decision is answered: its notification goes
  }

  private _notifications: Notifications = 'all';
  private _every = VISIBLE_EVERY_MS;
  private _projects: IProjectSummary[] = [];
  private _known: Map<string, string> | null = null;
  private _shown = new Map<string, IShown>();
  private _signature = '';
  private _busy = false;
  private _at = 0;
  private _timer: number;
  private _changed = new Signal<this, void>(this);
}
