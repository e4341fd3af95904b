import type { Firestore } from '@google-cloud/firestore';
import fc from 'fast-check';
import request from 'supertest';
import { canonicalJson, sha256Hex } from '../../functions/src/core/hash';
import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobRun, type JobRef } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { collisionDocId, messageDocId } from '../../functions/src/inbox/ids';
import { createLogger } from '../../functions/src/log';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionEnvelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { seededRandom } from '../../tools/seeded-random';
import { NO_QUEUES } from '../support/queues';
import { instanceJobs } from '../../functions/src/engine/store/instance-doc';
import { waitingPointsOf } from '../support/waiting';

/**
 * The headline property of the inbox, on the real Firestore emulator: for any
 * interleaving of deliveries (duplicates and same-key collisions included),
 * process starts, hand-overs and relay rounds, every message ends DONE
 * exactly once or PARKED with a reason, and every started case is
 * moved by exactly one message. Each run gets a Firestore project of its own
 * and an injected clock, so the buffer window passes without waiting.
 * A failure prints fast-check's seed and path: rerun with them to replay.
 */

const SEED = 20_261_129;
const NUM_RUNS = 30;
const T0 = Date.parse('2026-11-29T10:00:00Z');
const POLICY: RelayPolicy = {
  backoffBaseMs: 1_000,
  backoffCapMs: 30_000,
  bufferWindowMs: 600_000,
  errorAfterAttempts: 3,
};
/** Few shards: the relay queries each one per round. The receiver writes with the same count. */
const SHARDS = 4;
const PROCESS = 'fixture-process';

type Step =
  | { readonly kind: 'deliver' | 'start' | 'handOver'; readonly pick: number }
  | { readonly kind: 'relay' }
  | { readonly kind: 'tick'; readonly ms: number };
interface MessageSpec {
  readonly order: number;
  /** 0: no eventId (dedup key from the case); 1, 2: one of two event ids. */
  readonly event: number;
  /** Differing counts under one dedup key make a KEY_COLLISION. */
  readonly items: number;
  readonly publishOffsetMs: number;
}
interface Scenario {
  /** Per case: will it ever be started? */
  readonly startable: readonly boolean[];
  readonly messages: readonly MessageSpec[];
  readonly steps: readonly Step[];
  /** Seeds the relay's random source (backoff jitter, key order), so a failing run replays exactly. */
  readonly randomSeed: number;
}

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constantFrom('start' as const, 'handOver' as const), pick: fc.nat() }), weight: 3 },
  { arbitrary: fc.constant({ kind: 'relay' as const }), weight: 3 },
  // Ticks let backoffs expire mid-schedule; 20 ticks of at most 20 s stay inside the 10 min buffer window.
  { arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 20_000 }) }), weight: 2 },
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  startable: fc.array(fc.boolean(), { minLength: 2, maxLength: 5 }),
  messages: fc.array(
    fc.record({
      order: fc.nat(),
      event: fc.nat({ max: 2 }),
      items: fc.integer({ min: 1, max: 3 }),
      publishOffsetMs: fc.nat({ max: 60_000 }),
    }),
    { minLength: 1, maxLength: 8, size: 'medium' },
  ),
  randomSeed: fc.noBias(fc.nat()),
  steps: fc.array(stepArb, { minLength: 5, maxLength: 20, size: 'medium' }),
});

let engine: Engine;
beforeAll(async () => {
  engine = await fixtureEngine();
});
const firestore = freshFirestores();

const millis = (value: unknown): number => (value as FirebaseFirestore.Timestamp).toMillis();

