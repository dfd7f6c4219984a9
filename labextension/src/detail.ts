/**
 * The selected project's part of the panel: status, runner, pending gate, actions, stage
 * graph, outputs and event tail. It redraws a section only when what it shows has changed.
 */

import type { IEventRecord, IProjectDetail, IReplyAnswer } from './answers';
import { api } from './api';
import { BudgetView } from './budget';
import { el, focusable, statusWords } from './dom';
import { ControlsView } from './controls';
import { renderGate } from './gate';
import { HandoffView } from './handoff';
import { GraphBox } from './graph';
import { appendEvents } from './lists';
import { describeReply } from './replywords';
import { renderPaper, renderReviews } from './reviews';
import { KernelOwner, runnerWords } from './runner';
import { SearchBox } from './tree';

const DONE = 'done';
const EVENTS_KEEP = 300;

export interface IDetailActions {
  /** Open a file (a path relative to the server root) in JupyterLab. */
  openFile: (path: string, factory?: string) => void;
  /** Open a notebook (a path relative to the server root) with the cell `cell` active. */
  openCell: (path: string, cell: string) => void;
  /** Show a folder in the file browser. */
  showFolder: (path: string) => void;
  /** Answer the pending decision. */
  reply: (approve: boolean, comment: string, toStage: string | null) => void;
  /** Insert a code cell below the active one of the current notebook. */
  insertCell: (code: string) => void;
  /** Fetch the selected project again soon (after a run control). */
  refresh?: () => void;
  /** Which notebook a kernel of this server belongs to (names a run's kernel). */
  kernelOwner?: KernelOwner;
}

function section(parent: HTMLElement, className: string, title: string) {
  const details = el('details', { className }, parent);
  details.open = true;
  el('summary', { text: title }, details);
  return details;
}

export class DetailView {
  readonly node: HTMLElement;

  constructor(
    parent: HTMLElement,
    private readonly _actions: IDetailActions
  ) {
    const d = (this.node = el('div', { className: 'ls-detail' }, parent));
    d.hidden = true;
    this._goal = el('p', { className: 'ls-goal' }, d);
    const status = el('p', { className: 'ls-status' }, d);
    this._stageWords = [el('span', { text: 'Stage ' }, status)];
    this._stage = el('span', { className: 'ls-stage' }, status);
    this._stageWords.push(this._stage, el('span', { text: ' · ' }, status));
    this._status = el('span', { className: 'ls-status-text' }, status);
    this._mode = el('span', { className: 'ls-mode' }, status);
    this._runner = el('p', { className: 'ls-runner' }, d);
    this._reason = el('p', { className: 'ls-reason' }, d);
    // the state above, then what waits for the researcher, then the run's controls
    const controls = el('div', { className: 'ls-controls-slot' });
    this._controls = new ControlsView(d, controls);
    this._controls.onDone = () => _actions.refresh?.();
    this._gate = el('section', { className: 'ls-gate' }, d);
    this._handoff = new HandoffView(d, _actions);
    this._budget = new BudgetView(d); // usage, and a budget decision's card
    this._message = el('p', { className: 'ls-reply-message' }, d);
    this._message.setAttribute('role', 'status');
    d.appendChild(controls);

    const actions = el('div', { className: 'ls-actions' }, d);
    this._process = el(
      'button',
      { className: 'jp-mod-styled ls-open-process', text: 'Open PROCESS.md' },
      actions
    );
    this._process.addEventListener('click', () =>
      this._open(detail =>
        _actions.openFile(detail.process_md.path, 'Markdown Preview')
      )
    );
    const folder = el(
      'button',
      { className: 'jp-mod-styled ls-show-folder', text: 'Show folder' },
      actions
    );
    folder.addEventListener('click', () =>
      this._open(detail => _actions.showFolder(detail.path))
    );

    const graph = section(d, 'ls-graph-section', 'Stage graph');
    this._graph = new GraphBox(graph);
    this._search = section(d, 'ls-search-section', 'Search');
    this._search.hidden = true;
    this._tree = new SearchBox(this._search, node =>
      api.node(this._detail?.path ?? '', node)
    );
    this._paper = section(d, 'ls-paper-section', 'Paper');
    this._paper.hidden = true;
    this._paperLinks = el('div', { className: 'ls-paper' }, this._paper);
    this._reviews = el('section', { className: 'ls-reviews' }, this._paper);
    this._reviews.setAttribute('aria-label', 'Reviews');
    const outputs = section(d, 'ls-outputs-section', 'Outputs');
    this._outputs = el('ul', { className: 'ls-outputs' }, outputs);
    const events = section(d, 'ls-events-section', 'Events');
    this._events = el('ol', { className: 'ls-events' }, events);
    focusable(this._events, 'Events, newest last');
  }

