/**
 * The dashboard's stage graph (`jupyter/dashboard/graph_card.py`): the side panel's drawing
 * (`GraphBox`), fed the same view (`graph_view.py`) through the widget's `view` trait.
 */

import type { IGraphView } from '../answers';
import { GraphBox } from '../graph';
import { follow, type IRenderProps } from './host';

/** The widget's synced traits. */
export interface IGraphTraits {
  view: IGraphView | null;
}

function render({ model, el }: IRenderProps<IGraphTraits>): () => void {
  const box = new GraphBox(el);
  return follow(model, 'change:view', () => box.show(model.get('view')));
}

export default { render };
