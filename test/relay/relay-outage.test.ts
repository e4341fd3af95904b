import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import { startTcpProxy, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { NO_QUEUES } from '../support/queues';

/**
 * A scheduled relay call while Firestore hangs: the stray-shard step, which
 * comes first, must not spend the whole call, so the candidate query runs,
 * fails in its turn, and the call answers 503 with `relay call failed`
 * (the scheduler retries, the 5xx shows) instead of a 200 that reports an
 * empty inbox.
 */
const BUDGET_MS = 2_000;
const GRACE_MS = 1_000;
const firestore = freshFirestores();
const { db: direct, projectId } = firestore.project('relay-outage');
let proxy: TcpProxy;

beforeAll(async () => {
  proxy = await startTcpProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
});
afterAll(async () => {
  await proxy.close();
});

test('Firestore hangs: the stray step has its share, the candidate query fails, the call answers 503 and logs relay call failed', async () => {
  const id = await storePushed(direct, { name: 'TaskCompleted', payload: completionPayload('C-hung') });
  const logs: Array<Record<string, unknown>> = [];
  const relay = loadConfig({
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_PUSH_AUTH: 'disabled',
    INBOX_RELAY_BUDGET_MS: String(BUDGET_MS),
    INBOX_RELAY_GRACE_MS: String(GRACE_MS),
  }).relay;
  const engine = await fixtureEngine();
  const hung = firestore('relay-outage-hung', { host: proxy.host, projectId });
  http(
    'relayOutage',
    createRelayHandler({
      db: () => hung,
      engine: async () => engine,
      queue: () => ({ enqueue: async () => 'CREATED' }),
      timerQueue: () => ({ enqueue: async () => 'CREATED' }),
      log: createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>)),
      relay,
      shards: 16,
      now: () => new Date(),
      random: () => 0.5,
    }),
  );

  proxy.setMode('blackhole');
  let res: request.Response;
  try {
    res = await request(getTestServer('relayOutage')).post('/').send({});
  } finally {
    proxy.setMode('forward');
  }

  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ code: 'DEADLINE_EXCEEDED', retry: true });
  // The stray step gave up at the end of its share (a quarter of the budget, less the milliseconds the call took
  // to get there), and the call went on to the candidate query.
  const stray = logs.filter((l) => l.message === 'stray shards not checked; the next call tries again');
  expect(stray).toEqual([
    expect.objectContaining({
      severity: 'WARNING',
      error: expect.stringMatching(/^the stray-shard query did not finish within \d+ ms$/),
    }),
  ]);
  const strayDeadlineMs = Number(/within (\d+) ms/.exec(String(stray[0]?.error))?.[1]);
  expect(strayDeadlineMs).toBeGreaterThan(0);
  expect(strayDeadlineMs).toBeLessThanOrEqual(BUDGET_MS / 4);
  const failed = logs.filter((l) => l.message === 'relay call failed; documents stay OPEN for the next call');
  expect(failed).toEqual([
    expect.objectContaining({
      severity: 'ERROR',
      code: 'DEADLINE_EXCEEDED',
      error: expect.stringContaining('the candidate query did not finish'),
    }),
  ]);
  expect(logs.filter((l) => l.message === 'relay summary')).toEqual([]);
  // Nothing lost, nothing counted: the document waits, OPEN, for the next call.
  expect((await direct.collection(INBOX).doc(id).get()).data()).toMatchObject({ status: 'OPEN', attempts: 0 });
});

test('a call whose clock is past the budget once the stray step is done still queries its candidates once, and starts none', async () => {
  const { db } = firestore.project('relay-late');
  const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-late') });
  // The call starts at T; every later reading is just past the budget (the grace still ahead): the stray step had no time left.
  const T = 1_000_000;
  let readings = 0;
  const clock = (): number => (readings++ === 0 ? T : T + BUDGET_MS + 1);
  const engine = await fixtureEngine();
  const policy = { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 };
  const summary = await relayBatch(
    {
      db,
      engine,
      policy,
      retentionMs: 86_400_000,
      transactionTimeoutMs: 10_000,
      now: () => new Date(),
      random: () => 0.5,
    },
    NO_QUEUES,
    createLogger(() => undefined),
    {
      budgetMs: BUDGET_MS,
      graceMs: GRACE_MS,
      parallelism: 1,
      batchSize: 16,
      shards: 16,
      clock,
    },
  );
  // One read per shard's query: the candidate query ran, and listed the document; no document was started past the budget.
  expect(summary).toMatchObject({
    candidates: 1,
    rounds: 1,
    candidateReads: 16,
    correlated: 0,
    retried: 0,
    technicalFailures: 0,
    resharded: 0,
  });
  expect((await db.collection(INBOX).doc(id).get()).data()).toMatchObject({ status: 'OPEN', attempts: 0 });
});
