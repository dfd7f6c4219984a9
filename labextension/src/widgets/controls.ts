/**
 * The dashboard's run controls (`jupyter/dashboard/run_controls.py`): where the run is
 * (stage N of M, the time in this stage), Cancel / Pause after this stage / Re-run this
 * stage / Resume — only those the kernel's one rule (`app.controls.applicable`) allows —,
 * the time per stage, the project's folder, and the banner with Resume shown when the
 * kernel behind the dashboard is gone. A click goes through the server extension's control
 * endpoint; only without one over the widget's comm.
 */

import type { ControlAction } from '../answers';
import {
  CONTROL_ICONS,
  CONTROL_LABELS,
  confirmWords,
  controlTitle
} from '../controlwords';
import { el } from '../dom';
import {
  act,
  follow,
  located,
  outcomeLine,
  showOutcome,
  type IRenderProps,
  type IWidgetModel
} from './host';
import type { IRunView } from './views';

/** The controls' synced traits. */
export interface IControlsTraits {
  root: string;
  run: Partial<IRunView>;
  /** The magic that continues this project from a new kernel. */
  resume: string;
}

type Action = ControlAction;

const BUTTON = 'jp-Button jp-mod-styled';

function button(
  parent: HTMLElement,
  className: string,
  text: string
): HTMLButtonElement {
  return el('button', { className: `${BUTTON} ${className}`, text }, parent);
}

/** A small button holding only `action`'s icon (its name comes with the tooltip). */
function iconButton(
  parent: HTMLElement,
  className: string,
  action: 'rerun' | 'cancel'
): HTMLButtonElement {
  const node = el(
    'button',
    { className: `${BUTTON} jp-mod-small ls-icon ${className}` },
    parent
  );
  node.innerHTML = CONTROL_ICONS[action] ?? ''; // our own drawing, no outside text
  return node;
}

/** A button that copies `text()` and says so for two seconds. */
function copier(node: HTMLButtonElement, text: () => string): void {
  const label = node.textContent || '';
  node.addEventListener('click', () => {
    const done = (said: string) => {
      node.textContent = said;
      setTimeout(() => (node.textContent = label), 2000);
    };
    if (!navigator.clipboard) {
      done('Select it to copy');
      return;
    }
    navigator.clipboard.writeText(text()).then(
      () => done('Copied'),
      () => done('Select it to copy')
    );
  });
}

class RunControls {
  constructor(
    private readonly _model: IWidgetModel<IControlsTraits>,
    root: HTMLElement
  ) {
    this._root = root;
    const box = el('div', { className: 'ls-controls' }, root);
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'run controls');
    const row = el('div', { className: 'ls-row ls-live ls-toolbar' }, box);
    row.setAttribute('role', 'toolbar');
    row.setAttribute('aria-label', 'Run controls');
    this._where = el(
      'span',
      {
        className: 'ls-chip ls-progress',
        title:
          "progress: the stage's place in the table, and the wall time of this visit"
      },
      row
    );
    // the common two labelled, the rarer two as icons named by their tooltip (the panel's)
    this._resume = button(
      row,
      'jp-mod-accept ls-resume',
      CONTROL_LABELS.resume
    );
    this._pause = button(row, 'ls-pause', CONTROL_LABELS.pause);
    this._pausing = el(
      'span',
      {
        className: 'ls-chip ls-warn ls-pausing',
        title:
          'a pause was asked for: the run stops once this stage finishes; Resume goes on'
      },
      row
    );
    this._rerun = iconButton(row, 'ls-rerun', 'rerun');
    this._cancel = iconButton(row, 'jp-mod-reject ls-cancel', 'cancel');
    const pathBox = el('div', { className: 'ls-row ls-path' }, box);
    this._pathChip = el(
      'span',
      { className: 'ls-chip ls-code ls-path-chip' },
      pathBox
    );
    this._pathText = el('bdi', {}, this._pathChip); // read left to right, cut at its start
    const copyPath = button(pathBox, 'ls-copy-path', 'Copy path');
    copyPath.setAttribute('aria-label', "Copy the project folder's path");
    const ask = (this._ask = el(
      'div',
      { className: 'ls-row ls-confirm ls-warn' },
      box
    ));
    ask.setAttribute('role', 'alertdialog');
    ask.setAttribute('aria-label', 'Confirm');
    ask.hidden = true;
    this._askText = el('span', {}, ask);
    this._yes = button(ask, 'jp-mod-warn ls-confirm-yes', '');
    const no = button(ask, 'ls-confirm-no', 'Keep going');
    this._times = el('details', { className: 'ls-times' }, box);
    this._timesTitle = el('summary', { text: 'Time per stage' }, this._times);
    this._timesList = el('ul', { className: 'ls-times-list' }, this._times);
    this._outcome = outcomeLine(box);

    const dead = el('div', { className: 'ls-dead' }, box);
    dead.setAttribute('role', 'alert');
    el('b', { text: 'This dashboard is not live' }, dead);
    this._deadWhy = el('span', {}, dead);
    this._deadRow = el('div', { className: 'ls-row' }, dead);
    const deadResume = button(
      this._deadRow,
      'jp-mod-accept ls-dead-resume',
      'Resume'
    );
    deadResume.setAttribute(
      'aria-label',
      'Resume the project in the background (through the server)'
    );
    el(
      'span',
      { className: 'ls-muted', text: 'or run in a cell:' },
      this._deadRow
    );
    this._command = el(
      'code',
      { className: 'ls-code ls-resume-command' },
      this._deadRow
    );
    this._command.style.userSelect = 'all';
    const copy = button(this._deadRow, 'ls-copy', 'Copy');
    copy.setAttribute('aria-label', 'Copy the resume command');
    const deadOutcome = outcomeLine(dead);

