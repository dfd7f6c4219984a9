/**
 * The LightScientist side panel: the projects under the server root and, for the selected
 * one, its status, stage graph, pending gate (with Approve / Reject), outputs and live events.
 *
 * Everything comes from the server extension, which reads the project's files: the panel
 * needs no kernel and rebuilds itself after a page reload. Its project list is the
 * notifications' watcher's (one request a second for both); the selected project's detail is
 * polled here, and the event tail is fetched by sequence number (only what is new) and
 * pauses while the panel is hidden.
 * This module holds the polling and the selection; `detail` and `lists` draw.
 */

import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { IProjectDetail, IProjectSummary, IReplyAnswer } from './answers';
import { api, APIError } from './api';
import { DetailView, replyFrom } from './detail';
import { el } from './dom';
import { renderProjectList } from './lists';
import type { KernelOwner } from './runner';

const TICK_MS = 1000;
const PROJECTS_EVERY_MS = 5000;
const DETAIL_EVERY_MS = 2000;
const DETAIL_HIDDEN_EVERY_MS = 10000;
const FAST_FOR_MS = 15000;
const EVENTS_BATCH = 200;
const STORAGE_KEY = 'lightscientist-jupyter:selected-project';

export interface IPanelOptions {
  /** Open a file (a path relative to the server root) in JupyterLab. */
  openFile: (path: string, factory?: string) => void;
  /** Open a notebook (a path relative to the server root) with the cell `cell` active. */
  openCell: (path: string, cell: string) => void;
  /** Show a folder in the file browser. */
  showFolder: (path: string) => void;
  /** Insert a code cell below the active one of the current notebook. */
  insertCell: (code: string) => void;
  /** Which notebook a kernel of this server belongs to. */
  kernelOwner: KernelOwner;
}

/** Where the panel may take the project list from (the notifications' watcher). */
export interface IProjectSource {
  readonly projects: readonly IProjectSummary[];
  readonly changed: ISignal<unknown, void>;
}

export class LightScientistPanel extends Widget {
  constructor(options: IPanelOptions) {
    super();
    this.id = 'lightscientist-panel';
    this.addClass('ls-Panel');
    this.title.caption = 'LightScientist';

    const header = el('div', { className: 'ls-header' }, this.node);
    el('h2', { text: 'LightScientist' }, header);
    const refresh = el(
      'button',
      { className: 'ls-refresh jp-mod-styled', text: 'Refresh' },
      header
    );
    refresh.addEventListener('click', () => void this.refresh());
    this._errorNode = el(
      'div',
      { className: 'ls-error', title: 'Last error' },
      this.node
    );
    el('h3', { text: 'Projects' }, this.node);
    this._listNode = el('ul', { className: 'ls-project-list' }, this.node);
    this._listNode.setAttribute('role', 'listbox');
    this._listNode.setAttribute('aria-label', 'Projects under the server root');
    this._view = new DetailView(this.node, {
      ...options,
      reply: (approve, comment, toStage) =>
        void this.reply(approve, comment, toStage).catch(() => undefined),
      refresh: () => {
        this._fastUntil = Date.now() + FAST_FOR_MS;
        void this.refresh();
      }
    });

    this._selected = window.localStorage.getItem(STORAGE_KEY);
    this._timer = window.setInterval(() => void this._tick(false), TICK_MS);
    void this._tick(true);
  }

  /** Emitted when the selected project or what is known of it changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Emitted when a reply of this panel was sent (the project moves soon). */
  get replied(): ISignal<this, void> {
    return this._replied;
  }

  /** The selected project's last known detail. */
  get detail(): IProjectDetail | null {
    return this._detail;
  }

  get projects(): readonly IProjectSummary[] {
    return this._projects;
  }

  /**
   * Take the project list from `watcher`, which asks the server for it every second for
   * the notifications and the badge, instead of asking for it again on a timer of its own.
   */
  follow(watcher: IProjectSource): void {
    this._source = watcher;
    watcher.changed.connect(() => this._takeProjects([...watcher.projects]));
  }

  /** Fetch everything now. */
  async refresh(): Promise<void> {
    await this._tick(true);
  }

  select(path: string): void {
    if (path === this._selected) {
      return;
    }
    this._selected = path;
    window.localStorage.setItem(STORAGE_KEY, path);
    this._detail = null;
    this._lastSeq = undefined;
    this._view.reset();
    this._renderList();
    this._changed.emit();
    void this._tick(true);
  }