async function runScenario(s: Scenario): Promise<void> {
  const db: Firestore = firestore('interleavings');
  let clock = T0;
  const now = (): Date => new Date(clock);
  const { server } = testReceiver(db, { now, shards: SHARDS });
  const deps = {
    db,
    engine,
    policy: POLICY,
    retentionMs: 7 * 86_400_000,
    transactionTimeoutMs: 20_000,
    now,
    random: seededRandom(s.randomSeed),
  };
  const cases = s.startable.map((_, i) => `C-${i}`);
  const startable = cases.flatMap((key, i) => (s.startable[i] === true ? [key] : []));
  const messages = s.messages.map((m) => {
    const caseId = cases[m.order % cases.length] as string;
    const eventId = m.event === 0 ? undefined : `${caseId}-e${m.event}`;
    const dedupKey = eventId ?? `TaskCompleted:${caseId}`;
    const payload = {
      caseId,
      completedItems: m.items,
      completionTimestamp: '2026-11-29T10:00:00Z',
      ...(eventId === undefined ? {} : { eventId }),
    };
    return {
      ...m,
      caseId,
      payload,
      id: messageDocId('TaskCompleted', caseId, dedupKey),
      publishTime: new Date(T0 + m.publishOffsetMs).toISOString(),
    };
  });
  // The model: what the receiver must answer, and which documents must exist at the end.
  const firstItems = new Map<string, number>();
  const collisions = new Set<string>();
  const delivered = new Set<number>();
  const handOverJobs = new Map<string, JobRef>();
  const handedOver = new Set<string>();

  const deliver = async (i: number): Promise<void> => {
    const m = messages[i] as (typeof messages)[number];
    delivered.add(i);
    const res = await request(server)
      .post('/')
      .send(completionEnvelope(m.payload, { publishTime: m.publishTime }));
    expect(res.status).toBe(200);
    const first = firstItems.get(m.id);
    if (first === undefined) {
      expect(res.body).toMatchObject({ outcome: 'stored', id: m.id, status: 'OPEN' });
      firstItems.set(m.id, m.items);
    } else if (first === m.items) {
      // A redelivery or duplicate publish: acked, nothing new, whatever the first one's fate by now.
      expect(res.body).toEqual({ outcome: 'duplicate', id: m.id });
    } else {
      const id = collisionDocId(m.id, sha256Hex(canonicalJson(m.payload)));
      // The second payload parks once; its redelivery is a duplicate of the parked document.
      if (collisions.has(id)) expect(res.body).toEqual({ outcome: 'duplicate', id });
      else
        expect(res.body).toMatchObject({
          outcome: 'stored',
          id,
          status: 'PARKED',
          reason: 'KEY_COLLISION',
          collidesWith: m.id,
        });
      collisions.add(id);
    }
  };
  const start = async (caseId: string): Promise<void> => {
    const started = await startProcessInstance(db, engine, {
      processKey: PROCESS,
      businessKey: caseId,
      variables: { caseId },
      now: now(),
    });
    // A second start finds the first instance: never two instances per case.
    expect(started.created).toBe(!handOverJobs.has(caseId));
    if (started.created) handOverJobs.set(caseId, started.jobs[0] ?? { id: '', processInstanceId: '' });
  };
  const handOver = async (caseId: string): Promise<void> => {
    const jobId = handOverJobs.get(caseId);
    if (jobId === undefined) return;
    // Cloud Tasks may run a job twice; the second run changes nothing.
    expect((await completeJobRun(db, engine, jobId, {}, now())).status).toBe(
      handedOver.has(caseId) ? 'ALREADY_FINISHED' : 'COMPLETED',
    );
    handedOver.add(caseId);
  };
  // One worker: the same seed then replays the same transactions in the same order (parallel relays: test/relay/concurrency.test.ts).
  const relay = async (): Promise<void> => {
    const summary = await relayBatch(
      deps,
      NO_QUEUES,
      createLogger(() => undefined),
      { budgetMs: 30_000, parallelism: 1, batchSize: 40, shards: SHARDS },
    );
    expect(summary.technicalFailures).toBe(0);
  };

  try {
    for (const step of s.steps) {
      if (step.kind === 'deliver') await deliver(step.pick % messages.length);
      if (step.kind === 'start' && startable.length > 0) await start(startable[step.pick % startable.length] as string);
      if (step.kind === 'handOver' && startable.length > 0)
        await handOver(startable[step.pick % startable.length] as string);
      if (step.kind === 'relay') await relay();
      if (step.kind === 'tick') clock += step.ms;
    }
    // Drain: every order that will start has started and waits, every message has arrived at least once, relay.
    for (const key of startable) {
      if (!handOverJobs.has(key)) await start(key);
      await handOver(key);
    }
    for (let i = 0; i < messages.length; i++) if (!delivered.has(i)) await deliver(i);
    await relay();
    // Still inside the buffer window: nothing may have been parked for lack of a waiting instance.
    expect(clock - T0).toBeLessThan(POLICY.bufferWindowMs);
    expect((await db.collection(INBOX).where('reason', '==', 'NO_WAITING_INSTANCE').count().get()).data().count).toBe(
      0,
    );
    // Past the window (and every backoff): whatever still waits for nobody is parked now.
    clock += POLICY.bufferWindowMs + POLICY.backoffCapMs;
    await relay();

    const docs = (await db.collection(INBOX).get()).docs;
    // One document per distinct message: the first payload of each dedup key, plus one per colliding payload.
    expect(docs.map((d) => d.id).sort()).toEqual([...firstItems.keys(), ...collisions].sort());
    for (const d of docs) {
      const status = d.get('status') as string;
      expect(['DONE', 'PARKED']).toContain(status);
      if (status === 'DONE') expect(d.get('processInstanceId')).toEqual(expect.any(String));
      if (status === 'PARKED') expect(['NO_WAITING_INSTANCE', 'KEY_COLLISION']).toContain(d.get('reason'));
      if (d.get('reason') === 'KEY_COLLISION') expect(collisions.has(d.id)).toBe(true);
      // Parked for lack of a waiting instance only once the buffer window had passed since receipt.
      if (d.get('reason') === 'NO_WAITING_INSTANCE')
        expect(millis(d.get('parkedAt')) - millis(d.get('receivedAt'))).toBeGreaterThanOrEqual(POLICY.bufferWindowMs);
    }
    expect((await db.collection(COLLECTIONS.instances).count().get()).data().count).toBe(startable.length);

    for (const key of cases) {
      const mine = docs.filter((d) => d.get('correlationKey') === key);
      const done = mine.filter((d) => d.get('status') === 'DONE');
      // Per-key lane drained: a stale entry would block this key's next message.
      expect((await refs.correlationKey(db, key).get()).get('open') ?? []).toEqual([]);
      const instances = (await db.collection(COLLECTIONS.instances).where('businessKey', '==', key).get()).docs;
      if (!startable.includes(key)) {
        // Never started: no instance, and each of its messages parked for lack of one (or as a collision).
        expect(instances).toHaveLength(0);
        for (const d of mine) expect(['NO_WAITING_INSTANCE', 'KEY_COLLISION']).toContain(d.get('reason'));
        continue;
      }
      expect(instances).toHaveLength(1);
      const instance = instances[0] as FirebaseFirestore.QueryDocumentSnapshot;
      const settlementJobs = instanceJobs(instance.data()).filter((j) => j.activityId === 'settle');
      const subscriptions = await waitingPointsOf(db, instance.id, key);
      const hasMessage = mine.some((d) => d.get('reason') !== 'KEY_COLLISION');
      // Exactly one correlation per started order that got any valid message; none (still waiting) otherwise.
      expect(done).toHaveLength(hasMessage ? 1 : 0);
      expect(settlementJobs).toHaveLength(hasMessage ? 1 : 0);
      expect(subscriptions).toHaveLength(hasMessage ? 0 : 1);
      if (done[0] !== undefined) {
        expect(done[0].get('processInstanceId')).toBe(instance.id);
        // The variables are those of the message that is DONE, not of a parked one.
        expect(instance.get('variables.completedItems')).toBe(done[0].get('payload.completedItems'));
      }
      // The instance's audit trail names exactly the DONE message: a double correlation would show here.
      expect(instance.get('correlatedMessages') ?? []).toEqual(done.map((d) => d.id));
    }
  } finally {
    // One client per scenario, and one test runs them all: each ends its own rather than all at the file's end.
    await db.terminate();
  }
}

test('any interleaving of deliveries, duplicates, starts and relay rounds: each message DONE exactly once or PARKED', async () => {
  await fc.assert(fc.asyncProperty(scenarioArb, runScenario), { seed: SEED, numRuns: NUM_RUNS });
}, 600_000);
