import type { Request } from '@google-cloud/functions-framework';
import { z } from 'zod';
import { classifyFailure } from '../core/errors';
import { type Answer, failureAnswer, RETRY_AFTER_SECONDS, type Rejection } from '../http/answer';
import { parseBody } from '../http/request';
import type { Logger } from '../log';
import { listDocuments, readDocument } from '../operations/documents';
import { listIncidents } from '../operations/incidents';
import { instancesByBusinessKey, instancesOfVersion, readInstance } from '../operations/instances';
import { readRawData } from '../operations/raw-data';
import { readOverview } from '../operations/overview';
import { isRefusal } from '../operations/refused';
import { runRepairRequest } from '../operations/repairs';
import { WAITING_ORDER } from '../operations/shard-page';
import { pageCursorOf } from '../operations/shard-page-query';
import { listWaiting } from '../operations/waiting';
import { waitedMessageNames } from '../relay/gauges';
import type { AppSummary, OperationsDeps, RepairRequest } from '../operations/types';
import type { Caller } from './access';
import { crossSiteRefusal } from './access';
import { consoleRun, REQUEST_ID } from './console-run';
import { answerMigration } from './migrate-api';
import { answerTasks } from './tasks-api';
import { answerVersions } from './versions-api';
import { onlyMethod, refusedAnswer } from './rejections';

/**
 * The console's JSON API: each route validates its input, calls one
 * operation (operations/, the CLI's too) and sends what it returns. No read
 * or repair logic lives here.
 */
export interface ApiDeps {
  readonly ops: OperationsDeps;
  readonly access: 'iam' | 'local';
  readonly projectId: string;
  readonly app: () => AppSummary;
  readonly log: Logger;
}

/** Largest page of documents one request may ask for. */
export const MAX_PAGE = 500;
const DEFAULT_PAGE = 50;

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** `olderThan` as the CLI's --older-than writes it (`30m`, `2h`, `7d`), or plain milliseconds. */
const duration = z
  .string()
  .regex(/^\d{1,12}(ms|s|m|h|d)?$/, 'a duration: a number with ms, s, m, h or d (e.g. 30m), or milliseconds')
  .transform((text) => {
    const [, digits = '0', unit = 'ms'] = /^(\d+)(ms|s|m|h|d)?$/.exec(text) ?? [];
    return Number(digits) * (DURATION_UNITS[unit] ?? 1);
  });

const text = z.string().min(1).max(1_500);

const DocumentQuery = z
  .object({
    status: z.enum(['OPEN', 'DONE', 'PARKED']).optional(),
    reason: text.optional(),
    messageName: text.optional(),
    key: text.optional(),
    olderThan: duration.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
    after: text.optional(),
  })
  .strict();

/** A process version as instances record it (processVersion): the first 16 hex digits of the model's SHA-256. */
const version = z.string().regex(/^[0-9a-f]{16}$/, "an instance's processVersion: 16 lowercase hex digits");

/**
 * GET /api/instances: those of a business key (all of them, optionally only
 * those of a process, a version, a status), or those of one process version
 * (`process` and `version`, optionally a status), a page at a time.
 */
const InstanceQuery = z
  .object({
    businessKey: text.optional(),
    process: text.optional(),
    version: version.optional(),
    status: z.enum(['RUNNING', 'COMPLETED', 'INCIDENT']).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
    after: text.optional(),
  })
  .strict();

const IncidentQuery = z.object({ all: z.enum(['true', 'false']).default('false') }).strict();

const WaitingQuery = z
  .object({
    message: text.optional(),
    olderThan: duration.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
    after: text.optional(),
  })
  .strict();