  /**
   * Answer the selected project's pending decision. Resolves with the server's answer;
   * rejects (and shows why) when it is refused.
   */
  async reply(
    approve: boolean,
    comment = '',
    toStage: string | null = null
  ): Promise<IReplyAnswer> {
    const answer = await replyFrom(
      this._view,
      this._detail,
      approve,
      comment,
      toStage
    );
    this._replied.emit();
    this._fastUntil = Date.now() + FAST_FOR_MS;
    void this._tick(true);
    return answer;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearInterval(this._timer);
    super.dispose();
  }

  /** Activated (its shortcut, its tab): the keyboard starts at the selected project's row,
   * from which Tab reaches its pending card's fields and buttons. */
  protected onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    const row =
      this.node.querySelector<HTMLElement>(
        '.ls-project[aria-selected="true"]'
      ) ?? this.node.querySelector<HTMLElement>('.ls-project, .ls-refresh');
    row?.focus();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._tick(true);
  }

  // ------------------------------------------------------------------ polling

  private async _tick(force: boolean): Promise<void> {
    if (this._busy) {
      this._again = this._again || force;
      return;
    }
    this._busy = true;
    try {
      const now = Date.now();
      const visible = this.isVisible && !document.hidden;
      const projectsDue = now - this._projectsAt >= PROJECTS_EVERY_MS;
      const polled = this._source === null && visible && projectsDue;
      if (force || this._projectsAt === 0 || polled) {
        await this._loadProjects();
      }
      if (this._selected !== null) {
        const every =
          now < this._fastUntil
            ? 0
            : visible
              ? DETAIL_EVERY_MS
              : DETAIL_HIDDEN_EVERY_MS;
        if (force || now - this._detailAt >= every) {
          await this._loadDetail();
        }
        if (visible) {
          await this._loadEvents();
        }
      }
      this._showError(null);
    } catch (error) {
      this._showError(error as Error);
    } finally {
      this._busy = false;
    }
    if (this._again) {
      this._again = false;
      void this._tick(true);
    }
  }

  private async _loadProjects(): Promise<void> {
    this._projectsAt = Date.now();
    this._takeProjects((await api.projects()).projects);
  }

  private _takeProjects(projects: IProjectSummary[]): void {
    this._projects = projects;
    const paths = this._projects.map(p => p.path);
    if (this._selected === null || !paths.includes(this._selected)) {
      const waiting = this._projects.find(p => p.pending && !p.error);
      const first = waiting ?? this._projects.find(p => !p.error);
      if (first) {
        this._selected = null;
        this.select(first.path);
      } else if (this._selected !== null) {
        this._selected = null;
        this._detail = null;
        this._view.reset();
        this._changed.emit();
      }
    }
    this._renderList();
  }

  private async _loadDetail(): Promise<void> {
    const path = this._selected!;
    this._detailAt = Date.now();
    let detail: IProjectDetail;
    try {
      detail = await api.project(path);
    } catch (error) {
      if (error instanceof APIError && error.status === 404) {
        this._projectsAt = 0;
      }
      throw error;
    }
    if (path !== this._selected) {
      return;
    }
    this._detail = detail;
    this._view.render(detail);
    this._syncListEntry(detail);
    this._changed.emit();
  }

  private async _loadEvents(): Promise<void> {
    const path = this._selected!;
    const answer = await api.events(path, this._lastSeq, EVENTS_BATCH);
    if (path !== this._selected) {
      return;
    }
    this._lastSeq = answer.last_seq;
    this._view.appendEvents(answer.events, answer.reset);
  }

  /** Keep the list's row of the selected project in step with its fresher detail. */
  private _syncListEntry(detail: IProjectDetail): void {
    const index = this._projects.findIndex(p => p.path === detail.path);
    const row = this._projects[index];
    if (
      row &&
      (row.stage !== detail.stage ||
        row.status !== detail.status ||
        (row.pending?.id ?? null) !== (detail.pending?.id ?? null))
    ) {
      const { stage, status, pending } = detail;
      this._projects[index] = { ...row, stage, status, pending };
      this._renderList();
    }
  }

  private _showError(error: Error | null): void {
    this._errorNode.textContent = error
      ? `LightScientist: ${error.message}`
      : '';
    this._errorNode.hidden = !error;
  }

  private _renderList(): void {
    renderProjectList(this._listNode, this._projects, this._selected, path =>
      this.select(path)
    );
  }

  private _changed = new Signal<this, void>(this);
  private _replied = new Signal<this, void>(this);
  private _view: DetailView;
  private _projects: IProjectSummary[] = [];
  private _source: IProjectSource | null = null;
  private _selected: string | null = null;
  private _detail: IProjectDetail | null = null;
  private _lastSeq: number | undefined = undefined;
  private _timer: number;
  private _busy = false;
  private _again = false;
  private _projectsAt = 0;
  private _detailAt = 0;
  private _fastUntil = 0;
  private _errorNode: HTMLElement;
  private _listNode: HTMLUListElement;
}
