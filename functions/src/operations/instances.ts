/**
 * Process instances as the operator sees them: those of a business key
 * (`inbox instances KEY`), and one instance with everything its console
 * page shows: tokens, timers, incidents, jobs, the audit trail of correlated
 * messages, the parked messages of its keys, repairs, the model and the
 * overlays on it, drawn on the version of the model it runs on; and the
 * instances of one process version (the console's version filter).
 */
import type { Firestore } from '@google-cloud/firestore';
import { isOpenIncident, type ExecutionState, type Incident, type JobState } from '../engine/state';
import { STORED } from '../engine/store/converters';
import { refs } from '../engine/store/collections';
import { INBOX } from '../inbox/document';
import { QUERIES } from '../queries';
import { jsonSafe, repairsOf, ROW_FIELDS, rowOf, view } from './documents';
import { overlaysOf, type WaitingAt } from './overlays';
import { instanceModel } from './instance-model';
import { readStoredInstance, type StoredInstance, storedInstanceOf } from './stored-instance';
import { isoOrNull } from './stored-values';
import type {
  AuditEntry,
  CallView,
  DocumentRow,
  IncidentView,
  InstancePage,
  InstanceRow,
  InstanceView,
  JobView,
  OperationsDeps,
  TimerView,
  TokenView,
} from './types';

/** PARKED documents listed per correlation key of an instance (its page shows them; `inbox list --key` shows all). */
export const PARKED_PER_KEY = 100;

const FINISHED = new Set(['ENDED', 'CANCELLED']);

/** The incidents an instance document keeps; an entry that is no object (edited by hand) is left out. */
export function incidentsOf(data: Readonly<Record<string, unknown>>): Incident[] {
  const stored = Array.isArray(data.incidents) ? (data.incidents as unknown[]) : [];
  return stored.filter((x): x is Incident => typeof x === 'object' && x !== null);
}

function rowOfInstance(id: string, s: StoredInstance): InstanceRow {
  const d = s.data;
  return {
    id,
    processKey: String(d.processKey),
    businessKey: String(d.businessKey),
    status: String(d.status),
    createdAt: isoOrNull(d.createdAt),
    processVersion: typeof d.processVersion === 'string' ? d.processVersion : null,
    activeTokens: s.tokens.filter((t) => !FINISHED.has(t.status)).length,
    openIncidents: incidentsOf(d).filter(isOpenIncident).length,
  };
}

/** The instances of a business key, in id order (one per process key). */
export async function instancesByBusinessKey(deps: OperationsDeps, key: string): Promise<InstanceRow[]> {
  const db = deps.db();
  const ids = (await QUERIES.instancesByBusinessKey.build(db, key).get()).docs.map((d) => d.id).sort();
  const stored = await Promise.all(ids.map(async (id) => ({ id, s: await readStoredInstance(db, id) })));
  return stored.flatMap(({ id, s }) => (s === null ? [] : [rowOfInstance(id, s)]));
}

/** Which instances of a process version a page lists: of one status too, when given. */
export interface VersionFilter {
  readonly processKey: string;
  readonly version: string;
  readonly status?: string;
}

/**
 * The instances of one process version (its processVersion, the model's
 * content hash), a page at a time in id order after `after`: one query
 * (equality filters only, merged single-field indexes), and a read of the
 * token documents only for an instance of the layout before 0.6.0.
 */
export async function instancesOfVersion(
  deps: OperationsDeps,
  filter: VersionFilter,
  page: { readonly limit: number; readonly after: string | null },
): Promise<InstancePage> {
  const db = deps.db();
  const snaps = (
    await QUERIES.instancesOfVersion
      .build(db, filter, page.after, page.limit + 1)
      .withConverter(STORED)
      .get()
  ).docs;
  const shown = snaps.slice(0, page.limit);
  const rows = await Promise.all(
    shown.map(async (snap) => rowOfInstance(snap.id, await storedInstanceOf(db, snap.id, snap.data()))),
  );
  return { instances: rows, next: snaps.length > page.limit ? (shown.at(-1)?.id ?? null) : null };
}

const tokenView = (t: ExecutionState): TokenView => ({
  id: t.id,
  activityId: t.activityId,
  status: t.status,
  waitingFor: t.waitingFor?.messageName ?? null,
  calledInstanceId: t.status === 'WAITING_CALL' ? (t.calledInstanceId ?? null) : null,
});
const jobView = (j: JobState): JobView => ({
  id: j.id,
  activityId: j.activityId,
  status: j.status,
  attempts: j.attempts,
  lastError: j.lastError,
});
const incidentView = (i: Incident): IncidentView => ({
  reason: String(i.reason),
  activityId: typeof i.activityId === 'string' ? i.activityId : null,
  executionId: typeof i.executionId === 'string' ? i.executionId : null,
  message: String(i.message),
  createdAt: isoOrNull(i.at),
  resolvedAt: isoOrNull(i.resolvedAt),
});

/** Where the live tokens wait for a message or a person: a receive task or catch event, each message branch of an event gateway, a user task. */
function waitingOf(tokens: readonly ExecutionState[]): WaitingAt[] {
  return tokens.flatMap((t): WaitingAt[] => {
    if (t.status === 'WAITING_MESSAGE' || t.status === 'WAITING_USER') return [{ activityId: t.activityId }];
    if (t.status === 'WAITING_EVENT') return (t.gatewayWaits ?? []).map((w) => ({ activityId: w.activityId }));
    return [];
  });
}

