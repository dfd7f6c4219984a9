/**
 * A coding agent's permission request, drawn once for both screens (the side panel's
 * decision, `gate.ts`, and the dashboard's decision card, `widgets/gate.ts`): who asks, the
 * tool call it concerns (an edit's diff drawn as a gate's, by `diff.ts`), and one button per
 * option the agent offers, in its order and its words. The view is the server's
 * (`jupyter/permission_card.py`); a click hands the choice to the caller, which answers the
 * decision through the reply every question takes.
 */

import type { IPermissionCard, IPermissionChoice } from './answers';
import { type Clean, renderDiffs } from './diff';
import { el } from './dom';

/** Fill `node` with the card of `card`; returns its buttons, one per option, which call
 * `pick` with the option clicked (the caller disables them while the reply is on its way). */
export function renderPermission(
  node: HTMLElement,
  card: IPermissionCard,
  clean: Clean,
  pick: (choice: IPermissionChoice) => void
): HTMLButtonElement[] {
  const box = el('div', { className: 'ls-permission' }, node);
  box.dataset.agent = card.agent;
  el('p', { className: 'ls-permission-heading', text: card.heading }, box);
  const call = el('p', { className: 'ls-permission-call' }, box);
  el('span', { className: 'ls-muted', text: 'Tool call: ' }, call);
  el('code', { className: 'ls-code', text: card.title }, call);
  if (card.kind) {
    el('span', { className: 'ls-badge', text: card.kind }, call);
  }
  if (card.paths.length) {
    const list = el('ul', { className: 'ls-files' }, box);
    for (const path of card.paths) {
      el('code', { className: 'ls-code', text: path }, el('li', {}, list));
    }
  }
  if (card.diff) {
    renderDiffs(box, [card.diff], clean, 'What the edit would change');
    box.querySelector('details')?.setAttribute('open', '');
  }
  if (card.detail) {
    el('pre', { className: 'ls-permission-detail', text: card.detail }, box);
  }
  const row = el('div', { className: 'ls-buttons ls-permission-options' }, box);
  return card.choices.map(choice => {
    const button = el(
      'button',
      {
        className:
          'jp-Button jp-mod-styled ' +
          (choice.approve ? 'jp-mod-accept' : 'jp-mod-reject'),
        text: choice.name
      },
      row
    );
    button.dataset.option = choice.id;
    button.setAttribute('aria-label', `${choice.name}: ${card.heading}`);
    button.addEventListener('click', () => pick(choice));
    return button;
  });
}
