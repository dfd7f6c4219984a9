/**
 * LightScientist for JupyterLab: a side panel, palette commands and a status-bar item.
 */

import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  Dialog,
  ICommandPalette,
  Notification,
  showDialog,
  showErrorMessage
} from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { api } from './api';

// the panel is added to the shell when the plugin activates, so it is needed at once; so is
// the skeleton's renderer, before a notebook opens (a notebook copies the renderers it finds)
/* eslint-disable jupyter/prefer-lazy-imports */
import { OPEN_CELL, addOpenCellCommand } from './cells'; // a cell link's command, at once
import { addProjectCommands } from './commands'; // in the palette at once
import { IWatcherSettings, ProjectWatcher } from './notify';
import { OpenNotebooks } from './opennotebooks'; // reports the open notebooks at once
import { IPanelOptions, LightScientistPanel } from './panel';
import { projectFactory } from './reference';
import { skeletonFactory } from './skeleton';
import { StageStatus, projectToShow } from './status';
/* eslint-enable jupyter/prefer-lazy-imports */

const PLUGIN_ID = 'lightscientist-jupyter:plugin';
const CATEGORY = 'LightScientist';
/** What each command takes: nothing (the selected project is the panel's). */
const NO_ARGS = { args: { type: 'object' as const, properties: {} } };

namespace CommandIDs {
  export const open = 'lightscientist:open-panel';
  export const approve = 'lightscientist:approve-gate';
  export const refresh = 'lightscientist:refresh';
}

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">
  <path class="jp-icon3" fill="#616161" d="M9 2h6v2h-1v5.2l5.6 9.7A2 2 0 0 1 17.9 22H6.1a2 2 0 0 1-1.7-3.1L10 9.2V4H9V2zm3 9.3L8.4 17.5h7.2L12 11.3z"/>
