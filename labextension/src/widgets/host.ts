/**
 * What every dashboard widget shares: the anywidget model it is drawn from, the way to the
 * server extension from inside a notebook's output (page configuration, token, XSRF), and
 * the comm fallback where no server extension answers.
 *
 * The widgets are bundled one file each (`jlpm build:widgets`, anywidget's ESM modules), so
 * this module and the panel's drawing code they import are compiled into each of them; they
 * import nothing from JupyterLab's packages, which a widget's module cannot reach.
 */

/** The part of anywidget's model the widgets use (`@anywidget/types`' `AnyModel`). */
export interface IWidgetModel<T> {
  get<K extends keyof T>(name: K): T[K];
  set<K extends keyof T>(name: K, value: T[K]): void;
  save_changes(): void;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event: string, callback: (...args: any[]) => void): void;
  send(message: Record<string, unknown>): void;
}

/** What anywidget hands a widget's `render`. */
export interface IRenderProps<T> {
  model: IWidgetModel<T>;
  el: HTMLElement;
}

/** An action's result as the widget shows it. */
export interface IAnswer {
  ok: boolean;
  text: string;
}

/** How long a widget waits for the kernel's answer over the comm. */
export const ANSWER_MS = 2000;

/** Where the server extension is: base URL, token, server root. */
export interface IPageConfig {
  base: string;
  token: string;
  serverRoot: string;
}

/** JupyterLab's (and Notebook 7's) page configuration, or null outside them. */
export function pageConfig(): IPageConfig | null {
  const node = document.getElementById('jupyter-config-data');
  if (!node) {
    return null;
  }
  try {
    const data = JSON.parse(node.textContent || '{}');
    if (!data.baseUrl) {
      return null;
    }
    return {
      base: String(data.baseUrl).replace(/\/?$/, '/'),
      token: data.token || '',
      serverRoot: String(data.serverRoot || '').replace(/\/+$/, '')
    };
  } catch {
    return null;
  }
}

/** `root` relative to the server root, or null when it is outside it (or unknown). */
export function relative(root: string, serverRoot: string): string | null {
  if (!root || !serverRoot) {
    return null;
  }
  if (root === serverRoot) {
    return '';
  }
  return root.startsWith(serverRoot + '/')
    ? root.slice(serverRoot.length + 1)
    : null;
}

/** The page's configuration and the workspace's path under the server root, when both are
 * known: the server extension can be asked. */
export function located(
  root: string
): { cfg: IPageConfig; rel: string } | null {
  const cfg = pageConfig();
  const rel = cfg ? relative(root, cfg.serverRoot) : null;
  return cfg && rel !== null ? { cfg, rel } : null;
}

function xsrf(): string {
  const match = document.cookie.match('\\b_xsrf=([^;]*)\\b');
  return match ? decodeURIComponent(match[1]) : '';
}

/** The server's JSON answer (or null) and its HTTP status. */
export interface ICalled {
  status: number;
  data: any;
}

/** Call one endpoint of the server extension (`<base>lightscientist/<path>`). */
export async function call(
  cfg: IPageConfig,
  method: string,
  path: string,
  body?: unknown
): Promise<ICalled> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-XSRFToken': xsrf()
  };
  if (cfg.token) {
    headers.Authorization = 'token ' + cfg.token;
  }
  const response = await fetch(cfg.base + 'lightscientist/' + path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body)
  });
  let data: any = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  return { status: response.status, data };
}

/** True when the answer is the server's own 404 page: no server extension is there. */
export function noExtension(got: ICalled): boolean {
  return got.status === 404 && !got.data?.status;
}

/**
 * A custom message to the kernel and its answer (`{kind: "outcome", ok, text}`), or `late`
 * after `ANSWER_MS`: the fallback where no server extension answers.
 */
export function viaComm<T>(
  model: IWidgetModel<T>,
  message: Record<string, unknown>,
  late: string
): Promise<IAnswer> {
  return new Promise(resolve => {
    const onMessage = (msg: any) => {
      if (!msg || msg.kind !== 'outcome') {
        return;
      }
      clearTimeout(timer);
      model.off('msg:custom', onMessage);
      resolve({ ok: !!msg.ok, text: String(msg.text ?? '') });
    };
    const timer = setTimeout(() => {
      model.off('msg:custom', onMessage);
      resolve({ ok: false, text: late });
    }, ANSWER_MS);
    model.on('msg:custom', onMessage);
    model.send(message);
  });
}