/** The correlation keys the instance is reached by: its business key and every key a live token waits under. */
function keysOf(businessKey: string, tokens: readonly ExecutionState[]): string[] {
  const live = tokens.filter((t) => !FINISHED.has(t.status));
  return [
    ...new Set([
      businessKey,
      ...live.flatMap((t) => [
        ...(t.waitingFor === null ? [] : [t.waitingFor.correlationKey]),
        ...(t.gatewayWaits ?? []).map((w) => w.correlationKey),
      ]),
    ]),
  ];
}

/** The audit trail's inbox documents as they are now, with ONE getAll (up to CORRELATED_MESSAGES_KEPT ids); a purged one is null. */
async function auditOf(db: Firestore, ids: readonly string[]): Promise<AuditEntry[]> {
  if (ids.length === 0) return [];
  const snaps = await db.getAll(...ids.map((id) => db.collection(INBOX).doc(id)), { fieldMask: [...ROW_FIELDS] });
  return ids.map((inboxId, i) => {
    const snap = snaps[i];
    return { inboxId, row: snap?.exists === true ? rowOf(view(snap)) : null };
  });
}

/**
 * The PARKED documents of the instance's keys (the relay parks a message it
 * cannot correlate with its correlationKey on the document: an
 * AMBIGUOUS_CORRELATION that met two tokens, a NO_WAITING_INSTANCE that came
 * too late), one indexed query per key.
 */
async function parkedOf(db: Firestore, keys: readonly string[]): Promise<DocumentRow[]> {
  const pages = await Promise.all(
    keys.map((k) =>
      QUERIES.inboxList
        .build(db, { correlationKey: k, status: 'PARKED' }, null, PARKED_PER_KEY)
        .select(...ROW_FIELDS)
        .get(),
    ),
  );
  // A document is under one key, so no row comes twice; the map only guards against a key listed twice.
  const byId = new Map(pages.flatMap((p) => p.docs).map((d) => [d.id, d]));
  return [...byId.values()].map((d) => rowOf(view(d)));
}

async function timersOf(db: Firestore, id: string): Promise<TimerView[]> {
  const snaps = (await QUERIES.pendingTimersOfInstance.build(db, id).withConverter(STORED).get()).docs;
  const timers = snaps.map((s) => ({ id: s.id, d: s.data() }));
  return timers
    .map(({ id: timerId, d }): TimerView => ({
      id: timerId,
      activityId: String(d.activityId),
      status: String(d.status),
      dueAt: isoOrNull(d.dueAt),
    }))
    .sort((a, b) => (a.dueAt ?? '').localeCompare(b.dueAt ?? '') || a.id.localeCompare(b.id));
}

/** The instances the waiting call activities started, with ONE getAll, as they stand now. */
async function callsOf(db: Firestore, tokens: readonly ExecutionState[]): Promise<CallView[]> {
  const waiting = tokens.filter((t) => t.status === 'WAITING_CALL' && typeof t.calledInstanceId === 'string');
  if (waiting.length === 0) return [];
  const snaps = await db.getAll(
    ...waiting.map((t) => refs.instance(db, t.calledInstanceId ?? '').withConverter(STORED)),
  );
  return waiting.map((t, i) => {
    const d = snaps[i]?.data();
    return {
      executionId: t.id,
      activityId: t.activityId,
      instanceId: t.calledInstanceId ?? '',
      processKey: d === undefined ? null : String(d.processKey),
      status: d === undefined ? null : String(d.status),
      openIncidents: d === undefined ? [] : incidentsOf(d).filter(isOpenIncident).map(incidentView),
    };
  });
}

/** The caller of a called instance, from its stored `calledBy`; null for a top-level one. */
function callerOf(d: Readonly<Record<string, unknown>>): InstanceView['calledBy'] {
  const c = d.calledBy as { instanceId?: unknown; activityId?: unknown } | undefined;
  return typeof c?.instanceId === 'string' && typeof c.activityId === 'string'
    ? { instanceId: c.instanceId, activityId: c.activityId }
    : null;
}

/** One instance with everything its page shows; null when there is no such instance. */
export async function readInstance(deps: OperationsDeps, id: string): Promise<InstanceView | null> {
  const db = deps.db();
  const stored = await readStoredInstance(db, id);
  if (stored === null) return null;
  const row = rowOfInstance(id, stored);
  const d = stored.data;
  const correlated = Array.isArray(d.correlatedMessages)
    ? d.correlatedMessages.filter((m): m is string => typeof m === 'string')
    : [];
  const [timers, audit, parked, drawn, calls] = await Promise.all([
    timersOf(db, id),
    auditOf(db, correlated),
    parkedOf(db, keysOf(row.businessKey, stored.tokens)),
    // The version it runs on, not the deployed one (instance-model.ts).
    instanceModel(deps, row.processKey, row.processVersion),
    callsOf(db, stored.tokens),
  ]);
  const tokens = stored.tokens.map(tokenView);
  const incidents = incidentsOf(d).map(incidentView);
  const variables = jsonSafe(d.variables);
  return {
    row,
    variables:
      typeof variables === 'object' && variables !== null && !Array.isArray(variables)
        ? (variables as Record<string, unknown>)
        : {},
    tokens,
    timers,
    incidents,
    jobs: stored.jobs.map(jobView),
    audit,
    parked,
    repairs: repairsOf(d),
    version: drawn.version,
    model: drawn.model,
    overlays: overlaysOf(tokens, timers, incidents, waitingOf(stored.tokens), calls),
    calledBy: callerOf(d),
    calls,
  };
}
