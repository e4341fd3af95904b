import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch, type RelayOneStep } from '../../functions/src/relay/relay-batch';
import { relayOne, type RelayDeps, type RelayResult } from '../../functions/src/relay/relay-one';
import { failingEngine, HANGING_BUFFER, roundsEngine, fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';

/**
 * The scheduled sweep (relayBatch) as a whole: that documents held back for
 * per-key order cannot starve a shard, that a call keeps to its time budget
 * plus grace, and that it works on at most `parallelism` keys at once.
 */

const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const noQueue = {
  jobs: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
  timers: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
};
const quiet = createLogger(() => undefined);
let engine: Engine;

beforeAll(async () => {
  engine = await fixtureEngine();
});
const freshDb = freshFirestores();
const deps = (db: Firestore, overrides: Partial<RelayDeps> = {}): RelayDeps => ({
  db,
  engine,
  policy,
  retentionMs: 3_600_000,
  transactionTimeoutMs: 30_000,
  now: () => new Date(),
  random: () => 0.5,
  ...overrides,
});
const inboxDoc = async (db: Firestore, id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};
const millis = (value: unknown): number => (value as FirebaseFirestore.Timestamp).toMillis();

describe('held-back documents do not starve the sweep', () => {
  test('more blocked documents in a shard than its slots per round, plus one ready key: the ready key is correlated', async () => {
    const db = freshDb('sweep-starve');
    // One shard (writer and sweep alike), batchSize 4: four slots per round. Eight blocked documents are due before the ready one.
    const SHARDS = 1;
    const SLOTS = 4;
    const BLOCKED_KEYS = 4;
    const now = new Date();
    const at = (offsetMs: number): Date => new Date(now.getTime() + offsetMs);

    // Each blocked key: its oldest message waits in backoff (nobody waits for it yet), its two younger ones were received earlier and are due.
    const heads: string[] = [];
    const younger: Array<{ id: string; head: string }> = [];
    for (let k = 0; k < BLOCKED_KEYS; k++) {
      const key = `C-blocked-${k}`;
      const head = await storePushed(db, {
        name: 'TaskCompleted',
        payload: completionPayload(key, { eventId: `h-${k}` }),
        publishTime: at(-300_000),
        receivedAt: at(-50_000),
        shards: SHARDS,
      });
      expect(await relayOne(deps(db, { now: () => now }), head)).toMatchObject({
        kind: 'DECIDED',
        decision: { kind: 'RETRY' },
      });
      heads.push(head);
      for (let y = 0; y < 2; y++) {
        const id = await storePushed(db, {
          name: 'TaskCompleted',
          payload: completionPayload(key, { eventId: `y-${k}-${y}` }),
          publishTime: at(-200_000 + y),
          receivedAt: at(-90_000 + k * 10 + y),
          shards: SHARDS,
        });
        younger.push({ id, head });
      }
    }
    expect(younger.length).toBeGreaterThan(SLOTS);

    // The ready key: its process waits, its message is the youngest due document of the shard.
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-ready',
      variables: { caseId: 'C-ready' },
      now: at(-120_000),
    });
    await completeJobRun(db, engine, started.jobs[0]!, {}, at(-120_000));
    const ready = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ready'),
      receivedAt: at(-10_000),
      shards: SHARDS,
    });

    const summary = await relayBatch(deps(db, { now: () => now }), noQueue, quiet, {
      budgetMs: 20_000,
      parallelism: 2,
      batchSize: SLOTS,
      shards: SHARDS,
    });

    expect(await inboxDoc(db, ready)).toMatchObject({ status: 'DONE', processInstanceId: started.instance.id });
    expect(summary).toMatchObject({ correlated: 1, retried: 0, technicalFailures: 0 });
    expect(summary.skippedForOrder).toBe(younger.length);
    // Held back: no attempt counted, moved just behind the older document's nextAttemptAt (so no longer due before it).
    for (const { id, head } of younger) {
      const [doc, older] = await Promise.all([inboxDoc(db, id), inboxDoc(db, head)]);
      expect(doc).toMatchObject({ status: 'OPEN', attempts: 0 });
      expect(millis(doc.nextAttemptAt)).toBe(millis(older.nextAttemptAt) + 1);
    }
    for (const head of heads) expect(await inboxDoc(db, head)).toMatchObject({ status: 'OPEN', attempts: 1 });
    // Counted: each hold is a write, besides the correlation's; one shard: a billed read per listed document, one for
    // the final empty query, and one for the call's check for documents stored under another shard count (reshard.ts),
    // which finds none (a query is billed one read when it finds nothing).
    expect(summary.writes).toBeGreaterThan(younger.length);
    expect(summary.resharded).toBe(0);
    expect(summary.candidateReads).toBe(summary.candidates + 2);
  });
});

