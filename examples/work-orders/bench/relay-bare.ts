/**
 * The yardstick of `npm run bench:relay`: what relaying one completion costs
 * as a hand-written Firestore transaction, with no engine, no unit of work,
 * no classification. The same reads by id (inbox document, correlationKeys
 * document, instance, one after the other as each names the next) and the
 * same writes the relay makes for a correlated WorkOrderCompleted on the
 * one-document-per-instance layout: inbox DONE, its processed record, key
 * document updated (deleted once empty, as the relay does), instance (token
 * moved, invoice job added), the wait's timer deleted (the waiting point lives
 * in the key document only).
 * Document ids follow the data model (hashes: docs/data-model.md).
 */
import type { DocumentData, Firestore } from '@google-cloud/firestore';
import { createHash } from 'node:crypto';

const RETENTION_MS = 7 * 24 * 3_600_000;

/** The data model's id scheme: SHA-256 of the JSON list of parts, 160 bits. */
function hashId(...parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 40);
}

interface Point {
  messageName: string;
  executionId: string;
  processInstanceId: string;
}

/** Relays one OPEN completion by hand; false if it was not OPEN or nobody waited (never expected here). */
export async function bareRelay(db: Firestore, inboxId: string): Promise<boolean> {
  return db.runTransaction(async (tx) => {
    const now = new Date();
    const inboxRef = db.collection('inbox').doc(inboxId);
    const inbox = await tx.get(inboxRef);
    const doc = inbox.data();
    if (doc === undefined || doc.status !== 'OPEN') return false;
    const correlationKey = String(doc.correlationKey);
    const keyRef = db.collection('correlationKeys').doc(hashId('correlation-key', correlationKey));
    const key = (await tx.get(keyRef)).data() ?? {};
    const waiting = (key.waiting ?? []) as Point[];
    const point = waiting.find((w) => w.messageName === doc.messageName);
    if (point === undefined) return false;
    // One document per instance: the token and the jobs live in it (docs/data-model.md).
    const instanceRef = db.collection('processInstances').doc(point.processInstanceId);
    const instance = (await tx.get(instanceRef)).data();
    const tokens = (instance?.tokens ?? {}) as Record<string, DocumentData>;
    const execution = tokens[point.executionId];
    if (instance === undefined || execution === undefined || execution.status !== 'WAITING_MESSAGE') return false;

    const step = Number(execution.step) + 1;
    const jobId = hashId('job', point.executionId, String(step));
    const job: DocumentData = {
      id: jobId,
      processInstanceId: point.processInstanceId,
      executionId: point.executionId,
      activityId: 'createInvoice',
      status: 'PENDING',
      attempts: 0,
      lastError: null,
      createdAt: now,
      finishedAt: null,
    };
    tx.set(inboxRef, {
      ...doc,
      status: 'DONE',
      processInstanceId: point.processInstanceId,
      processedAt: now,
      expireAt: new Date(now.getTime() + RETENTION_MS),
      correlatedVia: 'RELAY',
      nextAttemptAt: null,
    });
    // The processed record, so a replay after the DONE document expired is still a duplicate.
    tx.set(db.collection('processedMessages').doc(inboxId), {
      messageName: String(doc.messageName),
      correlationKey,
      payloadHash: String(doc.payloadHash ?? ''),
      processedAt: now,
      processInstanceId: point.processInstanceId,
      correlatedVia: 'RELAY',
      expireAt: new Date(now.getTime() + 31 * 24 * 3_600_000),
    });
    const open = ((key.open ?? []) as Array<{ inboxId: string }>).filter((e) => e.inboxId !== inboxId);
    const stillWaiting = waiting.filter((w) => w.executionId !== point.executionId);
    if (open.length === 0 && stillWaiting.length === 0) tx.delete(keyRef);
    else tx.set(keyRef, { correlationKey, waiting: stillWaiting, open, updatedAt: now });
    const token = {
      ...execution,
      activityId: 'createInvoice',
      step,
      status: 'WAITING_JOB',
      jobId,
      waitingFor: null,
      timerIds: [],
      updatedAt: now,
    };
    const jobs = { ...((instance.jobs ?? {}) as Record<string, DocumentData>), [jobId]: job };
    tx.set(instanceRef, {
      ...instance,
      tokens: { ...tokens, [point.executionId]: token },
      jobs,
      jobsPendingSince: now,
      variables: { ...(instance.variables as DocumentData), ...(doc.payload as DocumentData) },
      updatedAt: now,
    });
    // The wait's timers (the completion deadline) go with the wait.
    for (const timerId of (execution.timerIds ?? []) as string[]) tx.delete(db.collection('timers').doc(timerId));
    return true;
  });
}
