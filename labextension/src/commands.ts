/**
 * The run's actions as JupyterLab commands: Reject, Pause, Cancel, Resume and Re-run, beside
 * Approve (index.ts), in the command palette, with keyboard shortcuts (schema/plugin.json)
 * and in the context menu of the panel's project list. A command acts on the project the
 * context menu was opened on, else on the one selected in the panel, and is enabled only
 * where its action applies (the panel's run controls follow the same rules).
 */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import type { ControlAction, IProjectSummary } from './answers';
import { api } from './api';
import { shownPath } from './dom';
import type { LightScientistPanel } from './panel';

export namespace ProjectCommandIDs {
  export const reject = 'lightscientist:reject-gate';
  export const pause = 'lightscientist:pause';
  export const cancel = 'lightscientist:cancel';
  export const resume = 'lightscientist:resume';
  export const rerun = 'lightscientist:rerun-stage';
}

const NO_ARGS = { args: { type: 'object' as const, properties: {} } };

interface IControlCommand {
  id: string;
  action: ControlAction;
  label: string;
  /** Whether it applies (the server's rule, `app.controls.applicable`). */
  applies: (project: IProjectSummary) => boolean;
  /** Asked before acting (a destructive action), or '' to act at once. */
  confirm: (project: IProjectSummary) => string;
}

const CONTROLS: IControlCommand[] = [
  {
    id: ProjectCommandIDs.pause,
    action: 'pause',
    label: 'Pause After This Stage',
    applies: p => !!p.actions?.pause,
    confirm: () => ''
  },
  {
    id: ProjectCommandIDs.cancel,
    action: 'cancel',
    label: 'Cancel the Project',
    applies: p => !!p.actions?.cancel,
    confirm: p =>
      `Cancel ${shownPath(p.path)} at ${p.stage}? Its workers stop; Resume can start it again later.`
  },
  {
    id: ProjectCommandIDs.resume,
    action: 'resume',
    label: 'Resume',
    applies: p => !!p.actions?.resume,
    confirm: () => ''
  },
  {
    id: ProjectCommandIDs.rerun,
    action: 'rerun',
    label: 'Re-run This Stage',
    applies: p => !!p.actions?.rerun,
    confirm: p =>
      `Re-run ${p.stage}? The run stops, the files go back to how they were when the stage ` +
      'started (the later snapshots stay in the history), and it starts again in the background.'
  }
];

export function addProjectCommands(
  app: JupyterFrontEnd,
  panel: LightScientistPanel,
  palette: ICommandPalette | null,
  category: string,
  after: () => void
): void {
  /** The project a command acts on: the list row the context menu was opened on, else
   * the panel's selected project. */
  const target = (): IProjectSummary | null => {
    const row = app.contextMenuHitTest(node =>
      node.classList.contains('ls-project')
    );
    const path = row?.dataset.path;
    if (path !== undefined) {
      return panel.projects.find(p => p.path === path) ?? null;
    }
    return panel.detail;
  };
  const fail = (error: unknown) =>
    void showErrorMessage('LightScientist', (error as Error).message);

  app.commands.addCommand(ProjectCommandIDs.reject, {
    describedBy: NO_ARGS,
    label: () => {
      const pending = target()?.pending;
      return pending?.kind === 'gate'
        ? `LightScientist: Reject Pending Gate (${pending.stage})`
        : 'LightScientist: Reject Pending Gate';
    },
    caption:
      'Reject the gate the project waits at, with a comment for the next worker',
    isEnabled: () => target()?.pending?.kind === 'gate',
    execute: async () => {
      const project = target();
      const pending = project?.pending;
      if (!project || pending?.kind !== 'gate') {
        return;
      }
      const body = document.createElement('div');
      const label = document.createElement('label');
      label.textContent =
        'What should change? (kept in PROCESS.md and handed to the next worker)';
      const comment = document.createElement('textarea');
      comment.className = 'ls-comment';
      comment.rows = 4;
      comment.style.width = '100%';
      label.appendChild(comment);
      body.appendChild(label);
      const result = await showDialog({
        title: `Reject ${pending.stage} in ${shownPath(project.path)}?`,
        body: new Widget({ node: body }),
        focusNodeSelector: 'textarea',
        buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Reject' })]
      });
      if (!result.button.accept) {
        return;
      }
      try {
        await api.reply({
          path: project.path,
          approve: false,
          comment: comment.value.trim(),
          to_stage: null,
          decision_id: pending.id
        });
        after();
      } catch (error) {
        fail(error);
      }
    }
  });

  for (const control of CONTROLS) {
    app.commands.addCommand(control.id, {
      describedBy: NO_ARGS,
      label: () => `LightScientist: ${control.label}`,
      isEnabled: () => {
        const project = target();
        return !!project && !project.error && control.applies(project);
      },
      execute: async () => {
        const project = target();
        if (!project || !control.applies(project)) {
          return;
        }
        const question = control.confirm(project);
        if (question) {
          const result = await showDialog({
            title: 'LightScientist',
            body: question,
            buttons: [
              Dialog.cancelButton({ label: 'Keep going' }),
              Dialog.warnButton({ label: control.label })
            ]
          });
          if (!result.button.accept) {
            return;
          }
        }
        try {
          await api.control({
            path: project.path,
            action: control.action,
            stage: control.action === 'resume' ? null : (project.stage ?? null)
          });
          after();
        } catch (error) {
          fail(error);
        }
      }
    });
  }

  const ids = [ProjectCommandIDs.reject, ...CONTROLS.map(c => c.id)];
  ids.forEach((command, rank) => {
    palette?.addItem({ command, category });
    app.contextMenu.addItem({
      command,
      selector: '.ls-Panel .ls-project',
      rank: 10 + rank
    });
  });
}
