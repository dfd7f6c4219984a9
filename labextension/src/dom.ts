/**
 * Small DOM helpers shared by the panel's views.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Create an HTML element with a class, text and tooltip, appended to `parent`. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; title?: string } = {},
  parent?: HTMLElement
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.className) {
    element.className = props.className;
  }
  if (props.text !== undefined) {
    element.textContent = props.text;
  }
  if (props.title) {
    element.title = props.title;
  }
  parent?.appendChild(element);
  return element;
}

/** Create an SVG element with attributes, appended to `parent`. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  parent?: Element
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    element.setAttribute(key, String(value));
  }
  parent?.appendChild(element);
  return element;
}

/** A region that scrolls: reachable with the keyboard, and named. */
export function focusable(node: HTMLElement, label: string): void {
  node.tabIndex = 0;
  if (node.tagName === 'DIV') {
    node.setAttribute('role', 'region'); // a list keeps its own role
  }
  node.setAttribute('aria-label', label);
}

/** A project's path as the panel shows it. */
export function shownPath(path: string): string {
  return path || '(server root)';
}

/** The statuses in words: the same table as lightscientist_jupyter/jupyter/look.py. */
export const STATUS_WORDS: Record<string, string> = {
  running: 'running',
  waiting_user: 'waiting for you',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  stopped: 'stopped',
  paused: 'paused',
  interrupted: 'interrupted',
  starting: 'starting'
};

/** A project status in words. */
export function statusWords(status: string | undefined): string {
  return status ? (STATUS_WORDS[status] ?? status) : '?';
}