describe('time budget', () => {
  test('a call stops within budget + grace: no document is started after the budget, each gets only the time left', async () => {
    const db = freshDb('sweep-budget');
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, k) =>
        storePushed(db, {
          name: 'TaskCompleted',
          payload: completionPayload(`C-budget-${k}`),
          receivedAt: new Date(Date.now() - 60_000),
        }),
      ),
    );
    const BUDGET = 5_000;
    const GRACE = 1_000;
    let clock = 0;
    const calls: Array<{ elapsed: number; left: number }> = [];
    // Stands in for relayOne: a transaction of 2 s (injected clock), or one that hangs until the deadline it is given.
    const slow: RelayOneStep = async (_deps, _id, timeLeftMs) => {
      const left = timeLeftMs();
      calls.push({ elapsed: clock, left });
      clock += Math.min(2_000, left);
      return {
        kind: 'FAILED',
        failure: { kind: 'retryable', code: 'DEADLINE_EXCEEDED' },
        error: 'injected',
        decision: null,
        stats: { reads: 1, writes: 0 },
      };
    };
    const summary = await relayBatch(deps(db), noQueue, quiet, {
      budgetMs: BUDGET,
      graceMs: GRACE,
      parallelism: 2,
      batchSize: 32,
      shards: 16,
      clock: () => clock,
      relayOne: slow,
    });

    expect(calls.length).toBeGreaterThan(0);
    expect(calls.length).toBeLessThan(ids.length); // stopped by the budget, not by running out of work
    for (const call of calls) {
      expect(call.elapsed).toBeLessThan(BUDGET);
      expect(call.left).toBe(BUDGET + GRACE - call.elapsed);
    }
    expect(summary.durationMs).toBeLessThanOrEqual(BUDGET + GRACE);
    expect(summary.technicalFailures).toBe(calls.length);
    expect(summary.reads).toBe(calls.length); // every result's reads are counted, failures too
  });

  test('relayOne: a hanging transaction is cut at the time left (not transactionTimeoutMs), and no failure is recorded past it', async () => {
    const db = freshDb('sweep-hang');
    const rounds = await roundsEngine();
    await startProcessInstance(db, rounds, {
      processKey: 'rounds',
      businessKey: 'C-hang',
      variables: { caseId: 'C-hang' },
      now: new Date(),
    });
    const id = await storePushed(db, { name: 'ExecutionStarted', payload: { caseId: 'C-hang', eventId: 's-hang' } });
    const before = await inboxDoc(db, id);
    // Correlating moves the token to its next waiting point, whose buffer lookup never answers.
    const hanging = await roundsEngine(HANGING_BUFFER);
    const left = [300, 0];
    const result = await relayOne(
      deps(db, { engine: hanging, transactionTimeoutMs: 60_000 }),
      id,
      () => left.shift() ?? 0,
    );
    expect(result).toMatchObject({
      kind: 'FAILED',
      failure: { kind: 'retryable', code: 'DEADLINE_EXCEEDED' },
      decision: null,
    });
    if (result.kind === 'FAILED') expect(result.error).toContain('within 300 ms');
    // Untouched: OPEN, no attempt, as due as before. Nothing is lost, the next call tries again.
    const after = await inboxDoc(db, id);
    expect(after).toMatchObject({ status: 'OPEN', attempts: 0 });
    expect(millis(after.nextAttemptAt)).toBe(millis(before.nextAttemptAt));
  });

  test('relayOne: a failure is recorded while the call has time left, and not once it has none', async () => {
    const db = freshDb('sweep-record');
    const broken = failingEngine(engine);
    const ids: string[] = [];
    for (const caseId of ['C-rec-1', 'C-rec-2']) {
      const started = await startProcessInstance(db, engine, {
        processKey: 'fixture-process',
        businessKey: caseId,
        variables: { caseId },
        now: new Date(),
      });
      await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
      ids.push(await storePushed(db, { name: 'TaskCompleted', payload: completionPayload(caseId) }));
    }
    const [withTime, withoutTime] = ids as [string, string];
    const recorded: RelayResult = await relayOne(deps(db, { engine: broken }), withTime, () => 10_000);
    expect(recorded).toMatchObject({ kind: 'FAILED', decision: { kind: 'RETRY', attempts: 1 } });
    expect(await inboxDoc(db, withTime)).toMatchObject({ status: 'OPEN', attempts: 1 });
    // The reads of the failed transaction and of the record are counted (inbox, key, instance; inbox again), and the record's write.
    expect(recorded.stats).toEqual({ reads: 4, writes: 1 });

    const left = [10_000, 0];
    const skipped = await relayOne(deps(db, { engine: broken }), withoutTime, () => left.shift() ?? 0);
    expect(skipped).toMatchObject({ kind: 'FAILED', decision: null });
    expect(await inboxDoc(db, withoutTime)).toMatchObject({ status: 'OPEN', attempts: 0 });
  });
});

describe('parallelism', () => {
  test('at most `parallelism` keys are worked on at once, and never one key twice at once', async () => {
    const db = freshDb('sweep-parallel');
    const PARALLELISM = 3;
    // Six keys with two documents each.
    const keyOf = new Map<string, string>();
    for (let k = 0; k < 6; k++) {
      for (let m = 0; m < 2; m++) {
        const key = `C-par-${k}`;
        keyOf.set(
          await storePushed(db, {
            name: 'TaskCompleted',
            payload: completionPayload(key, { eventId: `p-${k}-${m}` }),
            publishTime: new Date(Date.now() - 60_000 + m),
            receivedAt: new Date(Date.now() - 30_000),
          }),
          key,
        );
      }
    }
    const inFlight = new Map<string, number>();
    let most = 0;
    let twice = 0;
    let calls = 0;
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Stands in for relayOne: holds every call until `PARALLELISM` keys are in flight (a condition, not a timer), then lets all through.
    const observed: RelayOneStep = async (_deps, id) => {
      calls += 1;
      const key = keyOf.get(id) ?? id;
      if ((inFlight.get(key) ?? 0) > 0) twice += 1;
      inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
      const keys = [...inFlight.values()].filter((n) => n > 0).length;
      most = Math.max(most, keys);
      if (keys >= PARALLELISM) release();
      await gate;
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      return { kind: 'SKIPPED', why: 'NOT_OPEN', stats: { reads: 1, writes: 0 } };
    };
    await relayBatch(deps(db), noQueue, quiet, {
      budgetMs: 20_000,
      parallelism: PARALLELISM,
      batchSize: 64,
      shards: 16,
      relayOne: observed,
    });
    expect(most).toBe(PARALLELISM);
    expect(twice).toBe(0);
    expect(calls).toBe(keyOf.size); // every document reached once (a SKIPPED one does not stop its key's group)
  });
});
