import type { Firestore } from '@google-cloud/firestore';
import { COLLECTIONS, STATE_SHARDS } from '../../../functions/src/engine/store/collections';
import { instanceJobs, instanceTokens } from '../../../functions/src/engine/store/instance-doc';
import { STALE_JOB_ERROR } from '../../../functions/src/engine/state';
import { QUERIES } from '../../../functions/src/queries';
import { INBOX } from '../../../functions/src/inbox/document';
import { DEFECTS } from './app/inspection';
import type { ChaosSnapshot } from './snapshot';
import { ESCALATIONS, INVOICES } from '../local/names';

/** Reads what the evaluation needs; the run has a project of its own, so whole collections are this run's. */
export async function readChaosSnapshot(db: Firestore): Promise<ChaosSnapshot> {
  const [inbox, instances, invoices, timers, escalations, userTasks, defects, itemBatches] = await Promise.all([
    db.collection(INBOX).select('status', 'reason', 'processInstanceId', 'deadLetter', 'requeuedAt').get(),
    // The jobs live in their instance's document (engine/store/instance-doc.ts).
    db
      .collection(COLLECTIONS.instances)
      .select(
        'processKey',
        'processVersion',
        'businessKey',
        'status',
        'correlatedMessages',
        'jobs',
        'tokens',
        'repairs',
        'calledBy',
        'terminated',
        'variables',
      )
      .get(),
    db.collection(INVOICES).select('workOrderId', 'processInstanceId').get(),
    db.collection(COLLECTIONS.timers).select('processInstanceId', 'activityId', 'status').get(),
    db.collection(ESCALATIONS).select('workOrderId', 'processInstanceId').get(),
    db
      .collection(COLLECTIONS.userTasks)
      .select('processInstanceId', 'activityId', 'status', 'completionRequestId', 'completedBy', 'cancelReason')
      .get(),
    db.collection(DEFECTS).select('workOrderId', 'processInstanceId', 'findingsLeft').get(),
    db.collection(COLLECTIONS.itemBatches).select('batch').get(),
  ]);
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  return {
    inbox: inbox.docs.map((d) => ({
      id: d.id,
      status: String(d.get('status')),
      reason: text(d.get('reason')),
      processInstanceId: text(d.get('processInstanceId')),
      deadLettered: d.get('deadLetter') !== undefined && d.get('deadLetter') !== null,
      requeued: d.get('requeuedAt') !== undefined && d.get('requeuedAt') !== null,
    })),
    instances: instances.docs.map((d) => {
      const trail: unknown = d.get('correlatedMessages');
      return {
        id: d.id,
        processKey: String(d.get('processKey')),
        processVersion: String(d.get('processVersion')),
        businessKey: String(d.get('businessKey')),
        status: String(d.get('status')),
        correlatedMessages: Array.isArray(trail) ? trail.map(String) : [],
        calledBy: callerOf(d.get('calledBy')),
        terminated: text((d.get('terminated') as { reason?: unknown } | undefined)?.reason),
        variables: (d.get('variables') ?? {}) as Record<string, unknown>,
        tokens: instanceTokens(d.data()).map((t) => ({ id: t.id, status: t.status, activityId: t.activityId })),
        jobs: instanceJobs(d.data()).map((j) => ({
          activityId: j.activityId,
          status: j.status,
          lastError: j.lastError,
          finishedAt: millis(j.finishedAt),
        })),
        repairs: repairsOf(d.get('repairs')),
      };
    }),
    // A job its token left (a repair moved the token) ended stale without billing: not a second invoice job.
    invoiceJobs: instances.docs.flatMap((d) =>
      instanceJobs(d.data())
        .filter((j) => j.activityId === 'createInvoice' && j.lastError !== STALE_JOB_ERROR)
        .map(() => ({ processInstanceId: d.id })),
    ),
    invoices: invoices.docs.map((d) => ({
      workOrderId: String(d.get('workOrderId')),
      processInstanceId: String(d.get('processInstanceId')),
    })),
    timers: timers.docs.map((d) => ({
      processInstanceId: String(d.get('processInstanceId')),
      activityId: String(d.get('activityId')),
      status: String(d.get('status')),
    })),
    escalations: escalations.docs.map((d) => ({
      workOrderId: String(d.get('workOrderId')),
      processInstanceId: String(d.get('processInstanceId')),
    })),
    userTasks: userTasks.docs.map((d) => ({
      id: d.id,
      processInstanceId: String(d.get('processInstanceId')),
      activityId: String(d.get('activityId')),
      status: String(d.get('status')),
      completionRequestId: text(d.get('completionRequestId')),
      completedBy: text(d.get('completedBy')),
      cancelReason: text(d.get('cancelReason')),
    })),
    defects: defects.docs.map((d) => ({
      workOrderId: String(d.get('workOrderId')),
      processInstanceId: String(d.get('processInstanceId')),
      findingsLeft: Number(d.get('findingsLeft')),
    })),
    itemBatches: itemBatches.docs.map((d) => ({ id: d.id, batch: String(d.get('batch')) })),
  };
}

/** A stored time (a Firestore Timestamp, or a Date) as ms since the epoch; null when absent. */
function millis(value: unknown): number | null {
  if (value instanceof Date) return value.getTime();
  const t = value as { toMillis?: () => number } | null | undefined;
  return typeof t?.toMillis === 'function' ? t.toMillis() : null;
}

