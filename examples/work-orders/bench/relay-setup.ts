/**
 * Backlogs for `npm run bench:relay`, built with the project's own code:
 * work orders started and handed over through the engine's operations
 * (their tokens then wait at waitForCompletion), and completions stored
 * exactly as the receiver stores them (inbox document + lane entry).
 */
import type { Firestore } from '@google-cloud/firestore';
import { join } from 'node:path';
import { loadEngine } from '../../../functions/src/engine/deployed';
import type { Engine } from '../../../functions/src/engine/engine';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { instanceJobs } from '../../../functions/src/engine/store/instance-doc';
import { completeJobRun } from '../../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../../functions/src/engine/store/start-instance';
import { INBOX } from '../../../functions/src/inbox/document';
import { messageDocId } from '../../../functions/src/inbox/ids';
import { storeMessage } from '../../../functions/src/inbox/store-message';
import { parsePushEnvelope } from '../../../functions/src/receiver/envelope';
import { interpretMessage } from '../../../functions/src/receiver/interpret';
import workOrders from '../index';
import { WORK_ORDER_REGISTRY } from '../local/names';
import { inboxBuffer } from '../../../functions/src/relay/buffer';
import { runPool } from './pool';

export const PROCESS_KEY = 'work-order-execution';
const RETENTION_MS = 7 * 24 * 3_600_000;

/** The deployed models with the work-order handlers' task ids and the inbox as buffer (what runtime.ts builds). */
export function workOrderEngine(): Promise<Engine> {
  return loadEngine(
    // The app's models folder (its `models`: the repository's top-level bpmn/).
    join(__dirname, '..', workOrders.models),
    {},
    new Set(['handOverWorkOrder', 'escalateOverdueWorkOrder', 'createInvoice']),
    inboxBuffer(RETENTION_MS),
  );
}

/** The completion a provider publishes for a work order. */
export function completionPayload(workOrderId: string): Record<string, unknown> {
  return {
    workOrderId,
    completedItems: 7,
    completionTimestamp: '2026-11-29T10:00:00Z',
    eventId: `done-${workOrderId}`,
  };
}

/** Inbox id of a work order's completion (deterministic: the receiver's dedup key). */
export function completionId(workOrderId: string): string {
  return messageDocId('WorkOrderCompleted', workOrderId, `done-${workOrderId}`);
}

/**
 * Starts a work order and completes its hand-over job, in two transactions
 * of the engine: the token then waits at waitForCompletion. Returns the
 * process instance id.
 */
export async function waitingWorkOrder(db: Firestore, engine: Engine, workOrderId: string): Promise<string> {
  const started = await startProcessInstance(db, engine, {
    processKey: PROCESS_KEY,
    businessKey: workOrderId,
    variables: { workOrderId },
    now: new Date(),
  });
  const handOver = started.jobs.find((j) => j.activityId === 'handOverWorkOrder');
  if (handOver === undefined) throw new Error(`${workOrderId}: no hand-over job (created: ${started.created})`);
  const done = await completeJobRun(db, engine, handOver, { handedOverMessageId: `bench-${workOrderId}` }, new Date());
  if (done.status !== 'COMPLETED') throw new Error(`${workOrderId}: hand-over job ${done.status}`);
  return started.instance.id;
}

/** Stores a work order's completion exactly as receivePubSubPush does (one batch: inbox create + lane arrayUnion). */
export async function storeCompletion(db: Firestore, workOrderId: string, shards: number): Promise<void> {
  const now = new Date();
  const parsed = parsePushEnvelope({
    message: {
      data: Buffer.from(JSON.stringify(completionPayload(workOrderId))).toString('base64'),
      attributes: { eventType: 'WorkOrderCompleted' },
      messageId: `m-${workOrderId}`,
      publishTime: now.toISOString(),
    },
    subscription: 'projects/bench/subscriptions/work-order-completed-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  const draft = interpretMessage(parsed.envelope, WORK_ORDER_REGISTRY, { referenceBuckets: [] });
  if (draft.kind !== 'valid') throw new Error(`bench message is invalid: ${draft.error}`);
  const outcome = await storeMessage(db, draft, { envelope: parsed.envelope, now, shards, offload: null });
  if (outcome.kind !== 'STORED') throw new Error(`${workOrderId}: completion ${outcome.kind}`);
}

/** N waiting work orders (and, with `store`, their OPEN completions), `concurrency` at a time. */
export async function buildBacklog(
  db: Firestore,
  engine: Engine,
  workOrderIds: readonly string[],
  options: { concurrency: number; store: boolean; shards: number },
): Promise<void> {
  await runPool(workOrderIds.length, options.concurrency, async (i) => {
    const id = workOrderIds[i] as string;
    await waitingWorkOrder(db, engine, id);
    if (options.store) await storeCompletion(db, id, options.shards);
  });
}

/** What a drained backlog looks like: every completion DONE, one invoice job per order, nothing left waiting. */
export interface BacklogCheck {
  readonly done: number;
  readonly notDone: number;
  readonly missing: number;
  readonly invoiceJobs: number;
  readonly waitingPoints: number;
}

/** "Create invoice" jobs of every instance: they live in their instance's document (engine/store/instance-doc.ts). */
export async function countInvoiceJobs(db: Firestore): Promise<number> {
  const instances = await db.collection(COLLECTIONS.instances).select('jobs').get();
  return instances.docs.reduce(
    (n, d) => n + instanceJobs(d.data()).filter((j) => j.activityId === 'createInvoice').length,
    0,
  );
}

export async function checkBacklog(db: Firestore, workOrderIds: readonly string[]): Promise<BacklogCheck> {
  let done = 0;
  let notDone = 0;
  let missing = 0;
  for (let start = 0; start < workOrderIds.length; start += 500) {
    const refs = workOrderIds.slice(start, start + 500).map((w) => db.collection(INBOX).doc(completionId(w)));
    for (const snap of await db.getAll(...refs)) {
      if (!snap.exists) missing += 1;
      else if (snap.get('status') === 'DONE') done += 1;
      else notDone += 1;
    }
  }
  const invoiceJobs = await countInvoiceJobs(db);
  // Keys that still hold a waiting point (the key document is where a point lives: it has waitingSince).
  const waitingPoints = (
    await db.collection(COLLECTIONS.correlationKeys).where('waitingSince', '>', new Date(0)).count().get()
  ).data().count;
  return { done, notDone, missing, invoiceJobs, waitingPoints };
}

/** True when a backlog of `expected` orders was drained exactly once. */
export function drainedOnce(check: BacklogCheck, expected: number): boolean {
  return (
    check.done === expected &&
    check.notDone === 0 &&
    check.missing === 0 &&
    check.invoiceJobs === expected &&
    check.waitingPoints === 0
  );
}