    for (const [node, action] of [
      [this._cancel, 'cancel'],
      [this._rerun, 'rerun']
    ] as const) {
      node.addEventListener('click', () => {
        const stage = this._model.get('run')?.stage || '';
        const words = confirmWords(action, stage)!;
        this._confirm(action, words.question, words.label);
      });
    }
    this._yes.addEventListener('click', () => {
      ask.hidden = true;
      const action = this._confirming;
      this._confirming = null;
      if (action) {
        void this._send(action, this._outcome);
      }
    });
    no.addEventListener('click', () => {
      ask.hidden = true;
      this._confirming = null;
    });
    this._pause.addEventListener(
      'click',
      () => void this._send('pause', this._outcome)
    );
    this._resume.addEventListener(
      'click',
      () => void this._send('resume', this._outcome)
    );
    deadResume.addEventListener(
      'click',
      () => void this._send('resume', deadOutcome)
    );
    copier(copy, () => this._command.textContent || '');
    copier(copyPath, () => this._pathChip.dataset.full || '');
  }

  draw(): void {
    const r = this._model.get('run') || {};
    this._root.hidden = !r.status;
    if (!r.status) {
      return;
    }
    const ended = r.status === 'done'; // the banner's Resume stays for any other status
    const position = r.position
      ? `stage ${r.position[0]} of ${r.position[1]} · `
      : '';
    // at the end there is no stage to be in: the status line says done
    this._where.textContent = ended
      ? ''
      : `${position}${r.stage_time || '0s'} in ${r.stage}`;
    this._where.hidden = ended;
    const a = r.actions;
    this._cancel.hidden = !a?.cancel;
    this._pause.hidden = !a?.pause;
    this._pausing.hidden = !a?.pausing;
    this._pausing.textContent = r.pause_after
      ? `pausing after ${r.pause_after}`
      : '';
    this._rerun.hidden = !a?.rerun;
    this._resume.hidden = !a?.resume;
    this._deadWhy.textContent = ended
      ? ': the kernel that drew it restarted or went away. The project is done; what is ' +
        'shown is its end.'
      : ': the kernel that drew it restarted or went away, so its run has stopped and ' +
        'what is shown is as it was. ';
    this._deadRow.hidden = ended; // a finished project has nothing to resume
    for (const action of ['resume', 'pause', 'rerun', 'cancel'] as const) {
      const words = controlTitle(action, r.stage || '?');
      this._buttons[action].setAttribute('aria-label', words);
      this._buttons[action].title = words;
    }
    for (const b of [this._cancel, this._pause, this._rerun, this._resume]) {
      b.disabled = this._busy;
    }
    this._command.textContent =
      this._model.get('resume') || '%lightscientist resume';
    // the folder as the file browser names it (from the server root), whole in the
    // tooltip and in what Copy path copies; outside the server root, the whole path
    const full = this._model.get('root') || '';
    const where = located(full);
    this._pathText.textContent = where ? where.rel || '.' : full;
    this._pathChip.title = full;
    this._pathChip.dataset.full = full;
    this._drawTimes(r.times || []);
  }

  private _drawTimes(times: [string, string, number][]): void {
    const key = JSON.stringify(times);
    this._times.hidden = !times.length;
    if (this._timesList.dataset.key === key) {
      return;
    }
    this._timesList.dataset.key = key;
    this._timesList.textContent = '';
    for (const [stage, time, visits] of times) {
      const item = el('li', {}, this._timesList);
      el('span', { className: 'ls-code', text: stage }, item);
      const more = visits > 1 ? ` · ${visits} visits` : '';
      el('span', { className: 'ls-muted', text: ` ${time}${more}` }, item);
    }
    this._timesTitle.textContent = `Time per stage (${times.length} visited)`;
  }

  private _confirm(action: Action, text: string, label: string): void {
    this._confirming = action;
    this._askText.textContent = text;
    this._yes.textContent = label;
    this._ask.hidden = false;
    this._yes.focus();
  }

  private async _send(action: Action, node: HTMLElement): Promise<void> {
    const r = this._model.get('run') || {};
    this._busy = true;
    this.draw();
    showOutcome(node, '', 'sending…');
    const body = {
      action,
      stage: action === 'resume' ? null : r.stage || null
    };
    const answer = await act(
      this._model,
      'control',
      body,
      { kind: 'control', ...body },
      'no answer from the server or the kernel within 2 s'
    );
    showOutcome(node, answer.ok ? 'ok' : 'err', answer.text);
    this._busy = false;
    this.draw();
  }

  private get _buttons(): Record<Action, HTMLButtonElement> {
    return {
      resume: this._resume,
      pause: this._pause,
      rerun: this._rerun,
      cancel: this._cancel
    };
  }

  private _root: HTMLElement;
  private _busy = false;
  private _confirming: Action | null = null;
  private _where: HTMLElement;
  private _cancel: HTMLButtonElement;
  private _pause: HTMLButtonElement;
  private _pausing: HTMLElement;
  private _rerun: HTMLButtonElement;
  private _resume: HTMLButtonElement;
  private _pathChip: HTMLElement;
  private _pathText: HTMLElement;
  private _ask: HTMLElement;
  private _askText: HTMLElement;
  private _yes: HTMLButtonElement;
  private _times: HTMLDetailsElement;
  private _timesTitle: HTMLElement;
  private _timesList: HTMLUListElement;
  private _outcome: HTMLElement;
  private _deadWhy: HTMLElement;
  private _deadRow: HTMLElement;
  private _command: HTMLElement;
}

function render({
  model,
  el: root
}: IRenderProps<IControlsTraits>): () => void {
  const controls = new RunControls(model, root);
  return follow(model, 'change:run change:resume change:root', () =>
    controls.draw()
  );
}

export default { render };
