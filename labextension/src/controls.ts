/**
 * The selected project's run controls in the panel, as on the dashboard: where the run is
 * ("stage 7 of 14", the time in this stage, time per stage) and Cancel / Pause after this
 * stage / Re-run this stage / Resume, sent to the server's control endpoint
 * (`jupyter/server/control.py`). Resume is offered for a project no process runs: the
 * server starts `lightscientist resume --wait` in the background, or says the command.
 */

import { LabIcon, refreshIcon, stopIcon } from '@jupyterlab/ui-components';

import type { ControlAction, IProjectDetail } from './answers';
import { api } from './api';
import { CONTROL_LABELS, confirmWords, controlTitle } from './controlwords';
import { el } from './dom';

/** 12s, 3m05s, 1h02m: as the dashboard says it. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) {
    return `${s}s`;
  }
  const m = Math.floor(s / 60);
  if (m < 60) {
    return `${m}m${String(s % 60).padStart(2, '0')}s`;
  }
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/**
 * The run controls as a compact toolbar below the project's state and its pending card:
 * short labels in one row (the long form in each button's tooltip and accessible name),
 * only the actions that apply; where the run is goes with the state, above.
 */
export class ControlsView {
  constructor(stateParent: HTMLElement, parent: HTMLElement) {
    this._progress = el('p', { className: 'ls-progress' }, stateParent);
    const box = el('div', { className: 'ls-controls' }, parent);
    box.setAttribute('role', 'group');
    box.setAttribute('aria-label', 'Run controls');
    const row = el(
      'div',
      { className: 'ls-row ls-control-buttons ls-toolbar' },
      box
    );
    row.setAttribute('role', 'toolbar');
    row.setAttribute('aria-label', 'Run controls');
    const styled = 'jp-Button jp-mod-styled jp-mod-small';
    this._resume = this._button(
      row,
      `${styled} jp-mod-accept ls-resume`,
      CONTROL_LABELS.resume
    );
    this._pause = this._button(row, `${styled} ls-pause`, CONTROL_LABELS.pause);
    this._pausing = el(
      'span',
      { className: 'ls-chip ls-warn ls-pausing', text: '' },
      row
    );
    this._pausing.title =
      'A pause was asked for: the run stops once this stage finishes; Resume goes on';
    // the rarer two as icons, named by their tooltip and accessible name
    this._rerun = this._iconButton(row, `${styled} ls-rerun`, refreshIcon);
    this._cancel = this._iconButton(
      row,
      `${styled} jp-mod-reject ls-cancel`,
      stopIcon
    );
    this._ask = el('div', { className: 'ls-row ls-confirm ls-warn' }, box);
    this._ask.setAttribute('role', 'alertdialog');
    this._ask.setAttribute('aria-label', 'Confirm');
    this._ask.hidden = true;
    this._askText = el('span', {}, this._ask);
    this._yes = this._button(
      this._ask,
      `${styled} jp-mod-warn ls-confirm-yes`,
      ''
    );
    const no = this._button(this._ask, `${styled} ls-confirm-no`, 'Keep going');
    this._message = el('p', { className: 'ls-control-message' }, box);
    this._message.setAttribute('role', 'status');
    this._message.setAttribute('aria-live', 'polite');
    const times = (this._times = el('details', { className: 'ls-times' }, box));
    this._timesTitle = el('summary', { text: 'Time per stage' }, times);
    this._timesList = el('ul', { className: 'ls-times-list' }, times);

    for (const [button, action] of [
      [this._cancel, 'cancel'],
      [this._rerun, 'rerun']
    ] as const) {
      button.addEventListener('click', () => {
        const words = confirmWords(action, this._stage())!;
        this._confirm(action, words.question, words.label);
      });
    }
    this._yes.addEventListener('click', () => {
      this._ask.hidden = true;
      const action = this._confirming;
      this._confirming = null;
      if (action) {
        void this._send(action);
      }
    });
    no.addEventListener('click', () => {
      this._ask.hidden = true;
      this._confirming = null;
    });
    this._pause.addEventListener('click', () => void this._send('pause'));
    this._resume.addEventListener('click', () => void this._send('resume'));
  }

  /** Called after a control was applied, so the panel fetches the project again. */
  onDone: () => void = () => undefined;

  reset(): void {
    this._message.textContent = '';
    this._ask.hidden = true;
    this._confirming = null;
  }