/** What a reply carries, to the server's `reply` endpoint or over the comm. */
export interface IWidgetReply {
  approve: boolean;
  comment: string;
  decision_id: string;
  to_stage: string | null;
  budget?: Record<string, number> | null;
}

/** How an answer of the server is said (it may wait for the run to take a reply). */
export type Words = (
  data: any,
  cfg: IPageConfig,
  rel: string
) => Promise<string>;

/**
 * An action through the server extension's `endpoint` (`body` with the project's path and
 * `from: "dashboard"`), else — no server extension, or no answer — the `comm` message to the
 * kernel; `late` is said when the kernel is mute too, `refused` before a refusal's reason.
 */
export async function act<T extends { root: string }>(
  model: IWidgetModel<T>,
  endpoint: string,
  body: Record<string, unknown>,
  comm: Record<string, unknown>,
  late: string,
  words: Words = async data => String(data?.message ?? ''),
  refused = 'not done'
): Promise<IAnswer> {
  const where = located(model.get('root'));
  if (where) {
    try {
      const got = await call(where.cfg, 'POST', endpoint, {
        path: where.rel,
        from: 'dashboard',
        ...body
      });
      if (got.status === 200) {
        return { ok: true, text: await words(got.data, where.cfg, where.rel) };
      }
      if (!noExtension(got)) {
        return { ok: false, text: refusal(refused, got) };
      }
    } catch {
      // the server did not answer: try the kernel
    }
  }
  return viaComm(model, comm, late);
}

/** A reply through the server extension, else through the kernel's comm (`act`). */
export function sendReply<T extends { root: string }>(
  model: IWidgetModel<T>,
  reply: IWidgetReply,
  late: string,
  described: Words
): Promise<IAnswer> {
  const message = { ...reply } as Record<string, unknown>;
  return act(
    model,
    'reply',
    message,
    { kind: 'reply', ...message },
    late,
    described,
    'not applied'
  );
}

/** A refusal in words: `not applied: <the server's message>`. */
export function refusal(verb: string, got: ICalled): string {
  return `${verb}: ${got.data?.message || 'HTTP ' + got.status}`;
}

/** A line that says how an action went (`ls-ok`, `ls-err`, or plain while it is on its way). */
export function showOutcome(
  node: HTMLElement,
  kind: '' | 'ok' | 'err',
  text: string
): void {
  node.className = 'ls-outcome' + (kind ? ` ls-${kind}` : '');
  node.textContent = text;
}

/** A status line that screen readers announce. */
export function outcomeLine(parent: HTMLElement): HTMLElement {
  const node = document.createElement('div');
  node.className = 'ls-outcome';
  node.setAttribute('role', 'status');
  node.setAttribute('aria-live', 'polite');
  parent.appendChild(node);
  return node;
}

/** Show how a reply went in `node`; a refused one frees `buttons` again. True when it went. */
export function answered(
  node: HTMLElement,
  answer: IAnswer,
  buttons: HTMLButtonElement[]
): boolean {
  showOutcome(node, answer.ok ? 'ok' : 'err', answer.text);
  for (const button of answer.ok ? [] : buttons) {
    button.disabled = false;
  }
  return answer.ok;
}

/** Draw now and on every change of `traits`; returns what undoes it (anywidget's cleanup). */
export function follow<T>(
  model: IWidgetModel<T>,
  traits: string,
  draw: () => void
): () => void {
  model.on(traits, draw);
  draw();
  return () => model.off(traits, draw);
}

/** What every pending decision's card shows of it (`IGateCardView`, `IBudgetCardView`). */
export interface IDecisionView {
  id?: string;
  settled?: boolean;
  heading?: string;
}

/**
 * Mark `card` as the card of the decision `view`: its id, whether it is answered, its name
 * for screen readers; the widget (`root`) hidden while no decision is shown. False then.
 */
export function showDecision<V extends IDecisionView>(
  root: HTMLElement,
  card: HTMLElement,
  view: V,
  name: string
): view is V & { id: string } {
  root.hidden = !view.id;
  if (!view.id) {
    return false;
  }
  card.dataset.decision = view.id;
  card.dataset.settled = view.settled ? 'true' : 'false';
  card.setAttribute('aria-label', view.heading || name);
  return true;
}