const id = z.string().min(1).max(1_500);
const RepairRequestSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('requeue'), id }).strict(),
  z.object({ kind: z.literal('park'), id, text: z.string().min(1).max(10_000) }).strict(),
  z
    .object({
      kind: z.literal('move-token'),
      instanceId: id,
      activityId: id,
      executionId: id.nullable(),
      force: z.boolean(),
    })
    .strict(),
  z.object({ kind: z.literal('cancel-token'), instanceId: id, executionId: id }).strict(),
  z.object({ kind: z.literal('resolve-incident'), instanceId: id, note: z.string().max(10_000).nullable() }).strict(),
]) satisfies z.ZodType<RepairRequest>;

/** A preview's basis sent back with its confirmation (operations/types.ts RepairBasisView). */
const BasisSchema = z
  .object({
    subject: z.enum(['token', 'tokens', 'incidents', 'document']),
    facts: z
      .record(z.string().regex(/^[a-z]{1,20}$/), z.string().max(20_000))
      .refine((f) => Object.keys(f).length <= 10, 'at most 10 facts'),
  })
  .strict();

/**
 * POST /api/repairs: the request, preview or not, the id that makes the
 * confirmation the same request as its preview, and the preview's basis
 * (`expect`) that holds the confirmation to what was previewed.
 */
const RepairBody = z
  .object({
    request: RepairRequestSchema,
    preview: z.boolean(),
    requestId: REQUEST_ID.optional(),
    expect: BasisSchema.optional(),
  })
  .strict();

const badRequest = (error: string): Rejection => ({ kind: 'reject', status: 400, error });
const notFound = (error: string): Rejection => ({ kind: 'reject', status: 404, error });

/** A query string as its schema reads it, or the 400 naming the field. */
function parseQuery<S extends z.ZodType>(
  req: Request,
  schema: S,
): { ok: true; value: z.output<S> } | { ok: false; answer: Rejection } {
  const parsed = schema.safeParse(req.query);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, answer: badRequest(z.prettifyError(parsed.error)) };
}

