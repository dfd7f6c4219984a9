/**
 * The pending decision of a project: what a gate approves (its outputs, the next stage) or
 * the question asked, a comment box, the stage a rejection goes back to, and the buttons;
 * for a coding agent's permission request, its card (`permission.ts`) with the agent's own
 * options as the buttons.
 */

import { Sanitizer } from '@jupyterlab/apputils';

import type { IPendingDecision, IProjectDetail } from './answers';
import { joinPath } from './api';
import { renderChecks } from './checks';
import { el } from './dom';
import { renderDiffs } from './diff';
import { renderPermission } from './permission';
import { renderRecalled } from './recalled';

const sanitizer = new Sanitizer();

export interface IGateActions {
  /** Open a file (a path relative to the server root) in JupyterLab. */
  openFile: (path: string) => void;
  /** Open a notebook (a path relative to the server root) with the cell `cell` active. */
  openCell: (path: string, cell: string) => void;
  /** Send the reply. */
  reply: (approve: boolean, comment: string, toStage: string | null) => void;
}

/**
 * Fill `node` with the form for `pending` (hide it when nothing is pending); returns the
 * Approve and Reject buttons, which the caller disables while a reply is on its way.
 */
export function renderGate(
  node: HTMLElement,
  detail: IProjectDetail,
  pending: IPendingDecision | null,
  actions: IGateActions
): HTMLButtonElement[] {
  node.textContent = '';
  node.hidden = !pending;
  if (!pending) {
    return [];
  }
  node.dataset.decision = pending.id;
  if (detail.permission) {
    el('h3', { text: `${detail.permission.agent} asks permission` }, node);
    return renderPermission(
      node,
      detail.permission,
      html => sanitizer.sanitize(html),
      // the option's name as the comment picks it; yes or no says which way it goes
      choice => actions.reply(choice.approve, choice.name, null)
    );
  }
  const isGate = pending.kind === 'gate';
  const heading = isGate
    ? `Waiting for you: ${pending.stage}`
    : 'A question for you';
  el('h3', { text: heading }, node);
  el('p', { className: 'ls-question', text: pending.question }, node);
  if (pending.summary) {
    el('p', { className: 'ls-summary', text: pending.summary }, node);
  }
  if (isGate) {
    describeGate(node, detail, pending, actions);
  } else if (pending.options.length) {
    const options = `Options: ${pending.options.join(' / ')}`;
    el('p', { className: 'ls-options', text: options }, node);
  }
  renderRecalled(node, detail.recalled);
  const commentLabel = el(
    'label',
    { className: 'ls-field', text: 'Comment' },
    node
  );
  const comment = el('textarea', { className: 'ls-comment' }, commentLabel);
  comment.rows = 2;
  comment.placeholder = 'For the record and the next worker (optional)';
  const target = isGate ? rejectTarget(node, detail, pending) : null;

  const buttons = el('div', { className: 'ls-buttons' }, node);
  const approve = el(
    'button',
    {
      className: 'jp-Button jp-mod-styled jp-mod-accept ls-approve',
      text: isGate ? 'Approve' : 'Yes'
    },
    buttons
  );
  const reject = el(
    'button',
    {
      className: 'jp-Button jp-mod-styled jp-mod-reject ls-reject',
      text: isGate ? 'Reject' : 'No'
    },
    buttons
  );
  const send = (yes: boolean) =>
    actions.reply(yes, comment.value, target?.value || null);
  approve.addEventListener('click', () => send(true));
  reject.addEventListener('click', () => send(false));
  return [approve, reject];
}

/** What approving accepts: the next stage and the outputs under review. */
function describeGate(
  node: HTMLElement,
  detail: IProjectDetail,
  pending: IPendingDecision,
  actions: IGateActions
): void {
  el(
    'p',
    {
      className: 'ls-approves',
      text:
        `Approving accepts what '${pending.stage}' produced and moves the project to ` +
        `'${pending.proposed_next ?? '?'}'.` +
        (pending.outputs.length ? ' Under review:' : '')
    },
    node
  );
  const list = el('ul', { className: 'ls-gate-outputs' }, node);
  for (const name of pending.outputs) {
    const item = el('li', {}, list);
    const button = el(
      'button',
      { className: 'ls-link', text: name, title: 'Open in JupyterLab' },
      item
    );
    button.addEventListener('click', () =>
      actions.openFile(joinPath(detail.path, name))
    );
  }
  // what changed beside each file, where the paper's numbers come from
  renderDiffs(node, detail.gate_diff, html => sanitizer.sanitize(html));
  renderChecks(node, detail.gate_checks, (button, path, cell) =>
    button.addEventListener('click', () => actions.openCell(path, cell))
  );
}

/** The stage a rejection sends the project back to ('' keeps the table's default). */
function rejectTarget(
  node: HTMLElement,
  detail: IProjectDetail,
  pending: IPendingDecision
): HTMLSelectElement {
  const label = el(
    'label',
    { className: 'ls-field', text: 'On reject, go back to' },
    node
  );
  const target = el('select', { className: 'ls-target' }, label);
  const fallback = el(
    'option',
    { text: `${pending.default_reject ?? 'the previous stage'} (default)` },
    target
  );
  fallback.value = '';
  for (const stage of detail.table?.stages ?? []) {
    const option = el('option', { text: stage.id }, target);
    option.value = stage.id;
  }
  return target;
}
