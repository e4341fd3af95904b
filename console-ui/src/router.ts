/**
 * Hash routes, so the server serves one page and every view has an address
 * an operator can paste: #/ overview, #/documents?filters, #/documents/ID,
 * #/instances?businessKey=K, #/instances?process=P&version=V, #/instances/ID, #/incidents[?all=true],
 * #/waiting?filters, #/tasks?filters, #/tasks/ID, #/migrate?process=P&from=V[&instance=ID].
 */

/** Where the page is. */
export type Route =
  | { readonly view: 'overview' }
  | { readonly view: 'documents'; readonly params: URLSearchParams }
  | { readonly view: 'document'; readonly id: string }
  | { readonly view: 'instances'; readonly params: URLSearchParams }
  | { readonly view: 'instance'; readonly id: string }
  | { readonly view: 'incidents'; readonly params: URLSearchParams }
  | { readonly view: 'waiting'; readonly params: URLSearchParams }
  | { readonly view: 'tasks'; readonly params: URLSearchParams }
  | { readonly view: 'task'; readonly id: string }
  | { readonly view: 'migrate'; readonly params: URLSearchParams }
  | { readonly view: 'not-found'; readonly hash: string };

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [path = '', search = ''] = raw.split(/\?(.*)/s, 2);
  const parts = path.split('/').filter((p) => p !== '');
  const params = new URLSearchParams(search);
  if (parts.length === 0) return { view: 'overview' };
  const [head, id, ...rest] = parts;
  if (rest.length > 0) return { view: 'not-found', hash };
  const decoded = id === undefined ? null : decode(id);
  if (head === 'documents') {
    if (id === undefined) return { view: 'documents', params };
    return decoded === null ? { view: 'not-found', hash } : { view: 'document', id: decoded };
  }
  if (head === 'instances') {
    if (id === undefined) return { view: 'instances', params };
    return decoded === null ? { view: 'not-found', hash } : { view: 'instance', id: decoded };
  }
  if (head === 'tasks') {
    if (id === undefined) return { view: 'tasks', params };
    return decoded === null ? { view: 'not-found', hash } : { view: 'task', id: decoded };
  }
  if ((head === 'incidents' || head === 'waiting' || head === 'migrate') && id === undefined)
    return { view: head, params };
  return { view: 'not-found', hash };
}

/** A list's address: its path and the parameters that are set. */
function listLink(path: string, params: Readonly<Record<string, string | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? path : `${path}?${s}`;
}

/** Links, built in one place so every view writes them the same way. */
export const link = {
  overview: (): string => '#/',
  documents: (params: Readonly<Record<string, string | undefined>> = {}): string => listLink('#/documents', params),
  document: (id: string): string => `#/documents/${encodeURIComponent(id)}`,
  instances: (businessKey?: string): string =>
    businessKey === undefined ? '#/instances' : `#/instances?businessKey=${encodeURIComponent(businessKey)}`,
  /** The instances of a process version (`status`, `after`: the list's filters and page). */
  versionInstances: (params: Readonly<Record<string, string | undefined>>): string => listLink('#/instances', params),
  instance: (id: string): string => `#/instances/${encodeURIComponent(id)}`,
  incidents: (all = false): string => (all ? '#/incidents?all=true' : '#/incidents'),
  waiting: (params: Readonly<Record<string, string | undefined>> = {}): string => listLink('#/waiting', params),
  tasks: (params: Readonly<Record<string, string | undefined>> = {}): string => listLink('#/tasks', params),
  task: (id: string): string => `#/tasks/${encodeURIComponent(id)}`,
  /** The migration view of a process version's live instances, or of one of them (`instance`). */
  migrate: (params: { readonly process: string; readonly from: string; readonly instance?: string }): string =>
    listLink('#/migrate', params),
};