/** A path segment decoded (`%2F` in an id), or null when it is not valid percent-encoding. */
function segment(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** The answer to a failed operation: 503 when a retry can heal it, else 500, both logged. */
function failed(deps: ApiDeps, err: unknown, action: string, fields: Readonly<Record<string, unknown>>): Answer {
  const failure = classifyFailure(err);
  deps.log.error(`console: unable to ${action}`, { ...fields, code: failure.code, err });
  return failureAnswer(failure, action, RETRY_AFTER_SECONDS);
}

/** Answers one /api/ request of a caller the access check let in. */
export async function answerApi(deps: ApiDeps, req: Request, caller: Caller): Promise<Answer> {
  const parts = req.path.split('/').slice(2); // '', 'api', …
  const [resource, rawId, ...rest] = parts;
  if (resource === 'repairs' && rawId === undefined)
    return req.method === 'POST' ? repair(deps, req, caller) : onlyMethod('POST');
  if (resource === 'migrations' && rawId === undefined)
    return req.method === 'POST'
      ? answerMigration(deps.ops, req, caller, (err, action) => failed(deps, err, action, { path: req.path }))
      : onlyMethod('POST');
  if (resource === 'versions' && rest.length === 0)
    return answerVersions(deps.ops, req, rawId, (err, action) => failed(deps, err, action, { path: req.path }));
  if (resource === 'tasks') {
    const taskId = rawId === undefined ? null : segment(rawId);
    if (rawId !== undefined && (taskId === null || taskId === '')) return badRequest(`not an id: ${rawId}`);
    return answerTasks(deps.ops, req, caller, { id: taskId, rest }, (err, action) =>
      failed(deps, err, action, { path: req.path }),
    );
  }
  const route = routeOf(resource, rawId, rest);
  if (route === null)
    return notFound(
      `no route ${req.path}: the API has /api/whoami, /api/overview, /api/documents[/ID[/raw]], /api/instances[/ID], /api/incidents, /api/waiting, /api/tasks[/ID], /api/versions[/VERSION]?process=KEY, POST /api/tasks/ID/complete, POST /api/repairs and POST /api/migrations`,
    );
  if (req.method !== 'GET' && req.method !== 'HEAD') return onlyMethod('GET');
  const itemId = rawId === undefined ? null : segment(rawId);
  if (rawId !== undefined && (itemId === null || itemId === '' || itemId.includes('/')))
    return badRequest(`not an id: ${rawId}`);
  try {
    return await read(deps, req, caller, route, itemId);
  } catch (err) {
    // A read refuses stored data it cannot show (a field edited by hand): the reason names the document; a retry cannot heal it.
    if (isRefusal(err)) return refusedAnswer(err.message);
    return failed(deps, err, `read ${route}`, { path: req.path });
  }
}

type Route =
  | 'whoami'
  | 'overview'
  | 'documents'
  | 'document'
  | 'document-raw'
  | 'instances'
  | 'instance'
  | 'incidents'
  | 'waiting';

function routeOf(resource: string | undefined, rawId: string | undefined, rest: readonly string[]): Route | null {
  if (rest.length > 0)
    return resource === 'documents' && rawId !== undefined && rest.length === 1 && rest[0] === 'raw'
      ? 'document-raw'
      : null;
  if (resource === 'whoami' || resource === 'overview' || resource === 'incidents' || resource === 'waiting')
    return rawId === undefined ? resource : null;
  if (resource === 'documents') return rawId === undefined ? 'documents' : 'document';
  if (resource === 'instances') return rawId === undefined ? 'instances' : 'instance';
  return null;
}

async function read(deps: ApiDeps, req: Request, caller: Caller, route: Route, itemId: string | null): Promise<Answer> {
  switch (route) {
    case 'whoami':
      return {
        kind: 'ok',
        body: { id: caller.id, role: caller.role, access: deps.access, projectId: deps.projectId, app: deps.app() },
      };
    case 'overview':
      return { kind: 'ok', body: { ...(await readOverview(deps.ops)) } };
    case 'documents': {
      const q = parseQuery(req, DocumentQuery);
      if (!q.ok) return q.answer;
      const { status, reason, messageName, key, olderThan, limit, after } = q.value;
      const filters = {
        ...(status === undefined ? {} : { status }),
        ...(reason === undefined ? {} : { reason }),
        ...(messageName === undefined ? {} : { messageName }),
        ...(key === undefined ? {} : { correlationKey: key }),
        ...(olderThan === undefined ? {} : { olderThanMs: olderThan }),
      };
      return { kind: 'ok', body: { ...(await listDocuments(deps.ops, filters, { limit, after: after ?? null })) } };
    }
    case 'document': {
      const view = await readDocument(deps.ops, itemId ?? '');
      return view === null ? notFound(`no inbox document ${itemId ?? ''}`) : { kind: 'ok', body: { ...view } };
    }
    case 'document-raw':
      return rawData(deps, itemId ?? '');
    case 'instances':
      return instances(deps, req);
    case 'instance': {
      const view = await readInstance(deps.ops, itemId ?? '');
      return view === null ? notFound(`no process instance ${itemId ?? ''}`) : { kind: 'ok', body: { ...view } };
    }
    case 'incidents': {
      const q = parseQuery(req, IncidentQuery);
      if (!q.ok) return q.answer;
      return { kind: 'ok', body: { ...(await listIncidents(deps.ops, { all: q.value.all === 'true' })) } };
    }
    case 'waiting':
      return waiting(deps, req);
  }
}

/**
 * GET /api/documents/ID/raw: the exact bytes the receiver kept of a message
 * (what `inbox show ID --raw FILE` writes for it), as a file to save; a
 * document without raw data is a 404 that says where its payload is.
 */
async function rawData(deps: ApiDeps, id: string): Promise<Answer> {
  const raw = await readRawData(deps.ops, id);
  if (raw.kind === 'no-document') return notFound(`no inbox document ${id}`);
  if (raw.kind === 'no-raw-data')
    return notFound(
      `${id} keeps no raw data: its message was readable, and its payload is shown with the document (\`inbox show ${id} --raw FILE\` writes its exact bytes)`,
    );
  return { kind: 'bytes', body: raw.bytes, contentType: 'application/octet-stream', filename: `${id}.bin` };
}

/** GET /api/instances: a business key's instances (filtered here), or a process version's a page at a time; anything else is a 400 saying what to give. */
async function instances(deps: ApiDeps, req: Request): Promise<Answer> {
  const q = parseQuery(req, InstanceQuery);
  if (!q.ok) return q.answer;
  const { businessKey, process, version: v, status, limit, after } = q.value;
  if (businessKey !== undefined) {
    if (after !== undefined)
      return badRequest('after: a business key has one instance per process, listed whole; after pages a version');
    const rows = (await instancesByBusinessKey(deps.ops, businessKey)).filter(
      (r) =>
        (process === undefined || r.processKey === process) &&
        (v === undefined || r.processVersion === v) &&
        (status === undefined || r.status === status),
    );
    return { kind: 'ok', body: { instances: rows, next: null } };
  }
  if (process === undefined || v === undefined)
    return badRequest(
      "give businessKey, or process and version (the process key and an instance's processVersion, 16 hex digits, as its page shows it)",
    );
  const page = await instancesOfVersion(
    deps.ops,
    { processKey: process, version: v, ...(status === undefined ? {} : { status }) },
    { limit, after: after ?? null },
  );
  return { kind: 'ok', body: { ...page } };
}

/** GET /api/waiting: the CLI's `inbox waiting`; an unknown message name or a cursor no page gave is a 400 that says what is accepted. */
async function waiting(deps: ApiDeps, req: Request): Promise<Answer> {
  const q = parseQuery(req, WaitingQuery);
  if (!q.ok) return q.answer;
  const { message, olderThan, limit, after } = q.value;
  const cursor = after === undefined ? null : pageCursorOf(WAITING_ORDER, after);
  if (cursor === null && after !== undefined)
    return badRequest(
      `after: expected the \`next\` a previous page of /api/waiting gave, got ${JSON.stringify(after)}`,
    );
  if (message !== undefined) {
    const names = waitedMessageNames(await deps.ops.engine());
    if (!names.includes(message))
      return badRequest(
        `message: ${JSON.stringify(message)} is no message the deployed models wait for (${names.join(', ')})`,
      );
  }
  const page = await listWaiting(
    deps.ops,
    { messageName: message ?? null, olderThanMs: olderThan ?? null },
    { size: limit, after: cursor },
  );
  return { kind: 'ok', body: { ...page } };
}

/** POST /api/repairs: repairers only, same-origin only; a refusal is a 409 with its reason, never a 5xx. */
async function repair(deps: ApiDeps, req: Request, caller: Caller): Promise<Answer> {
  if (caller.role !== 'repairer') {
    deps.log.warn('console: repair refused to a viewer', { by: caller.id });
    return {
      kind: 'reject',
      status: 403,
      error: `${caller.id} may view but not repair: repairers are listed in INBOX_CONSOLE_REPAIRERS (deploy.sh --console-repairers)`,
    };
  }
  const crossSite = crossSiteRefusal(req);
  if (crossSite !== null) {
    deps.log.warn('console: repair refused, not from the console page', { by: caller.id, error: crossSite.error });
    return crossSite;
  }
  const body = parseBody(req, RepairBody);
  if (!body.ok) return body.answer;
  const { request, preview, requestId, expect } = body.value;
  const fields = { kind: request.kind, by: caller.id, preview, requestId: requestId ?? null };
  try {
    const outcome = await runRepairRequest(deps.ops, request, consoleRun(caller, { preview, requestId, expect }));
    return { kind: 'ok', body: { ...outcome } };
  } catch (err) {
    if (isRefusal(err)) {
      const reason = err instanceof Error ? err.message : String(err);
      deps.log.info('console: repair refused', { ...fields, reason });
      return refusedAnswer(reason);
    }
    return failed(deps, err, `run the ${request.kind} repair`, fields);
  }
}
