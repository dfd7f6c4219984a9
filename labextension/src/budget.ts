/**
 * What a project spends, and the pause before it spends too much (issue 14), in the panel:
 * the project's usage (tokens in and out, cost or "cost unknown", model calls), each stage's
 * (a list; the stage graph's hover titles carry them too, from `graph_view.py`), and a
 * pending decision of kind `budget` as a card: what was spent, on what, the limit reached,
 * a field for the new limit, "Raise and resume" (a reply approve=true with a `budget`
 * field) and "Stop" (approve=false). The
 * figures come from `detail.usage` (`app/usage.py` `panel_usage`); the words follow the
 * dashboard's card (`jupyter/dashboard/budget_card.py`).
 */

import type {
  IBudgetDetails,
  IProjectDetail,
  IReplyAnswer,
  IUsageFigures,
  IUsageTotal
} from './answers';
import { requestAPI } from './api';
import { el, statusWords } from './dom';

/** The new limit the field suggests: this many times the one reached. */
export const RAISE_BY = 2;

/** The limit the card proposes, and a notification's Raise sends: the spent limit times
 * `RAISE_BY`, in its own unit (whole tokens, cents of a dollar). */
export function raisedLimit(details: IBudgetDetails | undefined): {
  key: string;
  value: number;
} {
  const key = details?.key || 'tokens';
  const suggested = Number(details?.limit ?? 0) * RAISE_BY;
  return {
    key,
    value: key === 'tokens' ? Math.round(suggested) : +suggested.toFixed(2)
  };
}

function count(value: number | undefined): string {
  return (value ?? 0).toLocaleString('en-US');
}

/** `1,234 tokens (812 in, 422 out) · $0.0012 · 5 model calls` ('' with no call yet). */
export function spendWords(figures: IUsageFigures | undefined): string {
  if (!figures?.model_calls) {
    return '';
  }
  const calls = `${count(figures.model_calls)} model call${figures.model_calls === 1 ? '' : 's'}`;
  const unreported = figures.unreported ?? 0;
  if (unreported === figures.model_calls) {
    return `usage not reported · ${calls}`; // a coding agent's: never shown as zero
  }
  const est = figures.estimated ? ' (est.)' : '';
  const untold = unreported ? ` (${unreported} not reported)` : '';
  return (
    `${count(figures.tokens)} tokens${est}${untold} (${count(figures.input_tokens)} in, ` +
    `${count(figures.output_tokens)} out) · ${figures.cost_words} · ${calls}`
  );
}

/** A limit as the CLI writes it: `4,000 tokens`, `$5.00`, `3 hours`. */
export function shown(key: string, value: number): string {
  if (key === 'usd') {
    return `$${value.toFixed(2)}`;
  }
  return `${count(value)} ${key}`;
}

export class BudgetView {
  readonly node: HTMLElement;

  constructor(parent: HTMLElement) {
    const n = (this.node = el('section', { className: 'ls-usage' }, parent));
    n.setAttribute('aria-label', 'Usage and budget');
    this._total = el('p', { className: 'ls-row ls-usage-total' }, n);
    const stages = el('details', { className: 'ls-usage-stages' }, n);
    el('summary', { text: 'Usage by stage' }, stages);
    this._stages = el('ul', { className: 'ls-usage-list' }, stages);
    this._card = el('div', { className: 'ls-card ls-budgetcard' }, n);
    this._card.setAttribute('role', 'region');
    this._outcome = el('p', { className: 'ls-outcome' }, n);
    this._outcome.setAttribute('role', 'status');
    this._outcome.setAttribute('aria-live', 'polite');
  }

  /** Forget what was shown: another project is selected. */
  reset(): void {
    this._shown = null;
    this._settled = null;
    this._outcome.textContent = '';
    this._outcome.className = 'ls-outcome';
  }

  render(detail: IProjectDetail): void {
    this._path = detail.path;
    const usage = detail.usage;
    const words = spendWords(usage?.total);
    this.node.hidden = !words && detail.pending?.kind !== 'budget';
    this._drawTotal(usage?.total, words);
    this._drawStages(usage?.stages ?? {});
    const pending = detail.pending?.kind === 'budget' ? detail.pending : null;
    this._card.hidden = !pending;
    if (!pending) {
      if (this._shown) {
        const words = this._sent ?? 'no longer pending';
        this._settled = `Budget ${this._shown}: ${words}`;
      }
      if (this._settled) {
        // kept up to date: the project moves on after the decision is gone
        const where = `${statusWords(detail.status)} at '${detail.stage ?? '?'}'`;
        this._say('ls-ok', `${this._settled}; the project is ${where}.`);
      }
      this._shown = null;
      this._sent = null;
      return;
    }
    if (this._shown !== pending.id) {
      this._shown = pending.id;
      this._settled = null;
      this._sent = null;
      this._say('', '');
      this._drawCard(
        pending.id,
        pending.stage,
        pending.summary,
        pending.details
      );
    }
  }