  /** Forget what was shown: another project is selected. */
  reset(): void {
    this.node.hidden = true;
    this._detail = null;
    this._events.textContent = '';
    this._message.textContent = '';
    this._replied = null;
    this._keys = {};
    this._budget.reset();
    this._controls.reset();
    this._tree.reset();
  }

  /** Show a line about the reply under the gate. */
  say(text: string): void {
    this._message.textContent = text;
  }

  /** After the next redraw that no longer shows decision `id`, say that it was applied. */
  expectApplied(
    replied: { stage: string; id: string; approve: boolean } | null
  ): void {
    this._replied = replied;
  }

  setBusy(busy: boolean): void {
    for (const button of this._buttons) {
      button.disabled = busy;
    }
  }

  appendEvents(events: IEventRecord[], reset: boolean): void {
    if (reset) {
      this._events.textContent = '';
    }
    appendEvents(this._events, events, EVENTS_KEEP);
  }

  render(detail: IProjectDetail): void {
    this._detail = detail;
    this.node.hidden = false;
    this.node.dataset.path = detail.path;
    this._goal.textContent = detail.goal ?? '';
    this._stage.textContent = detail.stage ?? '?';
    for (const words of this._stageWords) {
      words.hidden = detail.stage === DONE; // "Stage done · done" says it twice
    }
    this._status.textContent = statusWords(detail.status);
    this._status.dataset.status = detail.status ?? '';
    this._mode.textContent = detail.mode ? ` · ${detail.mode} mode` : '';
    const runner = detail.runner;
    this._runner.textContent = runner
      ? runnerWords(runner, this._actions.kernelOwner ?? (() => null))
      : detail.status === 'running'
        ? 'No process runs this project now: continue it with `lightscientist resume`.'
        : '';
    this._reason.textContent = detail.reason ?? detail.table_error ?? '';
    this._reason.dataset.status = detail.status ?? ''; // paused: a note, not an error
    this._process.disabled = !detail.process_md.exists;
    this._controls.render(detail);
    if (this._replied && detail.pending?.id !== this._replied.id) {
      const verb = this._replied.approve ? 'Approved' : 'Rejected';
      this.say(
        `${verb} ${this._replied.stage} and applied: the project is now at ` +
          `'${detail.stage}' (${statusWords(detail.status)}).`
      );
      this._replied = null;
    }
    const kind = detail.pending?.kind;
    const handed = kind === 'handoff' || kind === 'budget'; // their own cards show them
    const pending = handed ? null : (detail.pending ?? null);
    this._once('gate', [detail.path, pending?.id], () => {
      this._buttons = renderGate(this._gate, detail, pending, this._actions);
    });
    this._handoff.render(detail);
    this._once('graph', detail.graph, () =>
      this._graph.show(detail.graph, detail.table_error ?? undefined)
    );
    this._once('search', [detail.path, detail.search], () =>
      this._renderSearch(detail)
    );
    this._once('paper', [detail.paper, detail.reviews], () =>
      this._renderPaper(detail)
    );
    this._once('outputs', detail.outputs, () => this._renderOutputs(detail));
    this._budget.render(detail);
  }

