/**
 * The dashboard's gate card (`jupyter/dashboard/gate_actions.py`): what a decision approves,
 * at a review stage the reviews, what the stage recalled from memory, and one row of
 * controls. A click goes through the server extension's reply endpoint (it works after a
 * reload and with the kernel gone); only without a server extension over the widget's comm.
 * The reviews, the recalled entries and the reply's words are the panel's own drawing.
 */

import { OPEN_CELL, renderChecks } from '../checks';
import { renderDiffs } from '../diff';
import { el } from '../dom';
import { renderPermission } from '../permission';
import { renderRecalled } from '../recalled';
import { describeAnswered, describeReply } from '../replywords';
import { renderReviews } from '../reviews';
import {
  answered,
  ANSWER_MS,
  follow,
  call,
  located,
  outcomeLine,
  sendReply,
  showDecision,
  showOutcome,
  type IPageConfig,
  type IRenderProps,
  type IWidgetModel
} from './host';
import type { IGateCardView, IOutcome } from './views';

/** The card's synced traits. */
export interface IGateTraits {
  card: Partial<IGateCardView>;
  root: string;
  outcome: Partial<IOutcome>;
}

const BUTTON = 'jp-Button jp-mod-styled';

/** After a reply the run takes: watch the project for up to `ANSWER_MS` for its verdict. */
async function settled(
  cfg: IPageConfig,
  rel: string,
  id: string,
  fallback: string
): Promise<string> {
  const until = Date.now() + ANSWER_MS;
  while (Date.now() < until) {
    await new Promise(resolve => setTimeout(resolve, 250));
    const got = await call(
      cfg,
      'GET',
      'project?path=' + encodeURIComponent(rel)
    );
    const found = (got.data?.decisions || []).find((d: any) => d.id === id);
    if (found) {
      return describeAnswered(found);
    }
  }
  return fallback;
}

/** The files under review: links into JupyterLab when the project is under the server
 * root, else their names. */
function drawFiles(list: HTMLElement, files: string[], root: string): void {
  list.textContent = '';
  list.hidden = !files.length;
  const where = located(root);
  for (const name of files) {
    const item = el('li', {}, list);
    if (!where) {
      el('code', { className: 'ls-code', text: name }, item);
      continue;
    }
    const link = el(
      'a',
      { className: 'ls-link', text: name, title: `open ${name} in a new tab` },
      item
    );
    const folder = where.rel ? where.rel + '/' : '';
    link.href = `${where.cfg.base}lab/tree/${folder}${name}`;
    link.target = '_blank';
    link.rel = 'noopener';
  }
}

/** At a review stage: each reviewer's scores and the decision they add up to. */
function drawReviews(box: HTMLElement, reviews: IGateCardView['reviews']) {
  box.textContent = '';
  box.hidden = !reviews;
  if (!reviews) {
    return;
  }
  const title = reviews.round ? `Reviews · round ${reviews.round}` : 'Reviews';
  const body = el('div', {}, box);
  renderReviews(body, reviews);
  body.before(el('h4', { className: 'ls-reviews-title', text: title }));
}

/** At a gate: what changed in each file, and where the paper's numbers come from, drawn as
 * the panel draws them. The rendered Markdown is the kernel's (`markdown_diff`: every raw
 * HTML of the file escaped, unsafe links dropped), shown as the dashboard's HTML always was;
 * a cell's button opens it through JupyterLab's command linker (the command makes the
 * kernel's absolute path relative to the server root). */
function drawUnderReview(box: HTMLElement, c: Partial<IGateCardView>): void {
  box.textContent = '';
  renderDiffs(box, c.diff, html => html);
  if (c.diff_error) {
    el('p', { className: 'ls-muted', text: `(${c.diff_error})` }, box);
  }
  renderChecks(box, c.checks, (button, path, cell) => {
    button.dataset.commandlinkerCommand = OPEN_CELL;
    button.dataset.commandlinkerArgs = JSON.stringify({ path, cell });
  });
}

