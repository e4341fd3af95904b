import request from 'supertest';
import { findDocuments } from '../../functions/src/cli/list-command';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { relayOne } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { envelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { cliFor, fakeTerminal } from './run-cli';

/**
 * Operator CLI behaviour beyond the walk-through in cli.test.ts: errors and
 * exit codes, dry runs that read what they name, paging, table output and
 * the progress bar. One project on the emulator for the whole file.
 */
const { db, projectId } = freshFirestores().project('cli-ops');
const cli = cliFor(projectId);
let engine: Engine;
const HOUR = 3_600_000;
const UNKNOWN = 'f'.repeat(40);

const doc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};
const ids = (value: unknown): string[] => (value as Array<{ id: string }>).map((d) => d.id);

/** A PARKED / NO_WAITING_INSTANCE document: relayed after the buffer window with nobody waiting. */
async function parkedNoWaiting(caseId: string): Promise<string> {
  const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload(caseId) });
  await relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
      retentionMs: 86_400_000,
      transactionTimeoutMs: 20_000,
      now: () => new Date(Date.now() + 25 * HOUR),
      random: () => 0.5,
    },
    id,
  );
  expect((await doc(id)).status).toBe('PARKED');
  return id;
}

async function post(payload: unknown): Promise<{ id: string; reason?: string }> {
  const res = await request(testReceiver(db).server)
    .post('/')
    .send(
      envelope({
        data: Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64'),
        attributes: { eventType: 'TaskCompleted' },
      }),
    );
  return res.body as { id: string; reason?: string };
}

beforeAll(async () => {
  engine = await fixtureEngine();
});

describe('unknown ids are refused with exit 1 and say what is missing', () => {
  test.each([
    [['park', UNKNOWN, '--reason', 'x'], `no inbox document ${UNKNOWN}`],
    [['requeue', UNKNOWN], `no inbox document ${UNKNOWN}`],
    [
      ['repair', 'move-token', '--instance', 'no-such-instance', '--activity', 'waitForCompletion'],
      'no process instance no-such-instance',
    ],
    [
      ['repair', 'cancel-token', '--instance', 'no-such-instance', '--execution', 'no-such-token'],
      'execution no-such-token is not a token of no-such-instance',
    ],
  ])('%j', async (args, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
  });
});

