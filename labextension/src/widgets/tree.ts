/**
 * The dashboard's search card (`jupyter/dashboard/tree_card.py`): the side panel's own
 * drawing (`SearchBox`), fed the same view through the `card` trait. A node clicked is
 * fetched from the server's `node` endpoint; without a server extension, asked of the
 * kernel (`picked`), which answers in `node`.
 */

import type { INodeAnswer, ISearchCard } from '../answers';
import { el } from '../dom';
import { SearchBox } from '../tree';
import {
  ANSWER_MS,
  call,
  follow,
  located,
  noExtension,
  type IRenderProps,
  type IWidgetModel
} from './host';

/** The widget's synced traits. */
export interface ITreeTraits {
  card: ISearchCard | null;
  root: string;
  picked: string;
  node: { id?: string; answer?: INodeAnswer; error?: string };
}

async function fetchNode(
  model: IWidgetModel<ITreeTraits>,
  node: string
): Promise<INodeAnswer> {
  const where = located(model.get('root'));
  if (where) {
    const query = `path=${encodeURIComponent(where.rel)}&node=${encodeURIComponent(node)}`;
    const got = await call(where.cfg, 'GET', `node?${query}`);
    if (got.status === 200) {
      return got.data as INodeAnswer;
    }
    if (!noExtension(got)) {
      throw new Error(String(got.data?.message ?? `status ${got.status}`));
    }
  }
  return fromKernel(model, node);
}

/** The kernel's answer for `node`, through the `picked` and `node` traits. */
function fromKernel(
  model: IWidgetModel<ITreeTraits>,
  node: string
): Promise<INodeAnswer> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const got = model.get('node') || {};
      if (got.id !== node) {
        return false;
      }
      model.off('change:node', check);
      clearTimeout(timer);
      if (got.answer) {
        resolve(got.answer);
      } else {
        reject(new Error(got.error ?? 'no answer'));
      }
      return true;
    };
    const timer = setTimeout(() => {
      model.off('change:node', check);
      reject(new Error('no answer from the kernel within 2 s'));
    }, ANSWER_MS);
    model.on('change:node', check);
    model.set('picked', node);
    model.save_changes();
    check();
  });
}

function render({ model, el: root }: IRenderProps<ITreeTraits>): () => void {
  const card = el('section', { className: 'ls-search-card' }, root);
  card.setAttribute('aria-label', 'Search');
  const title = el('h4', { text: 'Search' }, card);
  const box = new SearchBox(card, node => fetchNode(model, node));
  return follow(model, 'change:card', () => {
    const view = model.get('card');
    card.hidden = !view;
    title.textContent = view ? `Search (${view.stages.join(', ')})` : 'Search';
    box.show(view ?? null);
  });
}

export default { render };