</svg>`;

export const lightScientistIcon = new LabIcon({
  name: 'lightscientist:flask',
  svgstr: ICON_SVG
});

function approvalBody(panel: LightScientistPanel): HTMLElement {
  const pending = panel.detail!.pending!;
  const body = document.createElement('div');
  body.className = 'ls-approve-dialog';
  const add = (tag: string, text: string) => {
    const node = document.createElement(tag);
    node.textContent = text;
    body.appendChild(node);
  };
  add('p', pending.question);
  if (pending.summary) {
    add('p', pending.summary);
  }
  if (pending.outputs.length) {
    add('p', `Under review: ${pending.outputs.join(', ')}`);
  }
  return body;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'LightScientist side panel: projects, stage graph, gates and events.',
  autoStart: true,
  requires: [IDocumentManager],
  optional: [
    ICommandPalette,
    IStatusBar,
    ILayoutRestorer,
    IRenderMimeRegistry,
    ILabShell,
    ISettingRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    statusBar: IStatusBar | null,
    restorer: ILayoutRestorer | null,
    rendermime: IRenderMimeRegistry | null,
    labShell: ILabShell | null,
    settingRegistry: ISettingRegistry | null
  ) => {
    // the dashboard's skeleton button: its output becomes a cell below (`skeleton.ts`)
    rendermime?.addFactory(skeletonFactory(app), 0);
    const actions: IPanelOptions = {
      kernelOwner: id => kernelOwner(app, id),
      insertCell: code => {
        // the notebook's own commands: a new cell below the active one, then its text
        void app.commands
          .execute('notebook:insert-cell-below')
          .then(() =>
            app.commands.execute('notebook:replace-selection', { text: code })
          );
      },
      openCell: (path, cell) =>
        void app.commands.execute(OPEN_CELL, { path, cell }),
      openFile: (path, factory) => {
        const widget = factory
          ? docManager.openOrReveal(path, factory)
          : undefined;
        if (!widget) {
          docManager.openOrReveal(path);
        }
      },
      showFolder: path => {
        if (app.commands.hasCommand('filebrowser:go-to-path')) {
          void app.commands.execute('filebrowser:go-to-path', {
            path: `/${path}`
          });
        }
      }
    };
    // a dashboard whose kernel is gone, drawn from the server (`reference.ts`)
    rendermime?.addFactory(projectFactory(actions));
    const panel = new LightScientistPanel(actions);
    panel.title.icon = lightScientistIcon;
    // named for screen readers, as JupyterLab names its own side panels
    panel.node.setAttribute('aria-label', 'LightScientist section');
    panel.title.dataset = {
      ...panel.title.dataset,
      jpTabLabel: 'LightScientist'
    };
    app.shell.add(panel, 'left', { rank: 650 });
    restorer?.add(panel, 'lightscientist-panel');

    app.commands.addCommand(CommandIDs.open, {
      describedBy: NO_ARGS,
      label: 'LightScientist: Open Panel',
      caption: 'Show the LightScientist side panel',
      icon: lightScientistIcon,
      execute: () => {
        app.shell.activateById(panel.id);
      }
    });
    app.commands.addCommand(CommandIDs.refresh, {
      describedBy: NO_ARGS,
      label: 'LightScientist: Refresh',
      execute: () => panel.refresh()
    });
    app.commands.addCommand(CommandIDs.approve, {
      describedBy: NO_ARGS,
      label: () => {
        const pending = panel.detail?.pending;
        return pending
          ? `LightScientist: Approve Pending Gate (${pending.stage})`
          : 'LightScientist: Approve Pending Gate';
      },
      caption: 'Approve the decision the selected project waits for',
      isEnabled: () => !!panel.detail?.pending,
      execute: async () => {
        if (!panel.detail?.pending) {
          await showErrorMessage(
            'LightScientist',
            'Nothing is waiting for approval.'
          );
          return;
        }
        const result = await showDialog({
          title: `Approve ${panel.detail.pending.stage} in ${panel.detail.path || 'the server root'}?`,
          body: new Widget({ node: approvalBody(panel) }),
          buttons: [
            Dialog.cancelButton(),
            Dialog.okButton({ label: 'Approve' })
          ]
        });
        if (result.button.accept) {
          try {
            await panel.reply(true);
          } catch (error) {
            await showErrorMessage('LightScientist', (error as Error).message);
          }
        }
      }
    });
    if (palette) {
      for (const command of [
        CommandIDs.open,
        CommandIDs.approve,
        CommandIDs.refresh
      ]) {
        palette.addItem({ command, category: CATEGORY });
      }
    }

    addOpenCellCommand(app, docManager, CATEGORY, palette);

    const showProject = (path: string | null) => {
      if (path !== null) {
        panel.select(path);
      }
      app.shell.activateById(panel.id);
    };
    const watcher = new ProjectWatcher(panel, showProject, (id, path) => {
      void app.commands.execute(id, { path });
    });
    panel.follow(watcher); // one request for the list, every second, for both
    if (settingRegistry) {
      // the Settings Editor's LightScientist section: notifications and refresh for this
      // page; the runs' defaults for the kernels, through the server
      void settingRegistry.load(PLUGIN_ID).then(settings => {
        let handed = '';
        const apply = () => {
          watcher.configure(settings.composite as unknown as IWatcherSettings);
          const { model, mode, budget } = settings.composite as Record<
            string,
            string
          >;
          const values = { model, mode, budget };
          if (JSON.stringify(values) !== handed) {
            handed = JSON.stringify(values);
            void handDefaults(values);
          }
        };
        apply();
        settings.changed.connect(apply);
      });
    }
    // workers change an open notebook through this page, never under it
    new OpenNotebooks(app, docManager);
    addProjectCommands(app, panel, palette, CATEGORY, () => {
      void panel.refresh();
      watcher.poke();
    });
    const status = new StageStatus(showProject);
    const showStatus = () =>
      status.showProject(
        projectToShow(
          watcher.projects,
          currentKernel(app),
          panel.detail?.path ?? null
        ),
        watcher.projects.length
      );
    watcher.changed.connect(showStatus);
    labShell?.currentChanged.connect(showStatus);
    panel.changed.connect(() => {
      showStatus();
      app.commands.notifyCommandChanged(CommandIDs.approve);
    });
    panel.replied.connect(() => watcher.poke());
    if (statusBar) {
      statusBar.registerStatusItem('lightscientist-jupyter:status', {
        item: status,
        align: 'left',
        rank: 100,
        isActive: () => true
      });
    }
  }
};

/** The kernel id of the notebook (or console) in the main area, or null. */
function currentKernel(app: JupyterFrontEnd): string | null {
  const widget = app.shell.currentWidget as {
    sessionContext?: { session?: { kernel?: { id: string } | null } | null };
  } | null;
  return widget?.sessionContext?.session?.kernel?.id ?? null;
}

/** The path of the server's session whose kernel is `kernelId`, or null. */
function kernelOwner(app: JupyterFrontEnd, kernelId: string): string | null {
  for (const session of app.serviceManager.sessions.running()) {
    if (session.kernel?.id === kernelId) {
      return session.path;
    }
  }
  return null;
}

export default plugin;

/** Hand the runs' defaults to the server, which keeps them for the kernels; a value to fix
 * is said in a notification that names the setting. */
async function handDefaults(values: {
  model: string;
  mode: string;
  budget: string;
}): Promise<void> {
  try {
    await api.defaults(values);
  } catch (error) {
    Notification.error(`LightScientist settings: ${(error as Error).message}`, {
      autoClose: 10000
    });
  }
}
