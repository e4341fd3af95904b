import request from 'supertest';
import type { Explanation } from '../../functions/src/operations/explain-model';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { envelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { cliFor } from './run-cli';

/**
 * `inbox explain ID` against the emulator: for each place a document can be,
 * why it is there and the runbook's next command. One project for the file.
 */
const { db, projectId } = freshFirestores().project('cli-explain');
const cli = cliFor(projectId);
let engine: Engine;
const HOUR = 3_600_000;

const relayDeps = (now: Date): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
  retentionMs: 7 * 24 * HOUR,
  transactionTimeoutMs: 20_000,
  now: () => now,
  random: () => 0.5,
});
const completion = (caseId: string, extra: Record<string, unknown> = {}) =>
  storePushed(db, { name: 'TaskCompleted', payload: completionPayload(caseId, extra) });
const status = async (id: string): Promise<unknown> => (await db.collection(INBOX).doc(id).get()).get('status');

async function explained(id: string): Promise<Explanation & { text: string }> {
  const json = await cli('--json', 'explain', id);
  expect(json.err).toBe('');
  expect(json.code).toBe(0);
  const human = await cli('explain', id);
  expect(human.code).toBe(0);
  return { ...(json.json() as Explanation), text: human.out };
}

/** A case started, its hand-over job done: the token waits for TaskCompleted. */
async function waitingOrder(caseId: string): Promise<string> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
  return started.instance.id;
}

async function post(payload: Record<string, unknown>): Promise<{ id: string; reason?: string }> {
  const res = await request(testReceiver(db).server)
    .post('/')
    .send(
      envelope({
        data: Buffer.from(JSON.stringify(payload)).toString('base64'),
        attributes: { eventType: 'TaskCompleted' },
      }),
    );
  return res.body as { id: string; reason?: string };
}

beforeAll(async () => {
  engine = await fixtureEngine();
});

describe('inbox explain: OPEN', () => {
  test('no instance for the key: due now, parked from the end of the buffer window, start the process', async () => {
    const id = await completion('C-ex-none');
    const e = await explained(id);
    expect(e).toMatchObject({
      status: 'OPEN',
      nextAttemptAt: expect.any(String),
      heldBehind: null,
      waiting: [],
      instances: [],
    });
    expect(e.summary).toContain('due now');
    expect(e.because.join('\n')).toContain('no process instance for key C-ex-none');
    const received = (await db.collection(INBOX).doc(id).get()).get('receivedAt') as { toMillis: () => number };
    expect(new Date(String(e.parkedFromIfUnclaimed)).getTime()).toBe(received.toMillis() + 24 * HOUR);
    expect(e.next.join('\n')).toContain('start the process for C-ex-none');
    expect(e.text).toMatch(/^[0-9a-f]{40}: OPEN \(TaskCompleted, key C-ex-none\), 0 attempt\(s\) so far; due now/);
    expect(e.text).toMatch(
      /because:\n {2}- no waiting point for it yet; .*\n {2}- no process instance for key C-ex-none/,
    );
    expect(e.text).toMatch(/next:\n {2}start the process for C-ex-none/);
  });

  test('after a retry: when the next attempt is due', async () => {
    const id = await completion('C-ex-later');
    await relayOne(relayDeps(new Date()), id);
    const e = await explained(id);
    const next = (await db.collection(INBOX).doc(id).get()).get('nextAttemptAt') as { toDate: () => Date };
    expect(e.nextAttemptAt).toBe(next.toDate().toISOString());
    expect(e.summary).toContain(`1 attempt(s) so far; next attempt ${next.toDate().toISOString()} (in `);
  });

  test('the instance is at another activity: which, and why nothing waits yet', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-ex-job',
      variables: { caseId: 'C-ex-job' },
      now: new Date(),
    });
    const id = await completion('C-ex-job');
    const e = await explained(id);
    expect(e.instances.map((i) => i.id)).toEqual([started.instance.id]);
    expect(e.because.join('\n')).toContain(
      `instance ${started.instance.id} (business key C-ex-job) is RUNNING: token ${started.instance.activeExecutionIds[0]} is at activity handOver, waiting for job ${started.jobs[0]!.id}`,
    );
  });

  test('the instance completed: a late or repeated message, park it to keep it as a record', async () => {
    const instanceId = await waitingOrder('C-ex-late');
    const first = await completion('C-ex-late', { eventId: 'ev-late-1' });
    const relayed = await relayOne(relayDeps(new Date()), first);
    const settlement = relayed.kind === 'DECIDED' ? relayed.jobs[0] : undefined;
    await completeJobRun(db, engine, settlement!, {}, new Date());
    const second = await completion('C-ex-late', { eventId: 'ev-late-2' });
    const e = await explained(second);
    expect(e.because.join('\n')).toContain(`instance ${instanceId} (business key C-ex-late) completed at`);
    expect(e.next).toEqual([
      `a late or repeated message: nothing will take it; npx inbox park ${second} --reason "…" keeps it as a record and stops the retries`,
    ]);
  });

  test('held behind an older OPEN document of the same key', async () => {
    const older = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ex-order', { eventId: 'ev-o-1' }),
      publishTime: new Date(Date.now() - 60_000),
    });
    const younger = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ex-order', { eventId: 'ev-o-2' }),
      publishTime: new Date(),
    });
    const e = await explained(younger);
    expect(e.heldBehind).toMatchObject({ id: older });
    expect(e.because.join('\n')).toContain(`held back behind the older OPEN document ${older} of the same key`);
    expect(e.next).toEqual([`npx inbox explain ${older}`]);
    expect((await explained(older)).heldBehind).toBeNull();
  });

  test('a token waits: the relay correlates it at its next attempt', async () => {
    const instanceId = await waitingOrder('C-ex-ready');
    // Stored straight into the inbox while the token waits (the receiver's fast path never ran): nothing took it yet.
    const id = await completion('C-ex-ready');
    const e = await explained(id);
    expect(e.waiting).toEqual([
      expect.objectContaining({ processInstanceId: instanceId, activityId: 'waitForCompletion' }),
    ]);
    expect(e.next).toEqual([]);
    expect(e.text).toContain('next: nothing to do');
  });
});

