/**
 * The console's JSON API, as the page calls it (routes: docs of
 * functions/src/console). Every failure becomes an ApiError whose message
 * is words for a person: the server's `error`, or what went wrong on the
 * way (no answer, not JSON), so no view ever renders blank.
 */
import type {
  AppSummary,
  DocumentPage,
  DocumentView,
  IncidentList,
  InstancePage,
  InstanceView,
  MigrationOutcomeView,
  Overview,
  ProcessVersionsView,
  RepairBasisView,
  RepairOutcome,
  RepairRequest,
  Role,
  VersionModelView,
  WaitingPage,
} from '../../functions/src/operations/types';
import type { TaskCompletion, TaskQuery, UserTask, UserTaskPage } from './task-types';

/** GET /api/whoami: who the server took the caller for, and how it let them in. */
export interface Whoami {
  readonly id: string;
  readonly role: Role;
  readonly access: 'iam' | 'local';
  readonly projectId: string;
  /** The app the deployment runs: its name and message names. */
  readonly app: AppSummary;
}

/** A failed call: the HTTP status (0: no answer) and the server's reason; `refused`: a repair refused, nothing changed. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly refused: boolean,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The filters of the documents list, as the query string carries them (the server parses and checks them). */
export interface DocumentQuery {
  readonly status?: string;
  readonly reason?: string;
  readonly messageName?: string;
  readonly key?: string;
  readonly olderThan?: string;
}

/** The filters of the waiting list (`inbox waiting`'s flags). */
export interface WaitingQuery {
  readonly message?: string;
  readonly olderThan?: string;
}

export const PAGE_SIZE = 50;

/** The most tasks GET /api/tasks gives at once: an instance's open tasks are asked in one request. */
const TASKS_MAX = 500;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    // Relative: the page works at / (inbox console's proxy) and under a path prefix alike.
    response = await fetch(path, {
      ...init,
      headers: { Accept: 'application/json', ...init.headers },
      credentials: 'same-origin',
    });
  } catch (err) {
    throw new ApiError(
      0,
      `The console's server did not answer (${err instanceof Error ? err.message : String(err)}).`,
      false,
    );
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    const hint = text.trim().slice(0, 200);
    throw new ApiError(
      response.status,
      `HTTP ${response.status} ${response.statusText}: the answer is not JSON${hint === '' ? '' : ` (${hint})`}.`,
      false,
    );
  }
  if (!response.ok) {
    const error =
      isRecord(body) && typeof body.error === 'string' ? body.error : `HTTP ${response.status} ${response.statusText}`;
    throw new ApiError(response.status, error, isRecord(body) && body.refused === true);
  }
  return body as T;
}

function query(params: Readonly<Record<string, string | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** The filters of GET /api/instances: a business key, or a process and a version; a status with either. */
export interface InstanceQuery {
  readonly businessKey?: string;
  readonly process?: string;
  readonly version?: string;
  readonly status?: string;
}

export const api = {
  whoami: (): Promise<Whoami> => call('api/whoami'),
  overview: (): Promise<Overview> => call('api/overview'),
  documents: (filters: DocumentQuery, after: string | null): Promise<DocumentPage> =>
    call(`api/documents${query({ ...filters, limit: String(PAGE_SIZE), after: after ?? undefined })}`),
  document: (id: string): Promise<DocumentView> => call(`api/documents/${encodeURIComponent(id)}`),
  /** A business key's instances (whole; `next` null), or a process version's, a page at a time; `status` narrows either. */
  instances: (filters: InstanceQuery, after: string | null): Promise<InstancePage> =>
    call(
      `api/instances${query({ ...filters, ...(filters.businessKey === undefined ? { limit: String(PAGE_SIZE), after: after ?? undefined } : {}) })}`,
    ),
  instance: (id: string): Promise<InstanceView> => call(`api/instances/${encodeURIComponent(id)}`),
  incidents: (all: boolean): Promise<IncidentList> => call(`api/incidents${all ? '?all=true' : ''}`),
  waiting: (filters: WaitingQuery, after: string | null): Promise<WaitingPage> =>
    call(`api/waiting${query({ ...filters, limit: String(PAGE_SIZE), after: after ?? undefined })}`),
  tasks: (filters: TaskQuery, after: string | null): Promise<UserTaskPage> =>
    call(`api/tasks${query({ ...filters, limit: String(PAGE_SIZE), after: after ?? undefined })}`),
  /** The OPEN user tasks of one instance (its tokens at user tasks link to them). */
  openTasksOf: (instanceId: string): Promise<UserTaskPage> =>
    call(`api/tasks${query({ status: 'OPEN', instance: instanceId, limit: String(TASKS_MAX) })}`),
  task: (id: string): Promise<UserTask> => call(`api/tasks/${encodeURIComponent(id)}`),
  /**
   * POST /api/tasks/ID/complete, with the repair's same-origin headers. The same `requestId` again is the
   * same completion: the server answers ALREADY_COMPLETED and changes nothing.
   */
  completeTask: (
    id: string,
    variables: Readonly<Record<string, unknown>>,
    requestId: string,
  ): Promise<TaskCompletion> =>
    call(`api/tasks/${encodeURIComponent(id)}/complete`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Inbox-Console': '1' },
      body: JSON.stringify({ variables, requestId }),
    }),
  /**
   * POST /api/repairs: the two headers are the server's CSRF check (a foreign page cannot send them without a preflight).
   * `expect`: the preview's basis, sent with the confirmation so the server refuses it if the state changed since.
   */
  repair: (
    request: RepairRequest,
    preview: boolean,
    requestId: string,
    expect: RepairBasisView | null = null,
  ): Promise<RepairOutcome> =>
    call('api/repairs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Inbox-Console': '1' },
      body: JSON.stringify({ request, preview, requestId, ...(expect === null ? {} : { expect }) }),
    }),
  /** GET /api/versions?process=KEY: the versions of a process, each with its live instances and where their tokens are. */
  versions: (processKey: string): Promise<ProcessVersionsView> => call(`api/versions${query({ process: processKey })}`),
  /** GET /api/versions/VERSION?process=KEY: one stored version's XML and elements. */
  version: (processKey: string, version: string): Promise<VersionModelView> =>
    call(`api/versions/${encodeURIComponent(version)}${query({ process: processKey })}`),
  /** POST /api/migrations (`inbox migrate`): a preview answers `expect`, which the run sends back with the same requestId. */
  migrate: (request: MigrationRequest, preview: boolean, requestId: string, expect: string | null = null) =>
    call<MigrationOutcomeView>('api/migrations', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Inbox-Console': '1' },
      body: JSON.stringify({ ...request, preview, requestId, ...(expect === null ? {} : { expect }) }),
    }),
};

/** What a migration moves: `inbox migrate`'s --process, --from, --to, --map and --instances or --all. */
export interface MigrationRequest {
  readonly processKey: string;
  readonly from: string;
  readonly to: string;
  /** Source element id → target element id (`--map`); an element not named moves to the same id. */
  readonly mapping: Readonly<Record<string, string>>;
  readonly instances: readonly string[] | 'all';
}

/** GET /api/documents/ID/raw: the exact bytes the receiver kept, as a file (a link, not a fetch: the browser saves it). */
export function rawUrl(id: string): string {
  return `api/documents/${encodeURIComponent(id)}/raw`;
}

/** An error in words, whatever was thrown. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return err.status === 0 ? err.message : `${err.message} (HTTP ${err.status})`;
  return err instanceof Error ? err.message : String(err);
}