/** A called instance's caller, as stored (`calledBy`, with `item` for an item of a multi-instance activity); null at the top level. */
function callerOf(value: unknown): ChaosSnapshot['instances'][number]['calledBy'] {
  const c = value as
    { instanceId?: unknown; activityId?: unknown; item?: { index?: unknown; batch?: unknown } } | null | undefined;
  if (typeof c?.instanceId !== 'string') return null;
  return {
    instanceId: c.instanceId,
    activityId: String(c.activityId),
    index: typeof c.item?.index === 'number' ? c.item.index : null,
    batch: typeof c.item?.batch === 'string' ? c.item.batch : null,
  };
}

/** The repair records of an instance, as the evaluation reads them: which repair, on which token. */
function repairsOf(value: unknown): Array<{ kind: string; executionId: string | null }> {
  if (!Array.isArray(value)) return [];
  return value.map((r: unknown) => {
    const record = (typeof r === 'object' && r !== null ? r : {}) as {
      kind?: unknown;
      details?: { executionId?: unknown };
    };
    return {
      kind: String(record.kind),
      executionId: typeof record.details?.executionId === 'string' ? record.details.executionId : null,
    };
  });
}

/** The work orders an operator cancelled a token of (a cancel-token record on the instance): their later completions wait for nobody. */
export async function cancelledOrders(db: Firestore): Promise<Set<string>> {
  const instances = await db.collection(COLLECTIONS.instances).select('businessKey', 'repairs').get();
  return new Set(
    instances.docs
      .filter((d) => repairsOf(d.get('repairs')).some((r) => r.kind === 'cancel-token'))
      .map((d) => String(d.get('businessKey'))),
  );
}

/** An instance with a PENDING job, as the settling reads it: its business key and jobs. */
export interface PendingWork {
  readonly businessKey: string;
  readonly jobs: ReadonlyArray<{
    readonly activityId: string;
    readonly status: string;
    readonly lastError: string | null;
  }>;
}

/**
 * Instances with a PENDING job (sweepJobs' query, every shard, any age),
 * but those `runaway` says will never settle (a loop that goes round more
 * often than planned: the evaluation reports it stuck): 0 once every other
 * job has run; and how many runaways were left out.
 */
async function pendingJobInstances(
  db: Firestore,
  runaway: (instance: PendingWork) => boolean,
): Promise<{ pending: number; runaways: number }> {
  // The latest time a Firestore Timestamp holds (a later Date, e.g. 8.64e15 ms, is refused by the client).
  const far = new Date('9999-12-31T23:59:59.999Z');
  const shards = await Promise.all(
    Array.from({ length: STATE_SHARDS }, (_, s) =>
      QUERIES.instancesWithPendingJobs.build(db, s, far, 10_000).select('businessKey', 'jobs').get(),
    ),
  );
  const instances = shards.flatMap((q) =>
    q.docs.map((d) => ({
      businessKey: String(d.get('businessKey')),
      jobs: instanceJobs(d.data()).map((j) => ({ activityId: j.activityId, status: j.status, lastError: j.lastError })),
    })),
  );
  const runaways = instances.filter(runaway).length;
  return { pending: instances.length - runaways, runaways };
}

/**
 * Progress while the run settles: OPEN documents left (but those of
 * `waitForNobody`: racing tranches, which stay OPEN when their timer won,
 * and completions of orders an operator cancelled), instances with PENDING
 * jobs (but runaways, counted apart) and timers left, OPEN user tasks (the approver's), documents in all. An OPEN racing tranche with no
 * PENDING timer left lost its race (a won race makes it DONE in the
 * transaction that deletes the timer), so the run is settled without it.
 */
export async function openWork(
  db: Firestore,
  waitForNobody: ReadonlySet<string>,
  runaway: (instance: PendingWork) => boolean = () => false,
): Promise<{
  open: number;
  pendingJobs: number;
  runaways: number;
  pendingTimers: number;
  openTasks: number;
  documents: number;
}> {
  const [open, { pending, runaways }, timers, tasks, all] = await Promise.all([
    db.collection(INBOX).where('status', '==', 'OPEN').select().get(),
    pendingJobInstances(db, runaway),
    db.collection(COLLECTIONS.timers).where('status', '==', 'PENDING').count().get(),
    db.collection(COLLECTIONS.userTasks).where('status', '==', 'OPEN').count().get(),
    db.collection(INBOX).count().get(),
  ]);
  return {
    open: open.docs.filter((d) => !waitForNobody.has(d.id)).length,
    pendingJobs: pending,
    runaways,
    pendingTimers: timers.data().count,
    openTasks: tasks.data().count,
    documents: all.data().count,
  };
}

/** How many of the inbox documents `ids` do not exist yet (read by id, 300 at a time, no fields). */
export async function undelivered(db: Firestore, ids: readonly string[]): Promise<number> {
  let missing = 0;
  for (let i = 0; i < ids.length; i += 300) {
    const refs = ids.slice(i, i + 300).map((id) => db.collection(INBOX).doc(id));
    if (refs.length === 0) continue;
    const snaps = await db.getAll(...refs, { fieldMask: [] });
    missing += snaps.filter((s) => !s.exists).length;
  }
  return missing;
}
