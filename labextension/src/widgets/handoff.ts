/**
 * The dashboard's hand-over card (`jupyter/dashboard/handoff_card.py`): "Do it myself" while
 * the project runs a stage or waits at a gate, and while the researcher holds a stage the
 * card the panel draws too (`handoffcard.ts`). A step goes through the server extension's
 * reply endpoint (`{"handoff": step}`), only without one over the widget's comm; inserting
 * the skeleton asks the kernel, which shows it as a bundle the extension's renderer turns
 * into the cell below the dashboard's.
 */

import type { IHandoffCard } from '../answers';
import { el } from '../dom';
import { drawHandoffCard, tick, type HandoffStep } from '../handoffcard';
import {
  act,
  follow,
  outcomeLine,
  showOutcome,
  viaComm,
  type IRenderProps,
  type IWidgetModel
} from './host';
import type { IOutcome, ITakeView } from './views';

/** The card's synced traits. */
export interface IHandoffTraits {
  card: Partial<IHandoffCard>;
  take: Partial<ITakeView>;
  root: string;
  outcome: Partial<IOutcome>;
}

class HandoffCardView {
  constructor(
    private readonly _model: IWidgetModel<IHandoffTraits>,
    root: HTMLElement
  ) {
    this._take = el(
      'button',
      {
        className: 'jp-Button jp-mod-styled ls-take',
        title: 'Take this stage: no worker runs it until you deliver it'
      },
      root
    );
    this._take.addEventListener('click', () => void this._send('take', {}));
    this._card = el('section', { className: 'ls-handoff' }, root);
    this._card.setAttribute('aria-label', 'Hand-over');
    this._outcome = outcomeLine(root);
  }

  draw(): void {
    const take = this._model.get('take') || {};
    const card = this._model.get('card') || {};
    // a style, not `hidden`: jp-Button's own display would win over the attribute
    this._take.style.display = take.label ? '' : 'none';
    this._take.textContent = take.label || '';
    this._card.style.display = card.decision_id ? '' : 'none';
    if (!card.decision_id) {
      this._shown = null;
      this._list = null;
    } else if (this._shown !== card.decision_id) {
      this._shown = card.decision_id;
      this._list = drawHandoffCard(this._card, card as IHandoffCard, {
        send: (step, fields) => void this._send(step, fields),
        insertCell: () => void this._insert()
      });
    } else if (this._list) {
      tick(this._list, card as IHandoffCard);
    }
    const o = this._model.get('outcome') || {};
    if (o.text && !this._busy) {
      showOutcome(this._outcome, o.state === 'refused' ? 'err' : 'ok', o.text);
    }
  }

  private async _send(
    step: HandoffStep,
    fields: Record<string, string>
  ): Promise<void> {
    this._busy = true;
    showOutcome(this._outcome, '', `sending ${step}…`);
    const answer = await act(
      this._model,
      'reply',
      { handoff: step, ...fields },
      { kind: 'handoff', step, fields },
      'no answer from the server or the kernel within 2 s: use the side panel'
    );
    this._busy = false;
    showOutcome(this._outcome, answer.ok ? 'ok' : 'err', answer.text);
  }

  /** The kernel shows the skeleton below the card, as a bundle the extension inserts. */
  private async _insert(): Promise<void> {
    const answer = await viaComm(
      this._model,
      { kind: 'insert' },
      'the kernel behind this dashboard does not answer: insert the skeleton from the ' +
        'LightScientist side panel'
    );
    if (!answer.ok || answer.text) {
      showOutcome(this._outcome, answer.ok ? 'ok' : 'err', answer.text);
    }
  }

  private _busy = false;
  private _shown: string | null = null;
  private _list: HTMLUListElement | null = null;
  private _take: HTMLButtonElement;
  private _card: HTMLElement;
  private _outcome: HTMLElement;
}

function render({ model, el: root }: IRenderProps<IHandoffTraits>): () => void {
  const view = new HandoffCardView(model, root);
  return follow(model, 'change:card change:take change:outcome', () =>
    view.draw()
  );
}

export default { render };
