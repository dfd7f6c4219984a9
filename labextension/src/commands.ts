/**
 * The run's actions as JupyterLab commands: Reject, Pause, Cancel, Resume and Re-run, the
 * hand-over's Take and Deliver, and Raise the Budget, beside Approve (index.ts), in the
 * command palette, with keyboard shortcuts (schema/plugin.json) and in the context menu of
 * the panel's project list. A command acts on the project its `path` argument names (a
 * notification's action), else on the one the context menu was opened on, else on the one
 * selected in the panel, and is enabled only where its action applies (the panel's run
 * controls follow the same rules).
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
import { raisedLimit, shown } from './budget';
import { confirmWords } from './controlwords';
import { shownPath } from './dom';
import type { LightScientistPanel } from './panel';

export namespace ProjectCommandIDs {
  export const reject = 'lightscientist:reject-gate';
  export const pause = 'lightscientist:pause';
  export const cancel = 'lightscientist:cancel';
  export const resume = 'lightscientist:resume';
  export const rerun = 'lightscientist:rerun-stage';
  export const take = 'lightscientist:take-stage';
  export const deliver = 'lightscientist:deliver-stage';
  export const raise = 'lightscientist:raise-budget';
}

/** A command's one argument: the project it acts on (else the context menu's row, else
 * the panel's selection). */
const PATH_ARG = {
  args: {
    type: 'object' as const,
    properties: {
      path: {
        type: 'string',
        description: 'The project folder, relative to the server root'
      }
    }
  }
};

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
    confirm: p => confirmWords('cancel', p.stage ?? '?')!.question
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
    confirm: p => confirmWords('rerun', p.stage ?? '?')!.question
  }
];

