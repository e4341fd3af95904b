/**
 * One design through the workload: the same starts, publishes (paced), the
 * same Firestore outage window and the same late starts; then what became
 * of every message. `system` is this project's local stack; the baselines
 * are bench/three-way/baselines.ts behind the same kind of push subscription
 * (same retry policy and dead-letter policy).
 */
import { Firestore } from '@google-cloud/firestore';
import { type Message, PubSub } from '@google-cloud/pubsub';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COLLECTIONS } from '../../../../functions/src/engine/store/collections';
import { moveToken } from '../../../../functions/src/engine/store/move-token';
import { INBOX } from '../../../../functions/src/inbox/document';
import { interpretMessage } from '../../../../functions/src/receiver/interpret';
import { WORK_ORDERS_APP, WORK_ORDER_REGISTRY } from '../../local/names';
import { startTcpProxy } from '../../../../tools/faults/tcp-proxy';
import { startLocalStack } from '../../../../tools/local/stack';
import { MAX_DELIVERY_ATTEMPTS, RETRY_POLICY } from '../../../../tools/local/topology';
import { runPool } from '../pool';
import { PROCESS_KEY, waitingWorkOrder, workOrderEngine } from '../relay-setup';
import { startBaseline, type BaselineMode } from './baselines';
import { type BenchMessage, percentile } from './workload';
import { TOPICS } from '../../local/names';

export type Design = BaselineMode | 'system';

export interface RunSettings {
  readonly firestoreHost: string;
  readonly pubsubHost: string;
  /** Messages published per second. */
  readonly rate: number;
  /** Firestore cut for this long once 40 % of the messages are out; 0: no outage. */
  readonly outageMs: number;
  /** Overtaken work orders start this long after the last publish (longer than Pub/Sub's five attempts). */
  readonly lateStartMs: number;
  readonly settleTimeoutMs: number;
  readonly progress: (line: string) => void;
}

