/**
 * The hand-over card: a stage the researcher does by hand. While the project runs, one
 * button, "Do it myself", takes the current stage; while the researcher holds a stage, the
 * card shows its task (goal, skill, PROCESS.md digest), the required outputs as a checklist
 * that ticks as the files appear, a button that inserts a skeleton cell into the notebook,
 * and the deliver form (summary, next stage) with "Give back". Every request goes to the
 * server's reply endpoint with a `handoff` field; the data comes from disk, so it works
 * with no kernel running.
 */

import type { IHandoffCard, IProjectDetail } from './answers';
import { api } from './api';
import { el } from './dom';

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
    this._take.textContent = gate
      ? `Do ${detail.pending?.proposed_next ?? 'the next stage'} myself`
      : 'Do it myself';
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
    const node = this.node;
    node.textContent = '';
    node.dataset.decision = card.decision_id;
    el('h3', { text: `${card.stage} is yours` }, node);
    el('p', { className: 'ls-goal', text: `Goal: ${card.goal}` }, node);
    if (card.feedback) {
      el('p', { className: 'ls-summary', text: card.feedback }, node);
    }
    const skill = el('details', { className: 'ls-handoff-skill' }, node);
    el('summary', { text: 'The stage’s skill' }, skill);
    el('pre', { text: card.skill }, skill);
    const digest = el('details', { className: 'ls-handoff-digest' }, node);
    el('summary', { text: 'PROCESS.md — the project so far' }, digest);
    el('pre', { text: card.digest }, digest);
    el('p', { text: 'Required outputs' }, node);
    this._list = el('ul', { className: 'ls-handoff-check' }, node);
    const insert = el(
      'button',
      { className: 'jp-mod-styled ls-insert', text: 'Insert a skeleton cell' },
      node
    );
    insert.addEventListener('click', () =>
      this._actions.insertCell(card.skeleton)
    );
    const label = el('label', { className: 'ls-field', text: 'Summary' }, node);
    const summary = el('textarea', { className: 'ls-comment' }, label);
    summary.rows = 3;
    summary.placeholder = 'What you did and found (kept in PROCESS.md)';
    const nextLabel = el(
      'label',
      { className: 'ls-field', text: 'Next' },
      node
    );
    const next = el('select', { className: 'ls-target' }, nextLabel);
    for (const stage of card.allowed_next) {
      const option = el('option', { text: stage }, next);
      option.value = stage;
    }
    next.value = card.default_next;
    const buttons = el('div', { className: 'ls-buttons' }, node);
    const deliver = el(
      'button',
      {
        className: 'jp-Button jp-mod-styled jp-mod-accept ls-deliver',
        text: 'Deliver'
      },
      buttons
    );
    const back = el(
      'button',
      { className: 'jp-Button jp-mod-styled ls-give-back', text: 'Give back' },
      buttons
    );
    deliver.addEventListener(
      'click',
      () =>
        void this._send('deliver', {
          summary: summary.value,
          next_stage: next.value,
          decision_id: card.decision_id
        })
    );
    back.addEventListener(
      'click',
      () => void this._send('give-back', { decision_id: card.decision_id })
    );
  }

  /** The checklist: one line per required output, ticked once it is on disk. */
  private _tick(card: IHandoffCard): void {
    const list = this._list;
    if (!list) {
      return;
    }
    list.textContent = '';
    for (const output of card.outputs) {
      const item = el(
        'li',
        {
          className: output.ready ? 'ls-ready' : 'ls-missing',
          text: `${output.ready ? '☑' : '☐'} ${output.path}`
        },
        list
      );
      item.dataset.ready = String(output.ready);
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