export function addProjectCommands(
  app: JupyterFrontEnd,
  panel: LightScientistPanel,
  palette: ICommandPalette | null,
  category: string,
  after: () => void
): void {
  /** The project a command acts on: the one its `path` names, else the list row the
   * context menu was opened on, else the panel's selected project. */
  const target = (args: { path?: unknown } = {}): IProjectSummary | null => {
    const row = app.contextMenuHitTest(node =>
      node.classList.contains('ls-project')
    );
    const path = typeof args.path === 'string' ? args.path : row?.dataset.path;
    if (path !== undefined) {
      return panel.projects.find(p => p.path === path) ?? null;
    }
    return panel.detail;
  };
  const fail = (error: unknown) =>
    void showErrorMessage('LightScientist', (error as Error).message);

  app.commands.addCommand(ProjectCommandIDs.reject, {
    describedBy: PATH_ARG,
    label: args => {
      const pending = target(args)?.pending;
      return pending?.kind === 'gate'
        ? `LightScientist: Reject Pending Gate (${pending.stage})`
        : 'LightScientist: Reject Pending Gate';
    },
    caption:
      'Reject the gate the project waits at, with a comment for the next worker',
    isEnabled: args => target(args)?.pending?.kind === 'gate',
    execute: async args => {
      const project = target(args);
      const pending = project?.pending;
      if (!project || pending?.kind !== 'gate') {
        return;
      }
      const body = document.createElement('div');
      const comment = field(
        body,
        'What should change? (kept in PROCESS.md and handed to the next worker)',
        'textarea'
      );
      comment.className = 'ls-comment';
      comment.rows = 4;
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
      describedBy: PATH_ARG,
      label: () => `LightScientist: ${control.label}`,
      isEnabled: args => {
        const project = target(args);
        return !!project && !project.error && control.applies(project);
      },
      execute: async args => {
        const project = target(args);
        if (!project || !control.applies(project)) {
          return;
        }
        const question = control.confirm(project);
        if (question) {
          const result = await showDialog({
            title: `LightScientist · ${shownPath(project.path)}`,
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

  addHandoffCommands(app, panel, target, after, fail);

  const ids = [
    ProjectCommandIDs.reject,
    ...CONTROLS.map(c => c.id),
    ProjectCommandIDs.take,
    ProjectCommandIDs.deliver,
    ProjectCommandIDs.raise
  ];
  ids.forEach((command, rank) => {
    palette?.addItem({ command, category });
    app.contextMenu.addItem({
      command,
      selector: '.ls-Panel .ls-project',
      rank: 10 + rank
    });
  });
}

type Target = (args?: { path?: unknown }) => IProjectSummary | null;

/** A dialog body: a label over a field (a textarea, an input or a select). */
function field<K extends 'textarea' | 'input' | 'select'>(
  body: HTMLElement,
  text: string,
  tag: K
): HTMLElementTagNameMap[K] {
  const label = document.createElement('label');
  label.className = 'ls-field';
  label.textContent = text;
  const node = document.createElement(tag);
  node.style.width = '100%';
  label.appendChild(node);
  body.appendChild(label);
  return node;
}

/** Take (do the stage yourself), Deliver (hand it back done) and Raise the Budget. */
function addHandoffCommands(
  app: JupyterFrontEnd,
  panel: LightScientistPanel,
  target: Target,
  after: () => void,
  fail: (error: unknown) => void
): void {
  const pendingOf = (args: { path?: unknown }, kind: string) => {
    const project = target(args);
    return project?.pending?.kind === kind ? project : null;
  };
  /** Where a take lands: the stage a gate's approval moves to, else the current one. */
  const takes = (project: IProjectSummary | null): string | null => {
    if (!project || project.error || !project.actions?.cancel) {
      return null; // ended (or not yet started): nothing to take
    }
    const pending = project.pending;
    if (!pending) {
      return project.status === 'running' ? (project.stage ?? null) : null;
    }
    return pending.kind === 'gate' ? (pending.proposed_next ?? null) : null;
  };

  app.commands.addCommand(ProjectCommandIDs.take, {
    describedBy: PATH_ARG,
    label: args => {
      const stage = takes(target(args));
      return stage
        ? `LightScientist: Do ${stage} Myself`
        : 'LightScientist: Do This Stage Myself';
    },
    caption:
      'Take the stage: no worker runs it; you write its outputs, then deliver',
    isEnabled: args => takes(target(args)) !== null,
    execute: async args => {
      const project = target(args);
      if (!project || takes(project) === null) {
        return;
      }
      try {
        await api.handoff(project.path, 'take');
        after();
      } catch (error) {
        fail(error);
      }
    }
  });

  app.commands.addCommand(ProjectCommandIDs.deliver, {
    describedBy: PATH_ARG,
    label: args => {
      const project = pendingOf(args, 'handoff');
      return project
        ? `LightScientist: Deliver ${project.pending!.stage}`
        : 'LightScientist: Deliver the Stage You Hold';
    },
    caption:
      'Hand the stage you hold back, done: its outputs are checked first',
    isEnabled: args => pendingOf(args, 'handoff') !== null,
    execute: async args => {
      const project = pendingOf(args, 'handoff');
      if (!project) {
        return;
      }
      const card =
        panel.detail?.path === project.path ? panel.detail.handoff : null;
      const body = document.createElement('div');
      const summary = field(
        body,
        'What you did and found (kept in PROCESS.md)',
        'textarea'
      );
      summary.rows = 4;
      const next = field(body, 'Next stage', 'select');
      const choices = card?.allowed_next ?? [];
      for (const stage of choices.length ? choices : ['']) {
        const option = document.createElement('option');
        option.value = stage;
        option.textContent = stage || "the table's next stage";
        option.selected = stage === card?.default_next;
        next.appendChild(option);
      }
      const result = await showDialog({
        title: `Deliver ${project.pending!.stage} in ${shownPath(project.path)}?`,
        body: new Widget({ node: body }),
        focusNodeSelector: 'textarea',
        buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Deliver' })]
      });
      if (!result.button.accept) {
        return;
      }
      try {
        await api.handoff(project.path, 'deliver', {
          summary: summary.value.trim(),
          next_stage: next.value
        });
        after();
      } catch (error) {
        fail(error);
      }
    }
  });

  app.commands.addCommand(ProjectCommandIDs.raise, {
    describedBy: PATH_ARG,
    label: 'LightScientist: Raise the Budget and Go On',
    caption: 'Give a project stopped by its budget a new limit, and go on',
    isEnabled: args => pendingOf(args, 'budget') !== null,
    execute: async args => {
      const project = pendingOf(args, 'budget');
      if (!project) {
        return;
      }
      const pending = project.pending!;
      const { key, value } = raisedLimit(pending.details);
      const body = document.createElement('div');
      const limit = field(body, `New limit, ${key}`, 'input');
      limit.type = 'number';
      limit.min = '0';
      limit.step = 'any';
      limit.value = String(value);
      const result = await showDialog({
        title: `Raise the budget of ${shownPath(project.path)}?`,
        body: new Widget({ node: body }),
        focusNodeSelector: 'input',
        buttons: [
          Dialog.cancelButton(),
          Dialog.okButton({ label: 'Raise and go on' })
        ]
      });
      const raised = Number(limit.value);
      if (!result.button.accept) {
        return;
      }
      if (!(raised > 0)) {
        fail(
          new Error(
            `The new limit must be a number above 0, not '${limit.value}'.`
          )
        );
        return;
      }
      try {
        await api.reply({
          path: project.path,
          approve: true,
          comment: '',
          to_stage: null,
          decision_id: pending.id,
          budget: { [key]: raised }
        });
        after();
      } catch (error) {
        fail(new Error(`${shown(key, raised)}: ${(error as Error).message}`));
      }
    }
  });
}
