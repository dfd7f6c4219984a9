/**
 * A notebook dashboard that outlives its kernel. The kernel's output carries, beside the
 * widget and the static picture, a reference to its project (`PROJECT_MIME`: the project
 * folder's absolute path). This renderer is preferred for such an output:
 *
 * - while the widget's model exists (the kernel that drew it is alive, or a page reloaded
 *   over it), it shows the widget itself, through the notebook's own widget renderer;
 * - when the widget cannot be drawn (a page reloaded after a kernel restart: "model not
 *   found"), it draws the project from the server instead — status, graph, the pending
 *   card with its buttons, events — and follows it while any process runs it;
 * - outside the server root it shows the static picture the output keeps.
 *
 * Viewers without this extension (nbviewer, GitHub) show the static picture (`text/html`).
 */

import { PageConfig } from '@jupyterlab/coreutils';
import type { IRenderMime } from '@jupyterlab/rendermime';
import { Message } from '@lumino/messaging';
import { Panel, Widget } from '@lumino/widgets';

import type { IProjectDetail } from './answers';
import { api } from './api';
import { DetailView, IDetailActions, replyFrom } from './detail';
import { el } from './dom';

export const PROJECT_MIME = 'application/vnd.lightscientist.project+json';
const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
const MISSING = 'model not found';
const EVERY_MS = 2000;
const EVENTS_BATCH = 200;

interface IProjectReference {
  /** The project folder, an absolute path on the server's machine. */
  root: string;
}

/** What of a renderer registry this module uses (the notebook's own). */
interface IRegistry {
  getFactory(mimeType: string): IRenderMime.IRendererFactory | undefined;
  createRenderer(mimeType: string): IRenderMime.IRenderer;
}

/** `root` relative to the server root ('' for the root itself), or null outside it. */
export function underServerRoot(
  root: string,
  serverRoot: string
): string | null {
  const base = serverRoot.replace(/\/+$/, '');
  if (!base || !root) {
    return null;
  }
  if (root === base) {
    return '';
  }
  return root.startsWith(`${base}/`) ? root.slice(base.length + 1) : null;
}

export function projectFactory(
  actions: Omit<IDetailActions, 'reply'>
): IRenderMime.IRendererFactory {
  return {
    safe: false, // it may show a widget, which runs code
    mimeTypes: [PROJECT_MIME],
    defaultRank: -20, // before the widget renderer (-10): this one decides
    createRenderer: options => new ProjectRenderer(options.mimeType, actions)
  };
}

class ProjectRenderer extends Panel implements IRenderMime.IRenderer {
  constructor(
    private readonly _mimeType: string,
    private readonly _actions: Omit<IDetailActions, 'reply'>
  ) {
    super();
    this.addClass('ls-ProjectOutput');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._model = model;
    this._started = false;
    if (this.isAttached) {
      this._start();
    }
  }

  dispose(): void {
    window.clearInterval(this._timer);
    this._observer?.disconnect();
    this._live?.dispose();
    super.dispose();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._start(); // the notebook around this output is known only once attached
  }

  private _start(): void {
    const model = this._model;
    if (!model || this._started) {
      return;
    }
    this._started = true;
    this._clear();
    const registry = this._registry();
    if (model.data[WIDGET_MIME] && registry?.getFactory(WIDGET_MIME)) {
      const live = registry.createRenderer(WIDGET_MIME);
      // beside this renderer, not in it: the widget manager gives itself to the widget
      // renderers it finds directly in an output's box (one made before the kernel
      // connected waits for it there)
      const host = this.parent;
      live.addClass('jp-OutputArea-output');
      if (host instanceof Panel) {
        host.insertWidget(host.widgets.indexOf(this), live);
        this.hide();
      } else {
        this.addWidget(live);
      }
      this._live = live;
      const check = () => {
        if (live.node.textContent?.includes(MISSING)) {
          this._observer?.disconnect();
          live.dispose();
          this._live = null;
          this.show();
          this._fromServer(model);
        }
      };
      this._observer = new MutationObserver(check);
      this._observer.observe(live.node, {
        childList: true,
        characterData: true,
        subtree: true
      });
      void live.renderModel(model).then(check);
      return;
    }
    this._fromServer(model);
  }

  private _clear(): void {
    this._observer?.disconnect();
    this._live?.dispose();
    this._live = null;
    this.show();
    window.clearInterval(this._timer);
    for (const child of [...this.widgets]) {
      child.dispose();
    }
    this.node.textContent = '';
  }

  /** The renderers of the output area that holds this output (the notebook's own, with
   * its widget renderer), found up the widget tree. */
  private _registry(): IRegistry | null {
    for (let widget = this.parent; widget; widget = widget.parent) {
      const registry = (widget as Widget & { rendermime?: IRegistry })
        .rendermime;
      if (registry && typeof registry.createRenderer === 'function') {
        return registry;
      }
    }
    return null;
  }

  /** Draw the project from the server's answers (or the static picture, outside it). */
  private _fromServer(model: IRenderMime.IMimeModel): void {
    const ref = model.data[this._mimeType] as unknown as IProjectReference;
    const path = underServerRoot(ref.root, PageConfig.getOption('serverRoot'));
    const box = new Widget();
    box.addClass('ls-served');
    this.addWidget(box);
    if (path === null) {
      el(
        'p',
        {
          className: 'ls-served-note',
          text:
            `This dashboard's kernel is gone, and its project (${ref.root}) is outside ` +
            "this server's folder: here is the picture the notebook kept."
        },
        box.node
      );
      // the kept picture, drawn by JupyterLab's own HTML renderer
      const registry = this._registry();
      if (typeof model.data['text/html'] === 'string' && registry) {
        const renderer = registry.createRenderer('text/html');
        this.addWidget(renderer);
        void renderer.renderModel(model);
      }
      return;
    }
    el(
      'p',
      {
        className: 'ls-served-note',
        text:
          'The kernel that drew this dashboard is gone: this view is drawn from the ' +
          "project's files through the server, and follows the project while any " +
          'process runs it.'
      },
      box.node
    );
    let detail: IProjectDetail | null = null;
    let lastSeq: number | undefined = undefined;
    const view = new DetailView(box.node, {
      ...this._actions,
      reply: (approve, comment, toStage) =>
        void replyFrom(view, detail, approve, comment, toStage)
          .then(() => void tick())
          .catch(() => undefined),
      refresh: () => void tick()
    });
    const error = el('p', { className: 'ls-error' }, box.node);
    error.hidden = true;
    let busy = false;
    const tick = async () => {
      if (busy || this.isDisposed || (!this.isVisible && detail)) {
        return;
      }
      busy = true;
      try {
        detail = await api.project(path);
        view.render(detail);
        const events = await api.events(path, lastSeq, EVENTS_BATCH);
        lastSeq = events.last_seq;
        view.appendEvents(events.events, events.reset);
        error.hidden = true;
      } catch (failure) {
        error.textContent = `LightScientist: ${(failure as Error).message}`;
        error.hidden = false;
      } finally {
        busy = false;
      }
    };
    void tick();
    this._timer = window.setInterval(() => void tick(), EVERY_MS);
  }

  private _model: IRenderMime.IMimeModel | null = null;
  private _started = false;
  private _observer: MutationObserver | null = null;
  private _live: Widget | null = null;
  private _timer = 0;
}
