import request from 'supertest';
import { runCli } from '../../functions/src/cli/main';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
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
import { FIXTURE_ENV } from '../support/app';

const { db, projectId } = freshFirestores().project('cli');
let engine: Engine;
const ids: Record<string, string> = {};
let twinInstance = '';
let singleInstance = '';

/** Runs the CLI in process, as `inbox ARGS`, against this test's project on the emulator. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string; json: () => unknown }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    args,
    { out: (t) => out.push(t), err: (t) => err.push(t), confirm: async () => false },
    { ...process.env, ...FIXTURE_ENV, GOOGLE_CLOUD_PROJECT: projectId },
  );
  return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) as unknown };
}

const relayDeps = (now: Date): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
  retentionMs: 86_400_000,
  transactionTimeoutMs: 20_000,
  now: () => now,
  random: () => 0.5,
});
const status = async (id: string): Promise<unknown> => (await db.collection(INBOX).doc(id).get()).get('status');

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

beforeAll(async () => {
  engine = await fixtureEngine();
  // PARKED / NO_WAITING_INSTANCE: nobody waited within the buffer window.
  ids.noWaiting = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-cli-a') });
  await relayOne(relayDeps(new Date(Date.now() + 25 * 3_600_000)), ids.noWaiting);
  // PARKED / INVALID_PAYLOAD, through the receiver.
  const invalid = await request(testReceiver(db).server)
    .post('/')
    .send(envelope({ data: Buffer.from('nope').toString('base64'), attributes: { eventType: 'TaskCompleted' } }));
  ids.invalid = invalid.body.id as string;
  // OPEN, and DONE.
  ids.open = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-cli-c') });
  await waitingOrder('C-cli-done');
  ids.done = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-cli-done') });
  await relayOne(relayDeps(new Date()), ids.done);
  // An instance with a double token (INCIDENT), and one with a single waiting token.
  twinInstance = await waitingOrder('C-cli-twin');
  await moveToken(db, engine, {
    processInstanceId: twinInstance,
    executionId: null,
    activityId: 'waitForCompletion',
    force: true,
    now: new Date(),
  });
  singleInstance = await waitingOrder('C-cli-single');
});

describe('inbox CLI against the emulator', () => {
  test('stats: counts by status and reason, oldest OPEN age', async () => {
    const r = await cli('--json', 'stats');
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      counts: { OPEN: 1, DONE: 1, PARKED: 2 },
      parkedByReason: { NO_WAITING_INSTANCE: 1, INVALID_PAYLOAD: 1 },
      oldestOpenAgeSeconds: expect.any(Number),
    });
    const table = await cli('stats');
    expect(table.out).toContain('PARKED NO_WAITING_INSTANCE');
  });

  test('list: filters; bad filters are a usage error naming the flag', async () => {
    const parked = await cli('--json', 'list', '--status', 'parked', '--reason', 'NO_WAITING_INSTANCE');
    expect((parked.json() as Array<{ id: string }>).map((d) => d.id)).toEqual([ids.noWaiting]);
    expect(
      ((await cli('--json', 'list', '--key', 'C-cli-c')).json() as Array<{ id: string }>).map((d) => d.id),
    ).toEqual([ids.open]);
    expect(
      ((await cli('--json', 'list', '--message-name', 'TaskCompleted', '--older-than', '1h')).json() as unknown[])
        .length,
    ).toBe(0);
    for (const [args, flag] of [
      [['list', '--status', 'LOST'], '--status'],
      [['list', '--older-than', 'yesterday'], '--older-than'],
      [['list', '--limit', '0'], '--limit'],
    ] as const) {
      const bad = await cli(...args);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain(flag);
    }
  });

  test('show: the document and its process state; an unknown id is an error', async () => {
    const r = await cli('--json', 'show', ids.done!);
    expect(r.json()).toMatchObject({
      document: { status: 'DONE', correlationKey: 'C-cli-done' },
      processInstances: [{ businessKey: 'C-cli-done' }],
    });
    expect((await cli('show', ids.invalid!)).out).toContain('INVALID_PAYLOAD');
    const unknown = await cli('show', 'f'.repeat(40));
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no inbox document');
  });

  test('requeue by id: PARKED back to OPEN, attempts 0, back in its lane; refused for the unreadable and the not parked', async () => {
    const r = await cli('requeue', ids.noWaiting!);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect((await db.collection(INBOX).doc(ids.noWaiting!).get()).data()).toMatchObject({
      status: 'OPEN',
      attempts: 0,
      reason: null,
      previousReason: 'NO_WAITING_INSTANCE',
    });
    expect(
      ((await refs.correlationKey(db, 'C-cli-a').get()).get('open') as Array<{ inboxId: string }>).map(
        (e) => e.inboxId,
      ),
    ).toEqual([ids.noWaiting]);
    expect((await cli('requeue', ids.noWaiting!)).code).toBe(1);
    const unreadable = await cli('requeue', ids.invalid!);
    expect(unreadable.code).toBe(1);
    expect(unreadable.err).toContain('unreadable');
    // A KEY_COLLISION is a second payload of an event the inbox holds: requeueing it would correlate the event twice.
    const receiver = testReceiver(db).server;
    await request(receiver)
      .post('/')
      .send(
        envelope({
          data: Buffer.from(JSON.stringify(completionPayload('C-cli-k', { eventId: 'ev-k' }))).toString('base64'),
          attributes: { eventType: 'TaskCompleted' },
        }),
      );
    const second = await request(receiver)
      .post('/')
      .send(
        envelope({
          data: Buffer.from(
            JSON.stringify(completionPayload('C-cli-k', { eventId: 'ev-k', completedItems: 99 })),
          ).toString('base64'),
          attributes: { eventType: 'TaskCompleted' },
        }),
      );
    expect(second.body).toMatchObject({ reason: 'KEY_COLLISION' });
    const collision = await cli('requeue', second.body.id as string);
    expect(collision.code).toBe(1);
    expect(collision.err).toContain('KEY_COLLISION');
    expect(await status(second.body.id as string)).toBe('PARKED');
  });

  test('bulk requeue asks first (and refuses without an answer), shows with --dry-run, runs with --yes', async () => {
    await relayOne(relayDeps(new Date(Date.now() + 50 * 3_600_000)), ids.noWaiting!);
    expect(await status(ids.noWaiting!)).toBe('PARKED');
    const asked = await cli('requeue', '--reason', 'NO_WAITING_INSTANCE');
    expect(asked.code).toBe(1);
    expect(await status(ids.noWaiting!)).toBe('PARKED');
    const dry = await cli('--json', 'requeue', '--reason', 'NO_WAITING_INSTANCE', '--since', '1d', '--dry-run');
    expect(dry.json()).toEqual({ wouldRequeue: [ids.noWaiting], wouldPark: [], wouldRefuse: [] });
    expect(await status(ids.noWaiting!)).toBe('PARKED');
    expect((await cli('requeue', '--reason', 'NO_WAITING_INSTANCE', '--yes')).code).toBe(0);
    expect(await status(ids.noWaiting!)).toBe('OPEN');
  });

  test('park: OPEN to PARKED / MANUAL with the reason, out of its lane', async () => {
    expect((await cli('park', ids.open!, '--reason', 'sender says: ignore')).code).toBe(0);
    expect((await db.collection(INBOX).doc(ids.open!).get()).data()).toMatchObject({
      status: 'PARKED',
      reason: 'MANUAL',
      lastError: 'sender says: ignore',
    });
    expect((await refs.correlationKey(db, 'C-cli-c').get()).exists).toBe(false);
    expect((await cli('park', ids.open!, '--reason', 'again')).code).toBe(1);
  });

  test('instances and incidents show the double token', async () => {
    const inst = (await cli('--json', 'instances', 'C-cli-twin')).json() as Array<{
      status: string;
      executions: unknown[];
    }>;
    expect(inst).toHaveLength(1);
    expect(inst[0]).toMatchObject({ status: 'INCIDENT' });
    expect(inst[0]!.executions).toHaveLength(2);
    const incidents = (await cli('--json', 'incidents')).json() as {
      incidents: Array<{ reason: string; instance: string }>;
    };
    expect(incidents.incidents.filter((i) => i.instance === twinInstance).map((i) => i.reason)).toContain(
      'DUPLICATE_WAITING_POINT',
    );
    expect((await cli('instances', 'C-nobody')).code).toBe(1);
  });

  test('repair move-token refuses a second waiting point unless --force; cancel-token removes one', async () => {
    const refused = await cli('repair', 'move-token', '--instance', singleInstance, '--activity', 'waitForCompletion');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('--force');
    const forced = await cli(
      '--json',
      'repair',
      'move-token',
      '--instance',
      singleInstance,
      '--activity',
      'waitForCompletion',
      '--force',
    );
    expect(forced.code).toBe(0);
    const executionId = (forced.json() as { executionId: string }).executionId;
    expect(((await refs.correlationKey(db, 'C-cli-single').get()).get('waiting') as unknown[]).length).toBe(2);
    expect((await cli('repair', 'cancel-token', '--instance', singleInstance, '--execution', executionId)).code).toBe(
      0,
    );
    expect(((await refs.correlationKey(db, 'C-cli-single').get()).get('waiting') as unknown[]).length).toBe(1);
  });

  test('purge deletes DONE documents processed before the time; unknown commands are usage errors', async () => {
    expect((await cli('--json', 'purge', '--done-before', '0s', '--force', '--dry-run')).json()).toEqual({
      wouldDelete: 1,
      offloaded: 0,
      chunked: 0,
      keptForInstance: 0,
      kept: [],
      scanned: 1,
    });
    expect((await cli('purge', '--done-before', '0s', '--force', '--yes')).code).toBe(0);
    expect((await db.collection(INBOX).doc(ids.done!).get()).exists).toBe(false);
    expect((await cli('frobnicate')).code).toBe(2);
    expect((await cli('purge')).code).toBe(2);
  });
});