describe('bad values are usage errors (exit 2) naming the flag', () => {
  test.each([
    [['requeue', '--reason', 'SOMETIMES'], '--reason: expected one of INVALID_PAYLOAD'],
    [['requeue', '--reason', 'MANUAL', '--since', 'last tuesday'], '--since: expected an ISO-8601 time'],
    [['purge', '--done-before', 'soon'], '--done-before: expected an ISO-8601 time'],
    [['requeue', UNKNOWN, '--since', '2h'], 'requeue takes either IDs or --reason [--since], not both: drop --since'],
    [['requeue', UNKNOWN, '--reason', 'MANUAL', '--since', '2h'], 'drop --reason and --since'],
    [['requeue', '--since', '2h'], '--since filters a bulk requeue: it needs --reason'],
    [
      ['list', '--message-name', 'TaskCancelled'],
      '--message-name: expected one of TaskCompleted, TaskOpened (the registered message names)',
    ],
  ])('%j', async (args, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  test('a registered message name is accepted in any case', async () => {
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-ops-name') });
    const r = await cli('--json', 'list', '--message-name', 'taskcompleted', '--key', 'C-ops-name');
    expect(r.code).toBe(0);
    expect(ids(r.json())).toEqual([id]);
  });
});

describe('requeue', () => {
  test('--dry-run reads each id and applies the real checks: would requeue, would refuse (unknown, not PARKED, KEY_COLLISION), exit 1, nothing changed', async () => {
    const parked = await parkedNoWaiting('C-ops-dry');
    const open = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-ops-dry-open') });
    await post(completionPayload('C-ops-k', { eventId: 'ev-ops-k' }));
    const collision = await post(completionPayload('C-ops-k', { eventId: 'ev-ops-k', completedItems: 99 }));
    expect(collision.reason).toBe('KEY_COLLISION');

    const r = await cli('--json', 'requeue', parked, open, collision.id, UNKNOWN, '--dry-run');
    expect(r.code).toBe(1);
    const result = r.json() as { wouldRequeue: string[]; wouldRefuse: Array<{ id: string; why: string }> };
    expect(result.wouldRequeue).toEqual([parked]);
    expect(Object.fromEntries(result.wouldRefuse.map((x) => [x.id, x.why]))).toEqual({
      [open]: expect.stringContaining('is OPEN, only PARKED documents can be requeued'),
      [collision.id]: expect.stringContaining('KEY_COLLISION'),
      [UNKNOWN]: expect.stringContaining(`no inbox document ${UNKNOWN}`),
    });
    expect(r.err).toContain('3 of 4 documents would be refused');
    expect([(await doc(parked)).status, (await doc(collision.id)).status]).toEqual(['PARKED', 'PARKED']);

    const ok = await cli('requeue', parked, '--dry-run');
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(new RegExp(`${parked}.*requeue`));
    expect((await doc(parked)).status).toBe('PARKED');
  });

  test('the bulk --dry-run lists what the real run would refuse', async () => {
    const unreadable = await post('not json');
    const r = await cli('--json', 'requeue', '--reason', 'INVALID_PAYLOAD', '--dry-run');
    expect(r.code).toBe(1);
    const result = r.json() as { wouldRequeue: string[]; wouldRefuse: Array<{ id: string; why: string }> };
    expect(result.wouldRequeue).toEqual([]);
    expect(result.wouldRefuse).toEqual([{ id: unreadable.id, why: expect.stringContaining('unreadable') }]);
  });

  test('sets the document due now, and --since excludes documents parked before it', async () => {
    const recent = await parkedNoWaiting('C-ops-since-new');
    const old = await parkedNoWaiting('C-ops-since-old');
    await db
      .collection(INBOX)
      .doc(old)
      .update({ parkedAt: new Date(Date.now() - 3 * HOUR) });
    const before = Date.now();
    const r = await cli('requeue', '--reason', 'NO_WAITING_INSTANCE', '--since', '2h', '--yes');
    const after = Date.now();
    expect(r.code).toBe(0);
    expect((await doc(old)).status).toBe('PARKED');
    const requeued = await doc(recent);
    expect(requeued).toMatchObject({ status: 'OPEN', attempts: 0 });
    // "Due now": the relay's candidate query (nextAttemptAt <= now) picks it up on its next call.
    const due = (requeued.nextAttemptAt as { toMillis: () => number }).toMillis();
    expect(due).toBeGreaterThanOrEqual(before);
    expect(due).toBeLessThanOrEqual(after);
  });

  test('a requeued document gets a fresh buffer window, counted from the requeue, not from its receipt', async () => {
    // Received 30 h ago: the buffer window (24 h) counted from receipt is long gone.
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ops-fresh'),
      receivedAt: new Date(Date.now() - 30 * HOUR),
    });
    const relayAt = (at: Date) =>
      relayOne(
        {
          db,
          engine,
          policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
          retentionMs: 86_400_000,
          transactionTimeoutMs: 20_000,
          now: () => at,
          random: () => 0.5,
        },
        id,
      );
    await relayAt(new Date());
    expect((await doc(id)).reason).toBe('NO_WAITING_INSTANCE');
    expect((await cli('requeue', id)).code).toBe(0);
    // Nobody waits yet, one minute after the requeue: retried with backoff, not parked again at once.
    await relayAt(new Date(Date.now() + 60_000));
    expect(await doc(id)).toMatchObject({ status: 'OPEN', attempts: 1, reason: null });
    // Once the window has passed since the requeue, it is parked again, and the reason says from when it counted.
    await relayAt(new Date(Date.now() + 25 * HOUR));
    expect(await doc(id)).toMatchObject({
      status: 'PARKED',
      reason: 'NO_WAITING_INSTANCE',
      lastError: expect.stringContaining('since the requeue'),
    });
  });

  test('a bulk requeue draws a progress bar on a terminal, and none with --json', async () => {
    await parkedNoWaiting('C-ops-bar-1');
    await parkedNoWaiting('C-ops-bar-2');
    await db
      .collection(INBOX)
      .where('status', '==', 'PARKED')
      .where('reason', '==', 'NO_WAITING_INSTANCE')
      .get()
      .then(async (s) => {
        // Only these two are parked at or after --since below.
        for (const d of s.docs)
          if (!['C-ops-bar-1', 'C-ops-bar-2'].includes(d.get('correlationKey') as string))
            await d.ref.update({ parkedAt: new Date(Date.now() - 10 * HOUR) });
      });
    const terminal = fakeTerminal();
    const r = await cliFor(projectId, terminal.stream)(
      'requeue',
      '--reason',
      'NO_WAITING_INSTANCE',
      '--since',
      '1h',
      '--yes',
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('requeued 2 of 2');
    expect(terminal.drawn()).toContain('2/2');

    const quiet = fakeTerminal();
    await parkedNoWaiting('C-ops-bar-3');
    await parkedNoWaiting('C-ops-bar-4');
    expect(
      (
        await cliFor(projectId, quiet.stream)(
          '--json',
          'requeue',
          '--reason',
          'NO_WAITING_INSTANCE',
          '--since',
          '1h',
          '--yes',
        )
      ).code,
    ).toBe(0);
    expect(quiet.drawn()).toBe('');
  });
});

describe('list, show, stats and incidents', () => {
  test('--older-than pages through every match: an old document behind more than a page of newer ones is found', async () => {
    const newer = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        storePushed(db, { name: 'TaskCompleted', payload: completionPayload(`C-ops-page-${i}`) }),
      ),
    );
    const old = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ops-page-old'),
      receivedAt: new Date(Date.now() - 5 * HOUR),
    });
    const cutoff = Date.now() - 4 * HOUR;
    const isOld = (d: Record<string, unknown>): boolean =>
      d.receivedAt instanceof Date && d.receivedAt.getTime() <= cutoff;
    const paged = await findDocuments(db, { status: 'OPEN' }, 10, isOld, 2);
    expect(paged.docs.map((d) => d.id)).toEqual([old]);
    // Every OPEN document was read, two at a time.
    expect(paged.scanned).toBe((await db.collection(INBOX).where('status', '==', 'OPEN').count().get()).data().count);
    expect(paged.scanned).toBeGreaterThan(newer.length);
    expect(ids((await cli('--json', 'list', '--status', 'OPEN', '--older-than', '4h', '--limit', '1')).json())).toEqual(
      [old],
    );
  });

  test('list and stats print tables for people', async () => {
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-ops-table') });
    const listed = await cli('list', '--key', 'C-ops-table');
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/┌.*┐/);
    expect(listed.out).toMatch(/id\s*│\s*status\s*│\s*reason/);
    expect(listed.out).toContain(id);
    expect((await cli('list', '--key', 'C-nobody-at-all')).out).toBe('(none)');
    const stats = await cli('stats');
    expect(stats.code).toBe(0);
    for (const row of ['OPEN', 'DONE', 'PARKED', 'oldest OPEN (age)', 'instances in INCIDENT', 'FAILED jobs'])
      expect(stats.out).toContain(row);
  });

  test("show: the waiting points of the document's key", async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-ops-wait',
      variables: { caseId: 'C-ops-wait' },
      now: new Date(),
    });
    await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-ops-wait') });
    const r = await cli('--json', 'show', id);
    expect(r.json()).toMatchObject({
      waitingPoints: [
        { processInstanceId: started.instance.id, messageName: 'TaskCompleted', activityId: 'waitForCompletion' },
      ],
    });
    const table = await cli('show', id);
    expect(table.out).toContain(`TaskCompleted at waitForCompletion (instance ${started.instance.id})`);
  });

  test('incidents lists FAILED jobs, and stats counts them', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-ops-failed',
      variables: { caseId: 'C-ops-failed' },
      now: new Date(),
    });
    const job = started.jobs[0]!;
    await recordJobFailure(db, job, 'provider answered 500', 1, new Date());
    const r = await cli('--json', 'incidents');
    expect(r.code).toBe(0);
    const result = r.json() as {
      incidents: Array<{ instance: string; reason: string }>;
      failedJobs: Array<{ id: string; processInstanceId: string; lastError: string }>;
    };
    expect(result.failedJobs).toEqual([
      expect.objectContaining({
        id: job.id,
        processInstanceId: started.instance.id,
        lastError: 'provider answered 500',
      }),
    ]);
    expect(result.incidents.filter((i) => i.instance === started.instance.id).map((i) => i.reason)).toContain(
      'JOB_FAILED',
    );
    expect((await cli('incidents')).out).toContain(`job ${job.id}: provider answered 500`);
    expect((await cli('--json', 'stats')).json()).toMatchObject({ failedJobs: 1, openIncidents: 1 });
  });
});
