/**
 * The hand-over card in the panel: a stage the researcher does by hand. While the project
 * runs, one button, "Do it myself", takes the current stage; while the researcher holds a
 * stage, the card (`handoffcard.ts`, drawn alike on the dashboard) shows its task, the
 * checklist, a button that inserts a skeleton cell into the notebook, and the deliver form
 * with "Give back". Every request goes to the server's reply endpoint with a `handoff`
 * field; the data comes from disk, so it works with no kernel running.
 */

import type { IHandoffCard, IProjectDetail } from './answers';
import { api } from './api';
import { el } from './dom';
import { drawHandoffCard, takeLabel, tick } from './handoffcard';

export interface IHandoffActions {
  /** Insert `code` as a new cell below the active one of the current notebook. */
  insertCell: (code: string) => void;
}

export class HandoffView {
  readonly node: HTMLElement;

  constructor(
    parent: HTMLElement,
    private readonly _actions: IHandoffActions
  ) {
    this.node = el('section', { className: 'ls-handoff' }, parent);
    this._take = el(
      'button',
      {
        className: 'jp-Button jp-mod-styled ls-take',
        text: 'Do it myself',
        title: 'Take this stage: no worker runs it until you deliver it'
      },
      parent
    );
    this._take.addEventListener('click', () => void this._send('take'));
    this._message = el('p', { className: 'ls-handoff-message' }, parent);
    this._message.setAttribute('role', 'status');
  }

  render(detail: IProjectDetail): void {
    this._path = detail.path;
    const card = detail.handoff ?? null;
    const gate = detail.pending?.kind === 'gate';
    const canTake = gate || (detail.status === 'running' && !detail.pending);
    // a style, not `hidden`: jp-Button's own display would win over the attribute
    this._take.style.display = !card && canTake ? '' : 'none';
    this._take.textContent = takeLabel(
      gate ? (detail.pending?.proposed_next ?? 'the next stage') : null
    );
    this.node.style.display = card ? '' : 'none';
    if (!card) {
      this._shown = null;
      this.node.textContent = '';
      return;
    }
    if (this._shown !== card.decision_id) {
      this._shown = card.decision_id;
      this._draw(card);
    }
    this._tick(card);
  }

  private _draw(card: IHandoffCard): void {
    this._list = drawHandoffCard(this.node, card, {
      send: (step, fields) => void this._send(step, fields),
      insertCell: code => this._actions.insertCell(code)
    });
  }

  private _tick(card: IHandoffCard): void {
    if (this._list) {
      tick(this._list, card);
    }
  }

  private async _send(
    step: string,
    fields: Record<string, string> = {}
  ): Promise<void> {
    this._message.textContent = `Sending ${step}…`;
    try {
      const answer = await api.handoff(this._path, step, fields);
      this._message.textContent = answer.message;
    } catch (error) {
      this._message.textContent = `Refused: ${(error as Error).message}`;
    }
  }

  private _path = '';
  private _shown: string | null = null;
  private _list: HTMLUListElement | null = null;
  private _take: HTMLButtonElement;
  private _message: HTMLElement;
}
