/**
 * The LightScientist side panel: the projects under the server root and, for the selected
 * one, its status, stage graph, pending gate (with Approve / Reject), outputs and live events.
 *
 * Everything comes from the server extension, which reads the project's files: the panel
 * needs no kernel and rebuilds itself after a page reload. It polls once a second; the event
 * tail is fetched by sequence number (only what is new) and pauses while the panel is hidden.
 */

import { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import {
  api,
  APIError,
  IEventRecord,
  IPendingDecision,
  IProjectDetail,
  IProjectSummary,
  IReplyAnswer
} from './api';
import { DONE, layoutStages, renderGraph } from './graph';

const TICK_MS = 1000;
const PROJECTS_EVERY_MS = 5000;
const DETAIL_EVERY_MS = 2000;
const DETAIL_HIDDEN_EVERY_MS = 10000;
const FAST_FOR_MS = 15000;
const EVENTS_BATCH = 200;
const EVENTS_KEEP = 300;
const STORAGE_KEY = 'lightscientist-jupyter:selected-project';

export interface IPanelOptions {
  /** Open a file (a path relative to the server root) in JupyterLab. */
  openFile: (path: string, factory?: string) => void;
  /** Show a folder in the file browser. */
  showFolder: (path: string) => void;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; title?: string } = {},
  parent?: HTMLElement
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.className) {
    element.className = props.className;
  }
  if (props.text !== undefined) {
    element.textContent = props.text;
  }
  if (props.title) {
    element.title = props.title;
  }
  parent?.appendChild(element);
  return element;
}

function shownPath(path: string): string {
  return path || '(server root)';
}

function statusWords(status: string | undefined): string {
  return status === 'waiting_user' ? 'waiting for you' : (status ?? '?');
}

export class LightScientistPanel extends Widget {
  constructor(private readonly _options: IPanelOptions) {
    super();
    this.id = 'lightscientist-panel';
    this.addClass('ls-Panel');
    this.title.caption = 'LightScientist';

    const header = el('div', { className: 'ls-header' }, this.node);
    el('h2', { text: 'LightScientist' }, header);
    const refresh = el('button', { className: 'ls-refresh jp-mod-styled', text: 'Refresh' }, header);
    refresh.addEventListener('click', () => void this.refresh());
    this._errorNode = el('div', { className: 'ls-error', title: 'Last error' }, this.node);
    el('h3', { text: 'Projects' }, this.node);
    this._listNode = el('ul', { className: 'ls-project-list' }, this.node);
    this._detailNode = el('div', { className: 'ls-detail' }, this.node);
    this._detailNode.hidden = true;
    this._buildDetail();

    this._selected = window.localStorage.getItem(STORAGE_KEY);
    this._timer = window.setInterval(() => void this._tick(false), TICK_MS);
    void this._tick(true);
  }

  /** Emitted when the selected project or what is known of it changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The selected project's last known detail. */
  get detail(): IProjectDetail | null {
    return this._detail;
  }

  get projects(): readonly IProjectSummary[] {
    return this._projects;
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
    this._eventsNode.textContent = '';
    this._replyMessage.textContent = '';
    this._replied = null;
    this._keys = {};
    this._renderList();
    this._detailNode.hidden = true;
    this._changed.emit();
    void this._tick(true);
  }

