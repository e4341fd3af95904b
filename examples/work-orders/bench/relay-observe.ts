/** Helpers of bench/relay-latency.ts: paced publishing, polling the inbox, CPU snapshots. */
import type { Firestore } from '@google-cloud/firestore';
import type { PubSub } from '@google-cloud/pubsub';
import { INBOX } from '../../../functions/src/inbox/document';
import { cpuMs } from './pool';
import { completionId, completionPayload } from './relay-setup';
import { machineCpuMs, ownCpuMs } from './relay-stats';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const millis = (value: unknown): number | null =>
  value !== null && typeof value === 'object' && 'toMillis' in value
    ? (value as { toMillis(): number }).toMillis()
    : null;

export async function countWhere(db: Firestore, collection: string, field: string, value: string): Promise<number> {
  return (await db.collection(collection).where(field, '==', value).count().get()).data().count;
}

/** Publishes completions at `rate` per second; returns each one's publish call time (ms). */
export async function publishPaced(
  pubsub: PubSub,
  topic: string,
  workOrderIds: readonly string[],
  rate: number,
): Promise<number[]> {
  const t = pubsub.topic(topic);
  const sentAt: number[] = [];
  const pending: Array<Promise<string>> = [];
  const start = Date.now();
  for (const [i, id] of workOrderIds.entries()) {
    const due = start + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    sentAt.push(Date.now());
    pending.push(t.publishMessage({ json: completionPayload(id), attributes: { eventType: 'WorkOrderCompleted' } }));
  }
  await Promise.all(pending);
  return sentAt;
}

export interface Done {
  readonly processedAt: number;
  readonly receivedAt: number;
}

/** processedAt and receivedAt (ms) of each work order's completion, once DONE; polls until all are DONE or the deadline. */
export async function awaitDone(
  db: Firestore,
  workOrderIds: readonly string[],
  deadline: number,
): Promise<Map<string, Done | 'OPEN'>> {
  const seen = new Map<string, Done | 'OPEN'>();
  for (;;) {
    const todo = workOrderIds.filter((w) => {
      const s = seen.get(w);
      return s === undefined || s === 'OPEN';
    });
    for (let start = 0; start < todo.length; start += 300) {
      const batch = todo.slice(start, start + 300);
      const snaps = await db.getAll(...batch.map((w) => db.collection(INBOX).doc(completionId(w))));
      snaps.forEach((snap, k) => {
        const w = batch[k] as string;
        const processedAt = millis(snap.get('processedAt'));
        const receivedAt = millis(snap.get('receivedAt'));
        if (snap.get('status') === 'DONE' && processedAt !== null && receivedAt !== null)
          seen.set(w, { processedAt, receivedAt });
        else if (snap.exists) seen.set(w, 'OPEN');
      });
    }
    const left = workOrderIds.filter((w) => typeof seen.get(w) !== 'object').length;
    if (left === 0 || Date.now() > deadline) return seen;
    await sleep(250);
  }
}

/** CPU used so far by each process (ms), by this process, and by the machine. */
export async function cpuSnapshot(
  pids: Readonly<Record<string, number | null>>,
): Promise<{ at: number; machine: { busy: number; total: number }; ms: Record<string, number> }> {
  const ms: Record<string, number> = { bench: ownCpuMs() };
  for (const [name, pid] of Object.entries(pids)) if (pid !== null) ms[name] = await cpuMs(pid).catch(() => 0);
  return { at: Date.now(), machine: await machineCpuMs(), ms };
}

export async function waitUntil(check: () => Promise<boolean>, deadline: number): Promise<void> {
  while (!(await check()) && Date.now() < deadline) await sleep(500);
}
