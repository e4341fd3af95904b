import type { Firestore } from '@google-cloud/firestore';
import { http, type Request, type Response } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import { createDeadLetterHandler } from '../../functions/src/deadletter/receive-dead-letter';
import type { Engine } from '../../functions/src/engine/engine';
import { createFireTimerHandler } from '../../functions/src/jobs/fire-timer';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createSweepJobsHandler } from '../../functions/src/jobs/sweep-jobs';
import { createLogger } from '../../functions/src/log';
import { createStartProcessHandler } from '../../functions/src/process/start-process';
import { createPushHandler } from '../../functions/src/receiver/receive-pubsub-push';
import { FIXTURE_REGISTRY } from '../support/app';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { completionEnvelope } from '../support/push';

/**
 * Every function answers an unexpected failure (a defect) the same way: 500,
 * `retry: false`, an ERROR log line; and a failure a retry can heal 503,
 * `retry: true` (http/answer.ts). The failure is injected where each
 * function first reaches a dependency, so no emulator is needed: the
 * Firestore client (or, for startProcess, the engine) throws a gRPC error.
 */
const grpc = (code: number): Error => Object.assign(new Error(`injected gRPC ${code}`), { code });
const DEFECT = 3; // INVALID_ARGUMENT: the same request fails the same way
const OUTAGE = 14; // UNAVAILABLE

const config = loadConfig({ GOOGLE_CLOUD_PROJECT: 'unexpected-error', INBOX_PUSH_AUTH: 'disabled' });
const noQueue: JobQueue = { enqueue: async () => 'CREATED' };

type Handler = (req: Request, res: Response) => Promise<void>;
interface Dependencies {
  readonly db: () => Firestore;
  readonly engine: () => Promise<Engine>;
  readonly log: ReturnType<typeof createLogger>;
}

/** Each function as production builds it, with its dependencies replaced by `deps`, and the request that reaches them. */
const FUNCTIONS: ReadonlyArray<{
  readonly name: string;
  readonly build: (deps: Dependencies) => Handler;
  readonly body: unknown;
  readonly retryAfter: string | undefined;
}> = [
  {
    name: 'receivePubSubPush',
    build: ({ db, log }) =>
      createPushHandler({
        db,
        registry: FIXTURE_REGISTRY,
        verifier: null,
        log,
        now: () => new Date(),
        maxBodyBytes: 1 << 20,
        writeTimeoutMs: 5_000,
        shards: 16,
        fastPath: null,
        payloadStore: () => {
          throw new Error('no payload store in this test');
        },
        claims: { payloadBucket: 'b', offloadBytes: 512 * 1024, referenceBuckets: [] },
      }),
    body: completionEnvelope({ caseId: 'C-defect' }),
    retryAfter: '10',
  },
  {
    name: 'receiveDeadLetter',
    build: ({ db, log }) =>
      createDeadLetterHandler({
        db,
        registry: FIXTURE_REGISTRY,
        verifier: null,
        log,
        now: () => new Date(),
        maxBodyBytes: 1 << 20,
        writeTimeoutMs: 5_000,
        shards: 16,
        claims: { referenceBuckets: [] },
      }),
    body: completionEnvelope(
      { caseId: 'C-defect' },
      {
        attributes: {
          CloudPubSubDeadLetterSourceSubscription: 'fixture-results-push',
          CloudPubSubDeadLetterSourceDeliveryCount: '5',
        },
      },
    ),
    retryAfter: '10',
  },
  {
    name: 'startProcess',
    build: ({ db, engine, log }) =>
      createStartProcessHandler({
        db,
        engine,
        queue: () => noQueue,
        timerQueue: () => noQueue,
        log,
        now: () => new Date(),
      }),
    body: { processKey: 'fixture-process', businessKey: 'C-defect', variables: { caseId: 'C-defect' } },
    retryAfter: '10',
  },
  {
    name: 'runJob',
    build: ({ db, engine, log }) =>
      createRunJobHandler({
        db,
        engine,
        queue: () => noQueue,
        timerQueue: () => noQueue,
        handlers: () => ({}),
        verifier: null,
        log,
        now: () => new Date(),
        maxAttempts: 3,
        queueMaxAttempts: 5,
      }),
    body: { jobId: 'a'.repeat(40) },
    retryAfter: undefined,
  },
  {
    name: 'sweepJobs',
    build: ({ db, engine, log }) =>
      createSweepJobsHandler({
        db,
        engine,
        queue: () => noQueue,
        timerQueue: () => noQueue,
        log,
        now: () => new Date(),
        options: {},
      }),
    body: {},
    retryAfter: undefined,
  },
  {
    name: 'fireTimer',
    build: ({ db, engine, log }) =>
      createFireTimerHandler({
        db,
        engine,
        queue: () => noQueue,
        timerQueue: () => noQueue,
        verifier: null,
        log,
        now: () => new Date(),
      }),
    body: { timerId: 'a'.repeat(40) },
    retryAfter: undefined,
  },
  {
    name: 'relayInbox',
    build: ({ db, engine, log }) =>
      createRelayHandler({
        db,
        engine,
        queue: () => noQueue,
        timerQueue: () => noQueue,
        log,
        relay: config.relay,
        shards: 16,
        now: () => new Date(),
        random: Math.random,
      }),
    body: {},
    retryAfter: undefined,
  },
];

let registered = 0;
/** The function served in process, every dependency failing with gRPC `code`, its log lines captured. */
function failingWith(
  build: (deps: Dependencies) => Handler,
  code: number,
): { server: ReturnType<typeof getTestServer>; logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = [];
  const fail = (): never => {
    throw grpc(code);
  };
  const name = `failingFunction${++registered}`;
  http(
    name,
    build({
      db: fail,
      engine: async () => fail(),
      log: createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
    }),
  );
  return { server: getTestServer(name), logs };
}

describe.each(FUNCTIONS)('$name', ({ build, body, retryAfter }) => {
  test('a defect: 500, retry false, code named, logged at ERROR', async () => {
    const { server, logs } = failingWith(build, DEFECT);
    const res = await request(server)
      .post('/')
      .send(body as object);
    expect({ status: res.status, retry: res.body.retry, code: res.body.code }).toEqual({
      status: 500,
      retry: false,
      code: 'GRPC_3',
    });
    expect(res.headers['retry-after']).toBeUndefined();
    expect(logs.some((l) => l.severity === 'ERROR')).toBe(true);
  });

  test('a failure a retry heals: 503, retry true', async () => {
    const { server } = failingWith(build, OUTAGE);
    const res = await request(server)
      .post('/')
      .send(body as object);
    expect({ status: res.status, retry: res.body.retry, code: res.body.code }).toEqual({
      status: 503,
      retry: true,
      code: 'UNAVAILABLE',
    });
    expect(res.headers['retry-after']).toBe(retryAfter);
  });
});
