/**
 * The server extension's REST API (`<base_url>/lightscientist/...`): the requests.
 *
 * Requests go through `ServerConnection`, which adds the token and the XSRF header. What
 * they send and what the server answers are the interfaces of `answers.ts`, which mirror the
 * server's declarations (`jupyter/server/answers.py`).
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type {
  IControl,
  IControlAnswer,
  IDefaultsAnswer,
  IEventsAnswer,
  IHandoffAnswer,
  INodeAnswer,
  IOpenNotebooksAnswer,
  IProjectDetail,
  IProjectsAnswer,
  IRefusal,
  IReply,
  IReplyAnswer,
  ISettledAnswer
} from './answers';

/** A refusal from the server, carrying its message. */
export class APIError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

type Params = Record<string, string | number | undefined>;

/** Call one endpoint; resolves to its JSON or rejects with an `APIError`. */
export async function requestAPI<T>(
  endpoint: string,
  params: Params = {},
  init: RequestInit = {}
): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const query = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(
      ([key, value]) =>
        `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`
    )
    .join('&');
  const url =
    URLExt.join(settings.baseUrl, 'lightscientist', endpoint) +
    (query ? `?${query}` : '');
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new APIError(`the Jupyter server cannot be reached (${error})`, 0);
  }
  const text = await response.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const refusal = data as IRefusal | null;
    throw new APIError(
      refusal?.message ?? response.statusText,
      response.status
    );
  }
  return data as T;
}

export const api = {
  projects: () => requestAPI<IProjectsAnswer>('projects'),
  project: (path: string) => requestAPI<IProjectDetail>('project', { path }),
  node: (path: string, node: string) =>
    requestAPI<INodeAnswer>('node', { path, node }),
  events: (path: string, after: number | undefined, limit: number) =>
    requestAPI<IEventsAnswer>('events', { path, after, limit }),
  reply: (reply: IReply) =>
    requestAPI<IReplyAnswer>(
      'reply',
      {},
      { method: 'POST', body: JSON.stringify(reply) }
    ),
  control: (control: IControl) =>
    requestAPI<IControlAnswer>(
      'control',
      {},
      { method: 'POST', body: JSON.stringify(control) }
    ),
  handoff: (path: string, step: string, fields: Record<string, string> = {}) =>
    requestAPI<IHandoffAnswer>(
      'reply',
      {},
      {
        method: 'POST',
        body: JSON.stringify({ path, handoff: step, ...fields })
      }
    ),
  defaults: (values: { model: string; mode: string; budget: string }) =>
    requestAPI<IDefaultsAnswer>(
      'defaults',
      {},
      { method: 'POST', body: JSON.stringify(values) }
    ),
  openNotebooks: (page: string, paths: string[]) =>
    requestAPI<IOpenNotebooksAnswer>(
      'open-notebooks',
      {},
      { method: 'POST', body: JSON.stringify({ page, paths }) }
    ),
  notebookChange: (
    project: string,
    id: string,
    outcome: string,
    detail: string
  ) =>
    requestAPI<ISettledAnswer>(
      'notebook-change',
      {},
      {
        method: 'POST',
        body: JSON.stringify({ project, id, outcome, detail })
      }
    )
};

/** A path inside a project, relative to the server root ('' is the root itself). */
export function joinPath(project: string, name: string): string {
  return project ? `${project}/${name}` : name;
}
