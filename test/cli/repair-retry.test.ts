import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { cancelTokenRun } from '../../functions/src/engine/store/cancel-token';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { relayOne } from '../../functions/src/relay/relay-one';
import { GRPC_STATUS, type GrpcFaultProxy, startGrpcFaultProxy } from '../../tools/faults/grpc-fault-proxy';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { type CliRun, spawnCli } from './run-cli';
import { findToken, jobsOf, tokensOf } from '../support/process-state';

/**
 * Every repair is idempotent under the Firestore SDK's re-runs. The commit
 * of the repair's transaction reaches the emulator and lands; the proxy in
 * between then answers the CLI with an error instead of OK, once:
 * - DEADLINE_EXCEEDED: the SDK re-runs the transaction callback at once;
 * - UNAVAILABLE: the SDK first resends the commit, which the emulator
 *   refuses (the transaction is closed: INVALID_ARGUMENT, where production
 *   says "transaction has expired" and the SDK re-runs the callback).
 * Either way the repair must be applied once and reported as done.
 * The CLI runs as its own process, talking to the emulator through the proxy.
 */
const { db, projectId } = freshFirestores().project('cli-retry');
let engine: Engine;
let proxy: GrpcFaultProxy;
let cli: (...args: string[]) => Promise<CliRun>;
const HOUR = 3_600_000;
const CODES = [
  ['UNAVAILABLE', GRPC_STATUS.UNAVAILABLE],
  ['DEADLINE_EXCEEDED', GRPC_STATUS.DEADLINE_EXCEEDED],
] as const;

beforeAll(async () => {
  engine = await fixtureEngine();
  proxy = await startGrpcFaultProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
  cli = spawnCli({ PATH: process.env.PATH, FIRESTORE_EMULATOR_HOST: proxy.host, GOOGLE_CLOUD_PROJECT: projectId });
});
afterAll(async () => {
  await proxy.close();
});

/** Runs the CLI with the next commit's answer lost after it landed, and checks the fault was really injected. */
async function withLostCommit(code: number, ...args: string[]): Promise<CliRun> {
  const before = proxy.lost('Commit');
  proxy.loseReplies('Commit', { code });
  const run = await cli(...args);
  expect(proxy.lost('Commit')).toBe(before + 1);
  return run;
}

async function waitingOrder(caseId: string): Promise<{ instanceId: string; executionId: string }> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
  return { instanceId: started.instance.id, executionId: started.instance.activeExecutionIds[0]! };
}

const inboxDoc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};
const instanceDoc = async (id: string): Promise<Record<string, unknown>> =>
  (await refs.instance(db, id).get()).data() ?? {};

describe.each(CODES)('a repair whose commit landed and then reported %s', (_name, code) => {
  test('move-token onto an async step adds one token and one job, and reports success', async () => {
    const { instanceId } = await waitingOrder(`C-retry-move-${code}`);
    const r = await withLostCommit(
      code,
      '--json',
      'repair',
      'move-token',
      '--instance',
      instanceId,
      '--activity',
      'handOver',
    );
    // The waiting token and exactly one new one, with exactly one new job.
    expect(await tokensOf(db, instanceId)).toHaveLength(2);
    expect((await instanceDoc(instanceId)).activeExecutionIds).toHaveLength(2);
    const pending = (await jobsOf(db, instanceId)).filter((j) => j.status === 'PENDING');
    expect(pending).toHaveLength(1);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    // The job is reported (so the CLI dispatches it), and so is the id of the token the repair added.
    expect(r.json()).toMatchObject({
      alreadyApplied: true,
      jobs: [expect.objectContaining({ id: pending[0]!.id, activityId: 'handOver' })],
    });
    expect((await instanceDoc(instanceId)).activeExecutionIds).toContain(
      (r.json() as { executionId: string }).executionId,
    );
  });

  test('requeue reports the document requeued, not refused', async () => {
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload(`C-retry-requeue-${code}`),
      receivedAt: new Date(Date.now() - 30 * HOUR),
    });
    await relayOne(
      {
        db,
        engine,
        policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
        retentionMs: 86_400_000,
        transactionTimeoutMs: 20_000,
        now: () => new Date(),
        random: () => 0.5,
      },
      id,
    );
    expect((await inboxDoc(id)).status).toBe('PARKED');
    const r = await withLostCommit(code, 'requeue', id);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('requeued 1 of 1 (1 already applied');
    expect(await inboxDoc(id)).toMatchObject({ status: 'OPEN', attempts: 0, previousReason: 'NO_WAITING_INSTANCE' });
  });

  test('park reports the document parked', async () => {
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload(`C-retry-park-${code}`) });
    const r = await withLostCommit(code, 'park', id, '--reason', 'sender withdrew it');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('already applied');
    expect(await inboxDoc(id)).toMatchObject({ status: 'PARKED', reason: 'MANUAL', lastError: 'sender withdrew it' });
  });

  test('cancel-token reports the token cancelled', async () => {
    const { instanceId, executionId } = await waitingOrder(`C-retry-cancel-${code}`);
    const r = await withLostCommit(
      code,
      'repair',
      'cancel-token',
      '--instance',
      instanceId,
      '--execution',
      executionId,
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('already applied');
    expect((await findToken(db, executionId))?.status).toBe('CANCELLED');
  });

  test('resolve-incident reports the incident resolved', async () => {
    const a = await waitingOrder(`C-retry-res-a-${code}`);
    const b = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: `C-retry-res-b-${code}`,
      variables: { caseId: `C-retry-res-a-${code}` },
      now: new Date(),
    });
    await completeJobRun(db, engine, b.jobs[0]!, {}, new Date());
    expect((await instanceDoc(a.instanceId)).status).toBe('INCIDENT');
    await cancelTokenRun(db, engine, b.instance.id, b.instance.activeExecutionIds[0]!, new Date());
    const r = await withLostCommit(
      code,
      '--json',
      'repair',
      'resolve-incident',
      a.instanceId,
      '--note',
      'second start cancelled',
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ resolved: 1, alreadyApplied: true, instance: { status: 'RUNNING' } });
    expect(await instanceDoc(a.instanceId)).toMatchObject({ status: 'RUNNING', resolvedIncidents: 1 });
  });
});