class GateCard {
  constructor(
    private readonly _model: IWidgetModel<IGateTraits>,
    private readonly _root: HTMLElement
  ) {
    const card = (this._card = el('div', { className: 'ls-card ls-gatecard' }));
    _root.appendChild(card);
    card.setAttribute('role', 'region');
    this._title = el('h3', { className: 'ls-card-title' }, card);
    this._badge = el('span', { className: 'ls-badge' }, card);
    this._summary = el('div', { className: 'ls-gate-summary' }, card);
    this._files = el('ul', { className: 'ls-files' }, card);
    this._reviews = el('section', { className: 'ls-reviews' }, card);
    this._reviews.setAttribute('aria-label', 'Reviews');
    this._recalled = el('div', {}, card);
    this._permission = el('div', {}, card);
    const row = (this._row = el('div', { className: 'ls-row ls-live' }, card));
    this._approve = el(
      'button',
      { className: `${BUTTON} jp-mod-accept ls-approve`, text: 'Approve' },
      row
    );
    this._reject = el(
      'button',
      { className: `${BUTTON} jp-mod-reject ls-reject`, text: 'Reject' },
      row
    );
    const comment = (this._comment = el(
      'input',
      { className: 'ls-comment' },
      row
    ));
    comment.type = 'text';
    comment.placeholder = 'comment (optional)';
    comment.setAttribute(
      'aria-label',
      'Comment (kept in PROCESS.md; on reject, for the next worker)'
    );
    this._targetLabel = el(
      'label',
      { className: 'ls-row ls-muted', text: 'on reject, back to' },
      row
    );
    this._target = el('select', { className: 'ls-target' }, this._targetLabel);
    this._target.setAttribute('aria-label', 'On reject, go back to this stage');
    this._outcome = outcomeLine(card);
    this._under = el('div', { className: 'ls-under-review' }, card);
    this._dead = el('div', { className: 'ls-dead' }, _root);
    this._dead.setAttribute('role', 'alert');
    el('b', { text: 'The kernel behind this dashboard is gone' }, this._dead);
    el(
      'span',
      {
        text:
          ' (restarted or shut down). Approve / Reject still reach the project through ' +
          'the server; Resume, at the top of the dashboard, runs it again.'
      },
      this._dead
    );
    this._approve.addEventListener('click', () => void this._decide(true));
    this._reject.addEventListener('click', () => void this._decide(false));
    comment.addEventListener('keydown', e => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        void this._decide(true);
      }
    });
  }

  draw(): void {
    const c = this._model.get('card') || {};
    if (!showDecision(this._root, this._card, c, 'decision')) {
      return;
    }
    const gate = c.kind === 'gate';
    const settledNow = !!c.settled;
    // answered: the card folds to the line that says how (the timeline keeps it)
    for (const part of [
      this._title,
      this._summary,
      this._files,
      this._reviews,
      this._recalled,
      this._permission,
      this._under
    ]) {
      part.classList.toggle('ls-folded', settledNow);
    }
    this._title.textContent = c.heading || '';
    this._badge.textContent = c.badge || '';
    this._badge.hidden = !c.badge;
    this._summary.textContent = c.summary || '';
    this._summary.hidden = !c.summary;
    this._summary.title = c.summary_full || '';
    drawFiles(this._files, c.files || [], this._model.get('root'));
    drawReviews(this._reviews, c.reviews || null);
    this._recalled.textContent = '';
    renderRecalled(this._recalled, c.recalled || []);
    if (this._under.dataset.decision !== c.id) {
      this._under.dataset.decision = c.id;
      drawUnderReview(this._under, c);
      this._permission.textContent = '';
      this._choices = c.permission
        ? renderPermission(
            this._permission,
            c.permission,
            html => html,
            pick => this._decide(pick.approve, pick.name)
          )
        : [];
    }
    this._approve.textContent = gate ? 'Approve' : 'Yes';
    this._reject.textContent = gate ? 'Reject' : 'No';
    const on = c.stage || '';
    this._approve.setAttribute(
      'aria-label',
      (gate ? 'Approve ' : 'Answer yes to ') + on
    );
    this._reject.setAttribute(
      'aria-label',
      (gate ? 'Reject ' : 'Answer no to ') + on
    );
    if (this._target.dataset.decision !== c.id) {
      // a new decision: its own targets, an empty comment, the buttons free again
      this._target.dataset.decision = c.id;
      this._target.textContent = '';
      for (const [label, value] of c.targets || []) {
        el('option', { text: label }, this._target).value = value;
      }
      this._comment.value = '';
      this._busy = false;
    }
    this._targetLabel.hidden = !gate || !(c.targets || []).length;
    // a permission's buttons are the agent's options: no Yes / No, no comment
    this._row.hidden = settledNow || !!c.permission;
    this._approve.disabled = this._reject.disabled = this._busy || settledNow;
    for (const choice of this._choices) {
      choice.disabled = this._busy || settledNow;
    }
    const o = this._model.get('outcome') || {};
    if (o.text && (settledNow || !this._busy)) {
      showOutcome(this._outcome, o.state === 'refused' ? 'err' : 'ok', o.text);
    } else if (!settledNow && !this._busy) {
      showOutcome(this._outcome, '', '');
    }
    this._dead.hidden = settledNow; // the banner matters where a decision still waits
  }

  /** Send the reply: `comment` given (a permission's option) or the comment field's. */
  private async _decide(approve: boolean, comment?: string): Promise<void> {
    const c = this._model.get('card') || {};
    if (this._busy || !c.id || c.settled) {
      return;
    }
    const id = c.id;
    const kind = c.kind || 'gate';
    this._busy = true;
    this._approve.disabled = this._reject.disabled = true;
    for (const choice of this._choices) {
      choice.disabled = true;
    }
    showOutcome(this._outcome, '', 'sending…');
    const reply = {
      approve,
      comment: comment ?? this._comment.value.trim(),
      decision_id: id,
      to_stage: !approve && kind === 'gate' ? this._target.value || null : null
    };
    const answer = await sendReply(
      this._model,
      reply,
      'no answer from the kernel within 2 s: reply from the LightScientist side panel ' +
        'or with %lightscientist reply y|n',
      (data, cfg, rel) => {
        const said = describeReply(data);
        return data.applied_by === 'runner'
          ? settled(cfg, rel, id, said)
          : Promise.resolve(said);
      }
    );
    this._busy = !answered(this._outcome, answer, [
      this._approve,
      this._reject,
      ...this._choices
    ]);
  }

  private _busy = false;
  private _card: HTMLElement;
  private _title: HTMLElement;
  private _badge: HTMLElement;
  private _summary: HTMLElement;
  private _files: HTMLElement;
  private _reviews: HTMLElement;
  private _recalled: HTMLElement;
  private _permission: HTMLElement;
  private _choices: HTMLButtonElement[] = [];
  private _row: HTMLElement;
  private _approve: HTMLButtonElement;
  private _reject: HTMLButtonElement;
  private _comment: HTMLInputElement;
  private _targetLabel: HTMLElement;
  private _target: HTMLSelectElement;
  private _outcome: HTMLElement;
  private _under: HTMLElement;
  private _dead: HTMLElement;
}

function render({ model, el: root }: IRenderProps<IGateTraits>): () => void {
  const card = new GateCard(model, root);
  return follow(model, 'change:card change:outcome change:root', () =>
    card.draw()
  );
}

export default { render };
