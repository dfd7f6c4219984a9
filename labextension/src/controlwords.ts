/**
 * The run controls in words, the same on every screen: the panel's toolbar, the dashboard's
 * (`widgets/controls.ts`) and the palette's commands. Short labels on the buttons, the long
 * form in each one's tooltip and accessible name, and the question a destructive one asks
 * first. No JupyterLab import: the dashboard's widgets bundle it.
 */

import type { ControlAction } from './answers';

/** A button's own label, short enough for one row. */
export const CONTROL_LABELS: Record<ControlAction, string> = {
  resume: 'Resume',
  pause: 'Pause',
  rerun: 'Re-run',
  cancel: 'Cancel'
};

/** What a control does to the project at `stage`, in full (tooltip, accessible name). */
export function controlTitle(action: ControlAction, stage: string): string {
  switch (action) {
    case 'resume':
      return 'Resume the project in the background';
    case 'pause':
      return `Pause after ${stage} finishes`;
    case 'rerun':
      return `Re-run ${stage} from its start`;
    case 'cancel':
      return 'Cancel the project and its workers';
  }
}

/** What a destructive control asks before it acts, and its button's label; null for one
 * that acts at once. */
export function confirmWords(
  action: ControlAction,
  stage: string
): { question: string; label: string } | null {
  switch (action) {
    case 'cancel':
      return {
        question: `Cancel the project at ${stage}? Its workers stop; Resume can start it again later.`,
        label: 'Cancel the project'
      };
    case 'rerun':
      return {
        question:
          `Re-run ${stage}? The run stops, the files go back to how they were when the ` +
          'stage started (the later snapshots stay in the history), and it starts again ' +
          'in the background.',
        label: `Re-run ${stage}`
      };
  }
  return null;
}

/** A circular arrow (Re-run) and a square (Cancel), drawn here for the dashboard's
 * toolbar; the panel uses JupyterLab's own icons. */
export const CONTROL_ICONS: Partial<Record<ControlAction, string>> = {
  rerun:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" ' +
    'aria-hidden="true"><path d="M13 8a5 5 0 1 1-1.6-3.7" fill="none" ' +
    'stroke="currentColor" stroke-width="1.6"/><path d="M13.5 2.2v3.6H9.9z" ' +
    'fill="currentColor"/></svg>',
  cancel:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" ' +
    'aria-hidden="true"><rect x="4" y="4" width="8" height="8" fill="currentColor"/></svg>'
};