  /**
   * Answer the selected project's pending decision. Resolves with the server's answer;
   * rejects (and shows why) when it is refused.
   */
  async reply(approve: boolean, comment = '', toStage: string | null = null): Promise<IReplyAnswer> {
    const detail = this._detail;
    const pending = detail?.pending;
    if (!detail || !pending) {
      throw new Error('Nothing is waiting for a reply in the selected project.');
    }
    this._setBusy(true);
    this._replyMessage.textContent = approve ? 'Sending approval…' : 'Sending rejection…';
    try {
      const answer = await api.reply({
        path: detail.path,
        approve,
        comment,
        to_stage: approve ? null : toStage,
        decision_id: pending.id
      });
      this._replyMessage.textContent = describeReply(approve, answer);
      this._replied = answer.applied_by === 'runner' ? { id: pending.id, approve } : null;
      this._fastUntil = Date.now() + FAST_FOR_MS;
      void this._tick(true);
      return answer;
    } catch (error) {
      this._replyMessage.textContent = `Refused: ${(error as Error).message}`;
      throw error;
    } finally {
      this._setBusy(false);
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearInterval(this._timer);
    super.dispose();
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
      if (force || this._projectsAt === 0 || (visible && now - this._projectsAt >= PROJECTS_EVERY_MS)) {
        await this._loadProjects();
      }
      if (this._selected !== null) {
        const every =
          now < this._fastUntil ? 0 : visible ? DETAIL_EVERY_MS : DETAIL_HIDDEN_EVERY_MS;
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
    this._projects = (await api.projects()).projects;
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
        this._detailNode.hidden = true;
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
    this._renderDetail(detail);
    this._syncListEntry(detail);
    this._changed.emit();
  }

  private async _loadEvents(): Promise<void> {
    const path = this._selected!;
    const answer = await api.events(path, this._lastSeq, EVENTS_BATCH);
    if (path !== this._selected) {
      return;
    }
    if (answer.reset) {
      this._eventsNode.textContent = '';
    }
    this._lastSeq = answer.last_seq;
    this._appendEvents(answer.events);
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
      this._projects[index] = { ...row, stage: detail.stage, status: detail.status, pending: detail.pending };
      this._renderList();
    }
  }

  private _showError(error: Error | null): void {
    this._errorNode.textContent = error ? `LightScientist: ${error.message}` : '';
    this._errorNode.hidden = !error;
  }

  // ------------------------------------------------------------------ rendering

  private _renderList(): void {
    this._listNode.textContent = '';
    if (!this._projects.length) {
      el(
        'li',
        {
          className: 'ls-empty',
          text:
            'No LightScientist projects under the server root yet. Start one with ' +
            '`%lightscientist research "…"` in a notebook or `lightscientist research "…"` ' +
            'in a terminal.'
        },
        this._listNode
      );
      return;
    }
    for (const project of this._projects) {
      const item = el('li', { className: 'ls-project', title: project.goal ?? project.error }, this._listNode);
      item.dataset.path = project.path;
      item.setAttribute('aria-selected', String(project.path === this._selected));
      item.tabIndex = 0;
      el('span', { className: 'ls-project-name', text: shownPath(project.path) }, item);
      if (project.error) {
        el('span', { className: 'ls-badge ls-badge-error', text: 'unreadable' }, item);
      } else {
        el('span', { className: 'ls-badge', text: project.stage }, item);
        const status = el('span', { className: 'ls-badge ls-project-status', text: statusWords(project.status) }, item);
        status.dataset.status = project.status ?? '';
      }
      item.addEventListener('click', () => this.select(project.path));
      item.addEventListener('keydown', event => {
        if (event.key === 'Enter') {
          this.select(project.path);
        }
      });
    }
  }

  private _buildDetail(): void {
    const d = this._detailNode;
    this._goalNode = el('p', { className: 'ls-goal' }, d);
    const status = el('p', { className: 'ls-status' }, d);
    el('span', { text: 'Stage ' }, status);
    this._stageNode = el('span', { className: 'ls-stage' }, status);
    el('span', { text: ' · ' }, status);
    this._statusNode = el('span', { className: 'ls-status-text' }, status);
    this._modeNode = el('span', { className: 'ls-mode' }, status);
    this._runnerNode = el('p', { className: 'ls-runner' }, d);
    this._reasonNode = el('p', { className: 'ls-reason' }, d);
    this._gateNode = el('section', { className: 'ls-gate' }, d);
    this._replyMessage = el('p', { className: 'ls-reply-message' }, d);
    this._replyMessage.setAttribute('role', 'status');

    const actions = el('div', { className: 'ls-actions' }, d);
    this._processButton = el('button', { className: 'jp-mod-styled ls-open-process', text: 'Open PROCESS.md' }, actions);
    this._processButton.addEventListener('click', () => {
      if (this._detail) {
        this._options.openFile(this._detail.process_md.path, 'Markdown Preview');
      }
    });
    const folder = el('button', { className: 'jp-mod-styled ls-show-folder', text: 'Show folder' }, actions);
    folder.addEventListener('click', () => {
      if (this._detail) {
        this._options.showFolder(this._detail.path);
      }
    });

    const graph = el('details', { className: 'ls-graph-section' }, d);
    graph.open = true;
    el('summary', { text: 'Stage graph' }, graph);
    this._graphNode = el('div', { className: 'ls-graph-box' }, graph);

    const outputs = el('details', { className: 'ls-outputs-section' }, d);
    outputs.open = true;
    el('summary', { text: 'Outputs' }, outputs);
    this._outputsNode = el('ul', { className: 'ls-outputs' }, outputs);

    const events = el('details', { className: 'ls-events-section' }, d);
    events.open = true;
    el('summary', { text: 'Events' }, events);
    this._eventsNode = el('ol', { className: 'ls-events' }, events);
  }

  private _renderDetail(detail: IProjectDetail): void {
    this._detailNode.hidden = false;
    this._detailNode.dataset.path = detail.path;
    this._goalNode.textContent = detail.goal ?? '';
    this._stageNode.textContent = detail.stage ?? '?';
    this._statusNode.textContent = statusWords(detail.status);
    this._statusNode.dataset.status = detail.status ?? '';
    this._modeNode.textContent = detail.mode ? ` · ${detail.mode} mode` : '';
    const runner = detail.runner;
    this._runnerNode.textContent = runner
      ? `Run by pid ${runner.pid ?? '?'} on ${runner.host ?? '?'}.`
      : detail.status === 'running'
        ? 'No process runs this project now: continue it with `lightscientist resume`.'
        : '';
    this._reasonNode.textContent = detail.reason ?? detail.table_error ?? '';
    this._processButton.disabled = !detail.process_md.exists;
    if (this._replied && detail.pending?.id !== this._replied.id) {
      const verb = this._replied.approve ? 'Approved' : 'Rejected';
      this._replyMessage.textContent =
        `${verb} (${this._replied.id}) and applied: the project is now at ` +
        `'${detail.stage}' (${statusWords(detail.status)}).`;
      this._replied = null;
    }

    const gateKey = `${detail.path}\u0000${detail.pending?.id ?? ''}`;
    if (this._keys.gate !== gateKey) {
      this._keys.gate = gateKey;
      this._renderGate(detail, detail.pending ?? null);
    }
    const graphKey = JSON.stringify([detail.table, detail.stage, detail.status, detail.visits, detail.pending?.id]);
    if (this._keys.graph !== graphKey) {
      this._keys.graph = graphKey;
      this._graphNode.textContent = '';
      if (detail.table) {
        const graph = renderGraph(layoutStages(detail.table), {
          current: detail.stage ?? null,
          status: detail.status ?? null,
          visits: detail.visits,
          pendingGate: detail.pending?.kind === 'gate' ? detail.pending.stage : null
        });
        this._graphNode.appendChild(graph);
      } else {
        el('p', { className: 'ls-reason', text: detail.table_error ?? 'No stage table.' }, this._graphNode);
      }
    }
    const outputsKey = JSON.stringify(detail.outputs);
    if (this._keys.outputs !== outputsKey) {
      this._keys.outputs = outputsKey;
      this._renderOutputs(detail);
    }
  }

  private _renderGate(detail: IProjectDetail, pending: IPendingDecision | null): void {
    const g = this._gateNode;
    g.textContent = '';
    g.hidden = !pending;
    if (!pending) {
      return;
    }
    g.dataset.decision = pending.id;
    const isGate = pending.kind === 'gate';
    el('h3', { text: isGate ? `Waiting for you: ${pending.stage}` : 'A question for you' }, g);
    el('p', { className: 'ls-question', text: pending.question }, g);
    if (pending.summary) {
      el('p', { className: 'ls-summary', text: pending.summary }, g);
    }
    if (isGate) {
      el(
        'p',
        {
          className: 'ls-approves',
          text:
            `Approving accepts what '${pending.stage}' produced and moves the project to ` +
            `'${pending.proposed_next ?? '?'}'.` +
            (pending.outputs.length ? ' Under review:' : '')
        },
        g
      );
      const list = el('ul', { className: 'ls-gate-outputs' }, g);
      for (const name of pending.outputs) {
        const item = el('li', {}, list);
        const button = el('button', { className: 'ls-link', text: name, title: 'Open in JupyterLab' }, item);
        button.addEventListener('click', () =>
          this._options.openFile(detail.path ? `${detail.path}/${name}` : name)
        );
      }
    } else if (pending.options.length) {
      el('p', { className: 'ls-options', text: `Options: ${pending.options.join(' / ')}` }, g);
    }
    const commentLabel = el('label', { className: 'ls-field', text: 'Comment' }, g);
    const comment = el('textarea', { className: 'ls-comment' }, commentLabel);
    comment.rows = 2;
    comment.placeholder = 'For the record and the next worker (optional)';
    let target: HTMLSelectElement | null = null;
    if (isGate) {
      const targetLabel = el('label', { className: 'ls-field', text: 'On reject, go back to' }, g);
      target = el('select', { className: 'ls-target' }, targetLabel);
      const fallback = el('option', { text: `${pending.default_reject ?? 'the previous stage'} (default)` }, target);
      fallback.value = '';
      for (const stage of detail.table?.stages ?? []) {
        const option = el('option', { text: stage.id }, target);
        option.value = stage.id;
      }
    }
    const buttons = el('div', { className: 'ls-buttons' }, g);
    const approve = el('button', { className: 'jp-mod-styled jp-mod-accept ls-approve', text: isGate ? 'Approve' : 'Yes' }, buttons);
    const reject = el('button', { className: 'jp-mod-styled jp-mod-warn ls-reject', text: isGate ? 'Reject' : 'No' }, buttons);
    const send = (yes: boolean) =>
      void this.reply(yes, comment.value, target?.value || null).catch(() => undefined);
    approve.addEventListener('click', () => send(true));
    reject.addEventListener('click', () => send(false));
    this._buttons = [approve, reject];
  }

  private _renderOutputs(detail: IProjectDetail): void {
    this._outputsNode.textContent = '';
    const present = detail.outputs.filter(o => o.exists);
    if (!present.length) {
      el('li', { className: 'ls-empty', text: 'No stage outputs yet.' }, this._outputsNode);
      return;
    }
    for (const output of present) {
      const item = el('li', {}, this._outputsNode);
      const button = el('button', { className: 'ls-link', text: output.name, title: `Open (from ${output.stage})` }, item);
      button.dataset.path = output.path;
      button.addEventListener('click', () => this._options.openFile(output.path));
      el('span', { className: 'ls-output-stage', text: output.stage }, item);
    }
  }

  private _appendEvents(events: IEventRecord[]): void {
    if (!events.length) {
      return;
    }
    const list = this._eventsNode;
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    for (const event of events) {
      const item = el('li', { className: 'ls-event' }, list);
      item.dataset.seq = String(event.seq);
      item.dataset.layer = String(event.layer);
      el('span', { className: 'ls-event-seq', text: `#${event.seq}` }, item);
      el('span', { className: 'ls-event-time', text: new Date(event.ts * 1000).toLocaleTimeString() }, item);
      el('span', { className: 'ls-event-type', text: event.type }, item);
      el('span', { className: 'ls-event-message', text: event.message }, item);
      if (event.worker_id) {
        item.title = `worker ${event.worker_id}${event.stage ? ` · ${event.stage}` : ''}`;
      }
    }
    while (list.childElementCount > EVENTS_KEEP) {
      list.firstElementChild!.remove();
    }
    if (atBottom) {
      list.scrollTop = list.scrollHeight;
    }
  }

  private _setBusy(busy: boolean): void {
    for (const button of this._buttons) {
      button.disabled = busy;
    }
  }

  private _changed = new Signal<this, void>(this);
  private _projects: IProjectSummary[] = [];
  private _selected: string | null = null;
  private _detail: IProjectDetail | null = null;
  private _lastSeq: number | undefined = undefined;
  private _timer: number;
  private _busy = false;
  private _again = false;
  private _projectsAt = 0;
  private _detailAt = 0;
  private _fastUntil = 0;
  private _keys: Record<string, string> = {};
  private _replied: { id: string; approve: boolean } | null = null;
  private _buttons: HTMLButtonElement[] = [];
  private _errorNode: HTMLElement;
  private _listNode: HTMLUListElement;
  private _detailNode: HTMLElement;
  private _goalNode!: HTMLElement;
  private _stageNode!: HTMLElement;
  private _statusNode!: HTMLElement;
  private _modeNode!: HTMLElement;
  private _runnerNode!: HTMLElement;
  private _reasonNode!: HTMLElement;
  private _gateNode!: HTMLElement;
  private _replyMessage!: HTMLElement;
  private _processButton!: HTMLButtonElement;
  private _graphNode!: HTMLElement;
  private _outputsNode!: HTMLUListElement;
  private _eventsNode!: HTMLOListElement;
}

/** What the panel says after a reply was accepted. */
export function describeReply(approve: boolean, answer: IReplyAnswer): string {
  const verb = approve ? 'Approved' : 'Rejected';
  if (answer.applied_by === 'runner') {
    return `${verb} (${answer.decision_id}); the run (pid ${answer.runner?.pid ?? '?'}) picks it up within a second.`;
  }
  const moved = answer.stage === DONE ? 'The project is done.' : `Now at '${answer.stage}' (${answer.status}).`;
  const idle =
    answer.status === 'running'
      ? ' No process runs this project: continue it with `lightscientist resume`.'
      : '';
  return `${verb} (${answer.decision_id}). ${moved}${idle}`;
}