  private _drawTotal(total: IUsageTotal | undefined, words: string): void {
    const node = this._total;
    node.textContent = '';
    if (!total || !words) {
      return;
    }
    el('span', { className: 'ls-badge', text: 'Usage' }, node);
    // the chip short enough for a narrow panel; the in/out split and the calls beside it
    const est = total.estimated ? ' (est.)' : '';
    const text = `${count(total.tokens)} tokens${est} · ${total.cost_words}`;
    el(
      'span',
      { className: 'ls-chip ls-usage-words', text, title: words },
      node
    );
    const calls = `${count(total.model_calls)} model call${total.model_calls === 1 ? '' : 's'}`;
    const split = `${count(total.input_tokens)} in, ${count(total.output_tokens)} out · ${calls}`;
    el('span', { className: 'ls-muted ls-usage-split', text: split }, node);
    const limits = Object.entries(total.budget ?? {});
    if (limits.length) {
      const text = 'budget ' + limits.map(([k, v]) => shown(k, v)).join(', ');
      el('span', { className: 'ls-muted ls-usage-budget', text }, node);
    }
  }

  private _drawStages(stages: Record<string, IUsageFigures>): void {
    const list = this._stages;
    list.textContent = '';
    const entries = Object.entries(stages).filter(([, u]) => u.model_calls);
    if (!entries.length) {
      el('li', { className: 'ls-empty', text: 'No model calls yet.' }, list);
      return;
    }
    for (const [stage, figures] of entries) {
      const item = el('li', { className: 'ls-usage-stage' }, list);
      item.dataset.stage = stage;
      el('span', { className: 'ls-output-stage', text: stage }, item);
      el(
        'span',
        { className: 'ls-muted', text: ` ${spendWords(figures)}` },
        item
      );
    }
  }

  private _drawCard(
    id: string,
    stage: string,
    summary: string,
    details: IBudgetDetails | undefined
  ): void {
    const card = this._card;
    card.textContent = '';
    card.dataset.decision = id;
    const scope = details?.scope || 'project';
    const key = details?.key || 'tokens';
    const limit = Number(details?.limit ?? 0);
    const heading = `Budget: the ${scope} budget of ${shown(key, limit)} is spent`;
    card.setAttribute('aria-label', heading);
    el('h3', { className: 'ls-card-title', text: heading }, card);
    const [spent, onWhat] = summary.split('; by stage visit:');
    el('p', { className: 'ls-budget-spent', text: spent }, card);
    if (onWhat !== undefined) {
      const text = `By stage visit:${onWhat}`;
      el('p', { className: 'ls-muted ls-budget-on', text }, card);
    }
    el('p', { className: 'ls-muted', text: `Stopped at '${stage}'.` }, card);
    const row = el('div', { className: 'ls-row' }, card);
    const label = el(
      'label',
      { className: 'ls-field', text: `New ${scope} limit, ${key} ` },
      row
    );
    const field = el('input', { className: 'ls-budget-limit' }, label);
    field.type = 'number';
    field.min = '0';
    field.step = 'any';
    field.setAttribute('aria-label', `New limit of ${key}`);
    field.value = String(raisedLimit(details).value);
    const raise = el(
      'button',
      {
        className: 'jp-Button jp-mod-styled jp-mod-accept ls-budget-raise',
        text: 'Raise and resume',
        title: `Raise the ${key} limit and go on where the project stopped`
      },
      row
    );
    const stop = el(
      'button',
      {
        className: 'jp-Button jp-mod-styled jp-mod-reject ls-budget-stop',
        text: 'Stop',
        title: "End the project (failed, reason 'budget')"
      },
      row
    );
    const decide = async (yes: boolean) => {
      const value = Number(field.value);
      if (yes && !(value > 0)) {
        this._say('ls-err', `Give the new limit: a number above ${limit}.`);
        return;
      }
      raise.disabled = stop.disabled = true;
      this._say('', 'Sending…');
      try {
        const answer = await requestAPI<IReplyAnswer>(
          'reply',
          {},
          {
            method: 'POST',
            body: JSON.stringify({
              path: this._path,
              approve: yes,
              comment: '',
              to_stage: null,
              decision_id: id,
              budget: yes ? { [key]: value } : null
            })
          }
        );
        const status = answer.status ? ` (${statusWords(answer.status)})` : '';
        const verb = yes ? `raised to ${shown(key, value)}` : 'stopped';
        this._sent = verb;
        const said = [`Budget ${id}: ${verb}${status}`, ...answer.messages];
        this._say('ls-ok', said.join(' '));
      } catch (error) {
        this._say('ls-err', `Refused: ${(error as Error).message}`);
        raise.disabled = stop.disabled = false;
      }
    };
    raise.addEventListener('click', () => void decide(true));
    stop.addEventListener('click', () => void decide(false));
    field.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        void decide(true);
      }
    });
  }

  private _say(cls: string, text: string): void {
    this._outcome.className = `ls-outcome ${cls}`.trim();
    this._outcome.textContent = text;
  }

  private _path = '';
  private _shown: string | null = null;
  private _sent: string | null = null;
  private _settled: string | null = null;
  private _total: HTMLElement;
  private _stages: HTMLUListElement;
  private _card: HTMLElement;
  private _outcome: HTMLElement;
}