export interface DesignResult {
  readonly design: Design;
  readonly messages: number;
  /** Push requests the endpoint got (deliveries and redeliveries); baselines only. */
  readonly deliveries: number | null;
  readonly correlated: number;
  readonly lost: number;
  /** nack only: neither correlated nor dead-lettered when the run ended: Pub/Sub still redelivers them. */
  readonly unresolved: number;
  readonly parked: Readonly<Record<string, number>>;
  readonly deadLettered: number;
  readonly doubleCorrelations: number;
  /** Every message accounted for before the settle timeout; if not, the rest were still being redelivered (nack). */
  readonly settled: boolean;
  /** Correlated messages per second, from the first publish to the last correlation. */
  readonly throughputPerS: number;
  readonly latencyP50Ms: number | null;
  readonly latencyP99Ms: number | null;
  /** p99 of the messages that did not overtake their work order: the path itself, without the wait for a late start. */
  readonly latencyP99NotOvertakenMs: number | null;
  /** Firestore reads + writes on the message's path (receiver and correlation, retries included) per message. */
  readonly opsPerMessage: number;
  readonly seconds: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const clientAt = (host: string, projectId: string): Firestore =>
  new Firestore({ projectId, host, ssl: false, customHeaders: { Authorization: 'Bearer owner' } });

export async function runDesign(
  design: Design,
  workload: readonly BenchMessage[],
  s: RunSettings,
): Promise<DesignResult> {
  const started = Date.now();
  const projectId = `bench-${design}-${Date.now().toString(36)}`;
  const engine = await workOrderEngine();
  const db = clientAt(s.firestoreHost, projectId);
  const pubsub = new PubSub({ projectId, apiEndpoint: s.pubsubHost });
  const closers: Array<() => Promise<void>> = [() => pubsub.close(), () => db.terminate()];
  try {
    // Per design: how to cut its Firestore line, where to publish, where dead letters end up.
    let outage: () => Promise<void>;
    let topicName: string;
    let deadLetters: () => Promise<Set<string>>;
    let baseline: Awaited<ReturnType<typeof startBaseline>> | null = null;
    let stackLogs = '';
    if (design === 'system') {
      const stack = await startLocalStack({
        projectId,
        app: WORK_ORDERS_APP,
        progress: (l) => s.progress(`[stack] ${l}`),
      });
      closers.unshift(() => stack.stop());
      const info = await stack.info();
      stackLogs = info.logDir;
      topicName = TOPICS.completions;
      outage = async () => void (await stack.firestoreOutage(s.outageMs));
      deadLetters = async () => new Set(); // receiveDeadLetter keeps them in the inbox: counted there
    } else {
      const gate = await startTcpProxy(s.firestoreHost);
      closers.unshift(() => gate.close());
      const gatedDb = clientAt(gate.host, projectId);
      closers.unshift(() => gatedDb.terminate());
      baseline = await startBaseline(design, gatedDb, engine);
      closers.unshift(baseline.close);
      outage = async () => {
        gate.setMode('refuse');
        await sleep(s.outageMs);
        gate.setMode('forward');
      };
      const [topic] = await pubsub.createTopic('completions');
      const [dlt] = await pubsub.createTopic('completions-dlt');
      const [pull] = await dlt.createSubscription('completions-dlt-pull');
      await topic.createSubscription('completions-push', {
        pushConfig: { pushEndpoint: baseline.url },
        deadLetterPolicy: { deadLetterTopic: dlt.name, maxDeliveryAttempts: MAX_DELIVERY_ATTEMPTS },
        retryPolicy: RETRY_POLICY,
        ackDeadlineSeconds: 10,
      });
      topicName = 'completions';
      const dead = new Set<string>();
      pull.on('message', (m: Message) => {
        dead.add(
          interpretMessage(
            {
              messageId: m.id,
              subscription: null,
              data: m.data.toString('base64'),
              attributes: m.attributes,
              publishTime: null,
              orderingKey: null,
              deliveryAttempt: null,
            },
            WORK_ORDER_REGISTRY,
            { referenceBuckets: [] },
          ).id,
        );
        m.ack();
      });
      closers.unshift(() => pull.close());
      deadLetters = async () => dead;
    }

    // Work orders that wait before their completion is published; double tokens get a second waiting point.
    const early = workload.filter((m) => m.fate === 'normal' || m.fate === 'double-token');
    await runPool(early.length, 16, async (i) => {
      const m = early[i] as BenchMessage;
      const processInstanceId = await waitingWorkOrder(db, engine, m.workOrderId ?? '');
      if (m.fate === 'double-token')
        await moveToken(db, engine, {
          processInstanceId,
          executionId: null,
          activityId: 'waitForCompletion',
          force: true,
          now: new Date(),
        });
    });
    s.progress(`${design}: ${early.length} work orders waiting; publishing ${workload.length} messages at ${s.rate}/s`);

    const topic = pubsub.topic(topicName);
    const sentAt = new Map<number, number>();
    const first = Date.now();
    let outageDone: Promise<void> = Promise.resolve();
    const pending: Array<Promise<string>> = [];
    for (const m of workload) {
      const due = first + (m.index * 1000) / s.rate;
      if (due > Date.now()) await sleep(due - Date.now());
      // --outage-ms=0 is a run without the outage (restarting the emulator would itself be one).
      if (m.index === Math.floor(workload.length * 0.4) && s.outageMs > 0) outageDone = outage();
      sentAt.set(m.index, Date.now());
      pending.push(topic.publishMessage({ data: m.data, attributes: { ...m.attributes } }));
    }
    await Promise.all(pending);
    await outageDone;
    await sleep(s.lateStartMs);
    const late = workload.filter((m) => m.fate === 'overtake');
    await runPool(late.length, 16, async (i) => void (await waitingWorkOrder(db, engine, late[i]?.workOrderId ?? '')));
    s.progress(
      `${design}: published; ${late.length} overtaken work orders started ${s.lateStartMs} ms later; settling`,
    );

    // Settled: every message accounted for (nack: correlated or dead-lettered; the others: delivered, nothing
    // OPEN) and nothing changing for 10 s, or the timeout (a message still retried then is reported as such).
    const deadline = Date.now() + s.settleTimeoutMs;
    const expectedIds = new Set(workload.flatMap((m) => (m.docId === null ? [] : [m.docId])));
    const accounted = async (dead: ReadonlySet<string>): Promise<boolean> => {
      if (design === 'system')
        return (await db.collection(INBOX).where('status', '==', 'OPEN').count().get()).data().count === 0;
      if (design === 'naive') return (baseline?.ledger.requests ?? 0) >= workload.length;
      const done = [...expectedIds].filter((id) => baseline?.ledger.correlated.has(id) === true || dead.has(id)).length;
      return done + (dead.size - [...dead].filter((id) => expectedIds.has(id)).length) >= workload.length;
    };
    let last = '';
    for (let quiet = 0; quiet < 5 && Date.now() < deadline;) {
      await sleep(2_000);
      const dead = await deadLetters();
      const now = `${baseline?.ledger.requests ?? 0}/${baseline?.ledger.correlated.size ?? 0}/${dead.size}`;
      quiet = now === last && (await accounted(dead)) ? quiet + 1 : 0;
      last = now;
    }
    const settled = await accounted(await deadLetters());

    // What became of every message.
    const correlatedAt = new Map<string, number>();
    const parked: Record<string, number> = {};
    let ops = 0;
    if (baseline !== null) {
      for (const [id, c] of baseline.ledger.correlated) correlatedAt.set(id, c.at);
      ops = baseline.ledger.ops;
    } else {
      const docs = await db.collection(INBOX).select('status', 'reason', 'processedAt').get();
      for (const d of docs.docs) {
        if (d.get('status') === 'DONE')
          correlatedAt.set(d.id, (d.get('processedAt') as FirebaseFirestore.Timestamp).toMillis());
        else if (d.get('status') === 'PARKED')
          parked[String(d.get('reason'))] = (parked[String(d.get('reason'))] ?? 0) + 1;
      }
      ops = 2 * docs.size + relayOps(join(stackLogs, 'relayInbox.log'));
    }
    const dead = await deadLetters();
    const kept = design === 'system' ? Object.values(parked).reduce((a, b) => a + b, 0) : dead.size;
    const latencyOf = (m: BenchMessage): number[] => {
      const at = m.docId === null ? undefined : correlatedAt.get(m.docId);
      return at === undefined ? [] : [at - (sentAt.get(m.index) ?? at)];
    };
    const latencies = workload.flatMap(latencyOf);
    const notOvertaken = workload.filter((m) => m.fate !== 'overtake').flatMap(latencyOf);
    const instances = await db
      .collection(COLLECTIONS.instances)
      .where('processKey', '==', PROCESS_KEY)
      .select('correlatedMessages')
      .get();
    const seen = new Map<string, number>();
    for (const i of instances.docs)
      for (const id of (i.get('correlatedMessages') as string[] | undefined) ?? [])
        seen.set(id, (seen.get(id) ?? 0) + 1);
    const lastCorrelation = Math.max(first, ...correlatedAt.values());
    return {
      design,
      messages: workload.length,
      deliveries: baseline?.ledger.requests ?? null,
      correlated: correlatedAt.size,
      // A nacked message is never lost by the receiver: what is neither correlated nor dead-lettered is still being redelivered.
      lost: design === 'nack' ? 0 : workload.length - correlatedAt.size - kept,
      unresolved: design === 'nack' ? workload.length - correlatedAt.size - kept : 0,
      parked,
      deadLettered: design === 'system' ? (parked.DEAD_LETTERED ?? 0) : dead.size,
      settled,
      doubleCorrelations: [...seen.values()].reduce((n, c) => n + Math.max(0, c - 1), 0),
      throughputPerS: Math.round((correlatedAt.size / Math.max(1, lastCorrelation - first)) * 10_000) / 10,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
      latencyP99NotOvertakenMs: percentile(notOvertaken, 99),
      opsPerMessage: Math.round((ops / workload.length) * 10) / 10,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/** Reads + writes of every relay call, from the relay's "relay summary" log lines. */
function relayOps(file: string): number {
  let ops = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"relay summary"')) continue;
    const summary = (JSON.parse(line) as { relaySummary?: { reads?: number; writes?: number } }).relaySummary;
    ops += (summary?.reads ?? 0) + (summary?.writes ?? 0);
  }
  return ops;
}