describe("inbox explain: PARKED, with the runbook's repair command", () => {
  test('KEY_COLLISION: compare the payloads, then admit-collision', async () => {
    const first = await post(completionPayload('C-ex-k', { eventId: 'ev-ex-k' }));
    const second = await post(completionPayload('C-ex-k', { eventId: 'ev-ex-k', completedItems: 99 }));
    expect(second.reason).toBe('KEY_COLLISION');
    const e = await explained(second.id);
    expect(e).toMatchObject({ status: 'PARKED', reason: 'KEY_COLLISION' });
    expect(e.because.join('\n')).toContain(`dedup key of ${first.id}`);
    expect(e.next.join('\n')).toContain(`npx inbox repair admit-collision ${second.id}`);
    expect(e.text).toContain(`npx inbox repair admit-collision ${second.id}`);
  });

  test('NO_WAITING_INSTANCE: no instance yet says start it; once a token waits, requeue', async () => {
    const id = await completion('C-ex-parked');
    await relayOne(relayDeps(new Date(Date.now() + 25 * HOUR)), id);
    expect(await status(id)).toBe('PARKED');
    const before = await explained(id);
    expect(before.because[0]).toContain('no token waited for it within the buffer window (24 h from its receipt)');
    expect(before.next.join('\n')).toContain('start the process for C-ex-parked');
    await waitingOrder('C-ex-parked');
    expect((await explained(id)).next).toEqual([`npx inbox requeue ${id}`]);
  });

  test('AMBIGUOUS_CORRELATION: the waiting tokens, cancel one, then requeue', async () => {
    const instanceId = await waitingOrder('C-ex-twin');
    await moveToken(db, engine, {
      processInstanceId: instanceId,
      executionId: null,
      activityId: 'waitForCompletion',
      force: true,
      now: new Date(),
    });
    const id = await completion('C-ex-twin');
    await relayOne(relayDeps(new Date()), id);
    const e = await explained(id);
    expect(e).toMatchObject({ status: 'PARKED', reason: 'AMBIGUOUS_CORRELATION' });
    expect(e.waiting).toHaveLength(2);
    expect(e.next).toEqual([
      'decide which token is wrong, then npx inbox repair cancel-token --instance I --execution E',
      `then npx inbox requeue ${id}`,
    ]);
  });

  test('INVALID_PAYLOAD: the validation error, and no requeue', async () => {
    const res = await request(testReceiver(db).server)
      .post('/')
      .send(envelope({ data: Buffer.from('not json').toString('base64'), attributes: { eventType: 'TaskCompleted' } }));
    const e = await explained(res.body.id as string);
    expect(e.reason).toBe('INVALID_PAYLOAD');
    expect(e.because[0]).toMatch(/^the message could not be read: /);
    expect(e.next.join('\n')).not.toContain('requeue');
    expect(e.next.join('\n')).toContain('republish');
  });

  test("MANUAL: the operator's text, requeue if it should be processed", async () => {
    const id = await completion('C-ex-manual');
    expect((await cli('park', id, '--reason', 'test message')).code).toBe(0);
    const e = await explained(id);
    expect(e.because).toEqual(['parked by an operator: test message']);
    expect(e.next).toEqual([`if it should be processed after all: npx inbox requeue ${id}`]);
  });
});

describe('inbox explain: DONE', () => {
  test('by the relay: the instance, and when', async () => {
    const instanceId = await waitingOrder('C-ex-done');
    const id = await completion('C-ex-done');
    await relayOne(relayDeps(new Date()), id);
    const e = await explained(id);
    expect(e.summary).toMatch(new RegExp(`^DONE: correlated into instance ${instanceId} \\(now RUNNING\\) at \\d{4}-`));
    expect(e.because[0]).toBe('correlated by the relay: a token was waiting when the relay looked');
  });

  test('from the buffer: the message came first and the waiting point took it', async () => {
    const id = await completion('C-ex-buffer');
    const instanceId = await waitingOrder('C-ex-buffer');
    expect(await status(id)).toBe('DONE');
    const e = await explained(id);
    expect(e.summary).toContain(`correlated into instance ${instanceId}`);
    expect(e.because[0]).toContain('from the buffer');
  });

  test('an unknown id is refused with exit 1', async () => {
    const r = await cli('explain', 'f'.repeat(40));
    expect(r.code).toBe(1);
    expect(r.err).toContain('no inbox document');
  });
});