  /** Run `draw` when `value` differs from what section `name` last drew. */
  private _once(name: string, value: unknown, draw: () => void): void {
    const key = JSON.stringify(value);
    if (this._keys[name] !== key) {
      this._keys[name] = key;
      draw();
    }
  }

  private _open(action: (detail: IProjectDetail) => void): void {
    if (this._detail) {
      action(this._detail);
    }
  }

  private _renderSearch(detail: IProjectDetail): void {
    this._search.hidden = detail.search === null;
    this._tree.show(detail.search);
  }

  private _renderPaper(detail: IProjectDetail): void {
    const { paper, reviews } = detail;
    const written = paper.pdf !== null || paper.source !== null;
    this._paper.hidden = !written && reviews === null;
    renderPaper(this._paperLinks, paper, this._actions.openFile);
    this._reviews.hidden = reviews === null;
    if (reviews !== null) {
      renderReviews(this._reviews, reviews);
    }
  }

  private _renderOutputs(detail: IProjectDetail): void {
    const list = this._outputs;
    list.textContent = '';
    const present = detail.outputs.filter(o => o.exists);
    if (!present.length) {
      el('li', { className: 'ls-empty', text: 'No stage outputs yet.' }, list);
      return;
    }
    for (const output of present) {
      const item = el('li', {}, list);
      const button = el(
        'button',
        {
          className: 'ls-link',
          text: output.name,
          title: `Open (from ${output.stage})`
        },
        item
      );
      button.dataset.path = output.path;
      button.addEventListener('click', () =>
        this._actions.openFile(output.path)
      );
      el('span', { className: 'ls-output-stage', text: output.stage }, item);
    }
  }

  private _detail: IProjectDetail | null = null;
  private _stageWords: HTMLElement[];
  private _replied: { stage: string; id: string; approve: boolean } | null =
    null;
  private _keys: Record<string, string> = {};
  private _buttons: HTMLButtonElement[] = [];
  private _goal: HTMLElement;
  private _stage: HTMLElement;
  private _status: HTMLElement;
  private _mode: HTMLElement;
  private _runner: HTMLElement;
  private _reason: HTMLElement;
  private _gate: HTMLElement;
  private _handoff: HandoffView;
  private _budget: BudgetView;
  private _controls: ControlsView;
  private _message: HTMLElement;
  private _process: HTMLButtonElement;
  private _graph: GraphBox;
  private _outputs: HTMLUListElement;
  private _paper: HTMLDetailsElement;
  private _paperLinks: HTMLElement;
  private _reviews: HTMLElement;
  private _search: HTMLDetailsElement;
  private _tree: SearchBox;
  private _events: HTMLOListElement;
}

/**
 * Answer `detail`'s pending decision through the server, saying so in `view` (busy while
 * it goes). Resolves with the server's answer; rejects (and says why) when it is refused.
 */
export async function replyFrom(
  view: DetailView,
  detail: IProjectDetail | null,
  approve: boolean,
  comment = '',
  toStage: string | null = null
): Promise<IReplyAnswer> {
  const pending = detail?.pending;
  if (!detail || !pending) {
    throw new Error('Nothing is waiting for a reply in this project.');
  }
  view.setBusy(true);
  view.say(approve ? 'Sending approval…' : 'Sending rejection…');
  try {
    const answer = await api.reply({
      path: detail.path,
      approve,
      comment,
      to_stage: approve ? null : toStage,
      decision_id: pending.id
    });
    view.say(describeReply(answer));
    const byRunner = answer.applied_by === 'runner';
    view.expectApplied(
      byRunner ? { stage: pending.stage, id: pending.id, approve } : null
    );
    return answer;
  } catch (error) {
    view.say(`Refused: ${(error as Error).message}`);
    throw error;
  } finally {
    view.setBusy(false);
  }
}
