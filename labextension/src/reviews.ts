/**
 * The paper in the panel: a link that opens its PDF in JupyterLab's PDF viewer (else its
 * source, and the line saying why there is no PDF), and the reviews — each reviewer's scores
 * as a small table, the decision they add up to, what the round before asked for. Drawn from
 * what the server reads (`app/paper.py`, `app/reviews.py`), as the dashboard's gate card
 * draws the same reviews with this same code (`widgets/gate.ts`).
 */

import type { IPaperCard, IReviewsCard } from './answers';
import { el, focusable } from './dom';

/** Draw the paper's links into `box`; `open` opens a path relative to the server root. */
export function renderPaper(
  box: HTMLElement,
  paper: IPaperCard,
  open: (path: string, factory?: string) => void
): void {
  box.textContent = '';
  const link = (
    path: string,
    text: string,
    title: string,
    factory?: string
  ) => {
    const button = el('button', { className: 'ls-link', text, title }, box);
    button.dataset.path = path;
    button.addEventListener('click', () => open(path, factory));
    return button;
  };
  if (paper.pdf !== null) {
    const pages = paper.pages === null ? '' : ` (${paper.pages} pages)`;
    link(paper.pdf, `paper.pdf${pages}`, 'Open the PDF', 'PDF').classList.add(
      'ls-paper-pdf'
    );
  }
  if (paper.note !== null) {
    el('p', { className: 'ls-muted ls-paper-note', text: paper.note }, box);
  }
  if (paper.source !== null) {
    const name = paper.source.split('/').pop() ?? paper.source;
    link(paper.source, name, 'Open the source').classList.add(
      'ls-paper-source'
    );
  }
}

/** Draw the reviews into `box` (emptied first). */
export function renderReviews(box: HTMLElement, reviews: IReviewsCard): void {
  box.textContent = '';
  if (reviews.reviews.length) {
    const scroll = el('div', { className: 'ls-review-table' }, box);
    focusable(scroll, 'Review scores (scrolls sideways)');
    const table = el('table', {}, scroll);
    const head = el('tr', {}, el('thead', {}, table));
    for (const name of ['reviewer', ...reviews.columns, 'decision']) {
      el('th', { text: name }, head);
    }
    const body = el('tbody', {}, table);
    for (const review of reviews.reviews) {
      const row = el('tr', {}, body);
      el('td', { text: String(review.reviewer) }, row);
      for (const name of reviews.columns) {
        el(
          'td',
          { className: 'ls-score', text: String(review.scores[name] ?? '') },
          row
        );
      }
      const decision = el(
        'td',
        { className: 'ls-review-decision', text: review.decision },
        row
      );
      decision.dataset.decision = review.decision;
    }
  }
  const summary = el(
    'p',
    { className: 'ls-review-summary', text: reviews.summary },
    box
  );
  if (reviews.decision !== null) {
    summary.dataset.decision = reviews.decision;
  }
  const list = (title: string, items: string[]) => {
    if (!items.length) {
      return;
    }
    el('div', { className: 'ls-muted', text: title }, box);
    const ul = el('ul', {}, box);
    for (const item of items) {
      el('li', { text: item }, ul);
    }
  };
  list('Required changes:', reviews.required_changes);
  list(`Round ${reviews.earlier_round} asked for:`, reviews.earlier_changes);
  for (const problem of reviews.problems) {
    el('p', { className: 'ls-err', text: problem }, box);
  }
}
