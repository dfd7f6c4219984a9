/**
 * The dashboard's budget card (`jupyter/dashboard/budget_card.py`): what the project spent,
 * on what, the limit it reached, a field for the new limit, Raise and resume (a reply with a
 * `budget` field, as `reply y --budget KEY=N`) and Stop (a reply no). Through the server
 * extension's reply endpoint; only without one over the widget's comm.
 */

import { el, statusWords } from '../dom';
import {
  answered,
  follow,
  outcomeLine,
  sendReply,
  showDecision,
  showOutcome,
  type IRenderProps,
  type IWidgetModel
} from './host';
import type { IBudgetCardView, IOutcome } from './views';

/** The card's synced traits. */
export interface IBudgetTraits {
  card: Partial<IBudgetCardView>;
  root: string;
  outcome: Partial<IOutcome>;
}

const BUTTON = 'jp-Button jp-mod-styled';

class BudgetCard {
  constructor(
    private readonly _model: IWidgetModel<IBudgetTraits>,
    private readonly _root: HTMLElement
  ) {
    const card = (this._card = el('div', {
      className: 'ls-card ls-budgetcard'
    }));
    _root.appendChild(card);
    card.setAttribute('role', 'region');
    this._title = el('h3', { className: 'ls-card-title' }, card);
    this._spent = el('div', { className: 'ls-budget-spent' }, card);
    this._onWhat = el('div', { className: 'ls-muted ls-budget-on' }, card);
    const row = (this._row = el('div', { className: 'ls-row ls-live' }, card));
    const label = el('label', { className: 'ls-row' }, row);
    this._unit = el('span', { text: 'new limit' }, label);
    const limit = (this._limit = el(
      'input',
      { className: 'ls-budget-limit' },
      label
    ));
    limit.type = 'number';
    limit.min = '0';
    limit.step = 'any';
    this._raise = el(
      'button',
      {
        className: `${BUTTON} jp-mod-accept ls-budget-raise`,
        text: 'Raise and resume'
      },
      row
    );
    this._stop = el(
      'button',
      { className: `${BUTTON} jp-mod-reject ls-budget-stop`, text: 'Stop' },
      row
    );
    this._outcome = outcomeLine(card);
    this._raise.addEventListener('click', () => void this._decide(true));
    this._stop.addEventListener('click', () => void this._decide(false));
    limit.addEventListener('keydown', e => {
      if (e.key === 'Enter') {
        void this._decide(true);
      }
    });
  }

  draw(): void {
    const c = this._model.get('card') || {};
    if (!showDecision(this._root, this._card, c, 'budget')) {
      return;
    }
    const key = c.key || '';
    this._title.textContent = c.heading || '';
    this._spent.textContent = c.spent || '';
    this._onWhat.textContent = c.on_what || '';
    this._unit.textContent = `new ${c.scope || 'project'} limit, ${key} `;
    this._limit.setAttribute(
      'aria-label',
      `New limit of ${key || 'the budget'}`
    );
    if (this._limit.dataset.decision !== c.id) {
      this._limit.dataset.decision = c.id;
      this._limit.value = c.suggested === undefined ? '' : String(c.suggested);
      this._busy = false;
      showOutcome(this._outcome, '', '');
    }
    this._row.hidden = !!c.settled;
    this._raise.disabled = this._stop.disabled = this._busy || !!c.settled;
    const o = this._model.get('outcome') || {};
    if (o.text) {
      showOutcome(this._outcome, o.state === 'refused' ? 'err' : 'ok', o.text);
    }
  }

  private async _decide(raise: boolean): Promise<void> {
    const c = this._model.get('card') || {};
    if (this._busy || !c.id || c.settled) {
      return;
    }
    const key = c.key || 'tokens';
    const value = Number(this._limit.value);
    if (raise && !(value > 0)) {
      const above = c.limit || 0;
      showOutcome(
        this._outcome,
        'err',
        `give the new limit: a number above ${above}`
      );
      return;
    }
    this._busy = true;
    this._raise.disabled = this._stop.disabled = true;
    showOutcome(this._outcome, '', 'sending…');
    const answer = await sendReply(
      this._model,
      {
        approve: raise,
        comment: '',
        decision_id: c.id,
        to_stage: null,
        budget: raise ? { [key]: value } : null
      },
      `no answer from the kernel within 2 s: reply with %lightscientist reply y --budget ${key}=…`,
      async data => {
        const status = data.status ? ` (${statusWords(data.status)})` : '';
        return (raise ? 'budget raised' : 'stopped') + status;
      }
    );
    this._busy = !answered(this._outcome, answer, [this._raise, this._stop]);
  }

  private _busy = false;
  private _card: HTMLElement;
  private _title: HTMLElement;
  private _spent: HTMLElement;
  private _onWhat: HTMLElement;
  private _row: HTMLElement;
  private _unit: HTMLElement;
  private _limit: HTMLInputElement;
  private _raise: HTMLButtonElement;
  private _stop: HTMLButtonElement;
  private _outcome: HTMLElement;
}

function render({ model, el: root }: IRenderProps<IBudgetTraits>): () => void {
  const card = new BudgetCard(model, root);
  return follow(model, 'change:card change:outcome', () => card.draw());
}

export default { render };
