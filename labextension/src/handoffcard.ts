/**
 * The hand-over card drawn, the same in the panel (`handoff.ts`) and on the dashboard
 * (`widgets/handoff.ts`): the stage's task (goal, the reviewer's note, skill, PROCESS.md
 * digest), the required outputs as a checklist that ticks as the files appear, a button
 * that inserts a skeleton cell, and the deliver form (summary, next stage) with Give back.
 * How a step is sent and how a cell is inserted are the screen's own (`IHandoffCardActions`).
 * No JupyterLab import: the dashboard's widgets bundle it.
 */

import type { IHandoffCard } from './answers';
import { el } from './dom';

export type HandoffStep = 'take' | 'deliver' | 'give-back';

export interface IHandoffCardActions {
  /** Send a hand-over step with its fields. */
  send: (step: HandoffStep, fields: Record<string, string>) => void;
  /** Insert `code` as a new cell below (the screen's notebook). */
  insertCell: (code: string) => void;
}

/** Fill `node` with `card`'s task and forms; returns the checklist, which `tick` redraws. */
export function drawHandoffCard(
  node: HTMLElement,
  card: IHandoffCard,
  actions: IHandoffCardActions
): HTMLUListElement {
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
  const list = el('ul', { className: 'ls-handoff-check' }, node);
  const insert = el(
    'button',
    {
      className: 'jp-mod-styled ls-insert',
      text: 'Insert a skeleton cell below'
    },
    node
  );
  insert.addEventListener('click', () => actions.insertCell(card.skeleton));
  const label = el('label', { className: 'ls-field', text: 'Summary' }, node);
  const summary = el('textarea', { className: 'ls-comment' }, label);
  summary.rows = 3;
  summary.placeholder = 'What you did and found (kept in PROCESS.md)';
  const nextLabel = el('label', { className: 'ls-field', text: 'Next' }, node);
  const next = el('select', { className: 'ls-target' }, nextLabel);
  for (const stage of card.allowed_next) {
    el('option', { text: stage }, next).value = stage;
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
  deliver.addEventListener('click', () =>
    actions.send('deliver', {
      summary: summary.value,
      next_stage: next.value,
      decision_id: card.decision_id
    })
  );
  back.addEventListener('click', () =>
    actions.send('give-back', { decision_id: card.decision_id })
  );
  tick(list, card);
  return list;
}

/** The checklist: one line per required output, ticked once it is on disk. */
export function tick(list: HTMLElement, card: IHandoffCard): void {
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

/** The take button's words: at a gate, the stage its approval moves to. */
export function takeLabel(gateNext: string | null): string {
  return gateNext ? `Do ${gateNext} myself` : 'Do it myself';
}
