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
  const [inbox, instances, invoices, timers, escalations, userTasks, defects] = await Promise.all([
    db.collection(INBOX).select('status', 'reason', 'processInstanceId', 'deadLetter', 'requeuedAt').get(),
    // The jobs live in their instance's document (engine/store/instance-doc.ts).
    db
      .collection(COLLECTIONS.instances)
      .select('processKey', 'businessKey', 'status', 'correlatedMessages', 'jobs', 'tokens', 'repairs')
      .get(),
    db.collection(INVOICES).select('workOrderId', 'processInstanceId').get(),
    db.collection(COLLECTIONS.timers).select('processInstanceId', 'activityId', 'status').get(),
    db.collection(ESCALATIONS).select('workOrderId', 'processInstanceId').get(),
    db
      .collection(COLLECTIONS.userTasks)
      .select('processInstanceId', 'activityId', 'status', 'completionRequestId', 'completedBy')
      .get(),
    db.collection(DEFECTS).select('workOrderId', 'processInstanceId').get(),
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
        businessKey: String(d.get('businessKey')),
        status: String(d.get('status')),
        correlatedMessages: Array.isArray(trail) ? trail.map(String) : [],
        tokens: instanceTokens(d.data()).map((t) => ({ id: t.id, status: t.status, activityId: t.activityId })),
        jobs: instanceJobs(d.data()).map((j) => ({
          activityId: j.activityId,
          status: j.status,
          lastError: j.lastError,
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
    })),
    defects: defects.docs.map((d) => ({
      workOrderId: String(d.get('workOrderId')),
      processInstanceId: String(d.get('processInstanceId')),
    })),
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

/** Instances with a PENDING job (sweepJobs' query, every shard, any age): 0 once every job has run. */
async function pendingJobInstances(db: Firestore): Promise<number> {
  // The latest time a Firestore Timestamp holds (a later Date, e.g. 8.64e15 ms, is refused by the client).
  const far = new Date('9999-12-31T23:59:59.999Z');
  const counts = await Promise.all(
    Array.from({ length: STATE_SHARDS }, (_, s) =>
      QUERIES.instancesWithPendingJobs.build(db, s, far, 10_000).count().get(),
    ),
  );
  return counts.reduce((n, c) => n + c.data().count, 0);
}

/**
 * Progress while the run settles: OPEN documents left (but those of
 * `waitForNobody`: racing tranches, which stay OPEN when their timer won,
 * and completions of orders an operator cancelled), instances with PENDING
 * jobs and timers left, OPEN user tasks (the approver's), documents in all. An OPEN racing tranche with no
 * PENDING timer left lost its race (a won race makes it DONE in the
 * transaction that deletes the timer), so the run is settled without it.
 */
export async function openWork(
  db: Firestore,
  waitForNobody: ReadonlySet<string>,
): Promise<{ open: number; pendingJobs: number; pendingTimers: number; openTasks: number; documents: number }> {
  const [open, pending, timers, tasks, all] = await Promise.all([
    db.collection(INBOX).where('status', '==', 'OPEN').select().get(),
    pendingJobInstances(db),
    db.collection(COLLECTIONS.timers).where('status', '==', 'PENDING').count().get(),
    db.collection(COLLECTIONS.userTasks).where('status', '==', 'OPEN').count().get(),
    db.collection(INBOX).count().get(),
  ]);
  return {
    open: open.docs.filter((d) => !waitForNobody.has(d.id)).length,
    pendingJobs: pending,
    pendingTimers: timers.data().count,
    openTasks: tasks.data().count,
    documents: all.data().count,
  };
}