  render(detail: IProjectDetail): void {
    this._detail = detail;
    const status = detail.status ?? '';
    const progress = detail.progress;
    const position = progress?.position
      ? `Stage ${progress.position[0]} of ${progress.position[1]} · `
      : '';
    // at the end there is no stage to be in: the status says done
    this._progress.textContent =
      progress && status !== 'done'
        ? `${position}${duration(progress.current_s)} in ${detail.stage ?? '?'}`
        : '';
    this._progress.hidden = !this._progress.textContent;
    // which controls apply is the server's rule (app/controls.py `applicable`), shared by
    // every screen and the palette's commands
    const actions = detail.actions;
    const pauseAfter = detail.pause_after ?? '';
    this._cancel.hidden = !actions?.cancel;
    this._pause.hidden = !actions?.pause;
    this._pausing.hidden = !actions?.pausing;
    this._pausing.textContent = pauseAfter ? `Pausing after ${pauseAfter}` : '';
    this._rerun.hidden = !actions?.rerun;
    this._resume.hidden = !actions?.resume;
    const long: [HTMLButtonElement, ControlAction][] = [
      [this._pause, 'pause'],
      [this._rerun, 'rerun'],
      [this._cancel, 'cancel'],
      [this._resume, 'resume']
    ];
    for (const [button, action] of long) {
      const words = controlTitle(action, detail.stage ?? '?');
      button.setAttribute('aria-label', words);
      button.title = words;
    }
    for (const button of [
      this._cancel,
      this._pause,
      this._rerun,
      this._resume
    ]) {
      button.disabled = this._busy;
    }
    const rows = progress?.stages ?? [];
    const key = JSON.stringify(
      rows.map(r => [r.stage, Math.floor(r.seconds), r.visits])
    );
    if (key !== this._timesKey) {
      this._timesKey = key;
      this._timesList.textContent = '';
      for (const row of rows) {
        const item = el('li', {}, this._timesList);
        el('span', { className: 'ls-code', text: row.stage }, item);
        const visits = row.visits > 1 ? ` · ${row.visits} visits` : '';
        el(
          'span',
          { className: 'ls-muted', text: ` ${duration(row.seconds)}${visits}` },
          item
        );
      }
      this._timesTitle.textContent = `Time per stage (${rows.length} visited)`;
    }
    this._times.hidden = !rows.length;
  }

  private _stage(): string {
    return this._detail?.stage ?? 'this stage';
  }

  private _button(
    parent: HTMLElement,
    className: string,
    text: string
  ): HTMLButtonElement {
    return el('button', { className, text }, parent);
  }

  private _iconButton(
    parent: HTMLElement,
    className: string,
    icon: LabIcon
  ): HTMLButtonElement {
    const button = el('button', { className: `${className} ls-icon` }, parent);
    icon.element({ container: button, elementPosition: 'center' });
    return button;
  }

  private _confirm(action: ControlAction, text: string, label: string): void {
    this._confirming = action;
    this._askText.textContent = text;
    this._yes.textContent = label;
    this._ask.hidden = false;
    this._yes.focus();
  }

  private async _send(action: ControlAction): Promise<void> {
    const detail = this._detail;
    if (!detail) {
      return;
    }
    this._busy = true;
    this.render(detail);
    this._message.className = 'ls-control-message';
    this._message.textContent = 'sending…';
    try {
      const answer = await api.control({
        path: detail.path,
        action,
        stage: action === 'resume' ? null : (detail.stage ?? null)
      });
      this._message.className = 'ls-control-message ls-ok';
      this._message.textContent = answer.message;
      this.onDone();
    } catch (error) {
      this._message.className = 'ls-control-message ls-err';
      this._message.textContent = `Not done: ${(error as Error).message}`;
    } finally {
      this._busy = false;
      this.render(this._detail ?? detail);
    }
  }

  private _detail: IProjectDetail | null = null;
  private _busy = false;
  private _confirming: ControlAction | null = null;
  private _timesKey = '';
  private _progress: HTMLElement;
  private _cancel: HTMLButtonElement;
  private _pause: HTMLButtonElement;
  private _pausing: HTMLElement;
  private _rerun: HTMLButtonElement;
  private _resume: HTMLButtonElement;
  private _ask: HTMLElement;
  private _askText: HTMLElement;
  private _yes: HTMLButtonElement;
  private _message: HTMLElement;
  private _times: HTMLDetailsElement;
  private _timesTitle: HTMLElement;
  private _timesList: HTMLUListElement;
}
