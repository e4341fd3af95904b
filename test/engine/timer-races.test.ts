import { join } from 'node:path';
import type { Firestore } from '@google-cloud/firestore';
import { Engine } from '../../functions/src/engine/engine';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { executionId, instanceId } from '../../functions/src/engine/ids';
import type { ExecutionState } from '../../functions/src/engine/state';
import { applyAndSettle } from '../../functions/src/engine/store/apply';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { correlate } from '../../functions/src/engine/store/correlate';
import { fireTimerCounted, fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { startInstance } from '../../functions/src/engine/transitions';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { freshFirestores } from '../support/firestore';
import { findToken, jobsOf } from '../support/process-state';
import { waitingPointsOf } from '../support/waiting';

const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn');
const DAY = 24 * 3_600_000;
const ROUNDS = 8;
const db = freshFirestores()('engine-timer-races');
let engine: Engine;

beforeAll(async () => {
  engine = new Engine(
    [await loadProcessModel(join(FIXTURES, 'timer-paths.bpmn'))],
    {},
    new Set(['handOver', 'settle', 'escalate']),
    inboxBuffer(7 * DAY),
  );
});

/**
 * A call as production makes it: Cloud Tasks redelivers a fireTimer or
 * runJob call that failed, and the relay retries a correlation that failed.
 * Concurrent transactions on the emulator sometimes fail with INVALID_ARGUMENT
 * ("Transaction is invalid or closed") under load; what must hold is the
 * outcome once every call has gone through.
 */
async function redelivered<T>(call: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= attempts) throw err;
    }
  }
}

const only = <T>(items: readonly T[]): T => {
  expect(items).toHaveLength(1);
  return items[0] as T;
};
const message = (key: string) => ({
  messageName: 'TaskCompleted',
  correlationKey: key,
  variables: { completedItems: 2 },
  now: new Date(),
});
const correlateRun = async (store: Firestore, e: Engine, key: string) =>
  runUnitOfWork(store, (uow) => correlate(uow, e, message(key)));
const docs = async (store: Firestore, collection: string, instance: string): Promise<Array<Record<string, unknown>>> =>
  (await store.collection(collection).where('processInstanceId', '==', instance).get()).docs.map((d) => d.data());

async function atHandOver(key: string) {
  const started = await startProcessInstance(db, engine, {
    processKey: 'timer-paths',
    businessKey: key,
    variables: { caseId: key },
    now: new Date(),
  });
  return {
    id: started.instance.id,
    job: only(started.jobs),
    deadline: only(started.timers),
    token: executionId(started.instance.id, 'start'),
  };
}

/** What the store holds for one instance, and which of the two paths it took. */
async function pathOf(id: string, token: string) {
  const jobs = (await jobsOf(db, id)).map((j) => j.activityId);
  const pending = (await docs(db, COLLECTIONS.timers, id))
    .filter((t) => t.status === 'PENDING')
    .map((t) => String(t.activityId));
  const subscriptions = await waitingPointsOf(db, id);
  const execution = (await findToken(db, token)) as ExecutionState;
  const escalated = jobs.includes('escalate');
  const settled = jobs.includes('settle');
  return { escalated, settled, jobs, pending, subscriptions, execution };
}

describe('timer races on the Firestore emulator', () => {
  test(`a message and the overdue timer at the gateway, ${ROUNDS} times at once: exactly one path each time`, async () => {
    const outcomes = await Promise.all(
      Array.from({ length: ROUNDS }, async (_, i) => {
        const key = `C-race-${i}`;
        const { id, job, token } = await atHandOver(key);
        const overdue = only((await completeJobRun(db, engine, job, {}, new Date())).timers);
        const [message, timer] = await Promise.all([
          redelivered(() => correlateRun(db, engine, key)),
          redelivered(() => fireTimerRun(db, engine, overdue.id, overdue.dueAt)),
        ]);
        return { id, token, message: message.result.kind, timer: timer.status };
      }),
    );
    for (const { id, token, message, timer } of outcomes) {
      expect([message, timer].sort()).toEqual(
        message === 'CORRELATED' ? ['CORRELATED', 'NOT_FOUND'] : ['FIRED', 'NO_WAITING_INSTANCE'],
      );
      const path = await pathOf(id, token);
      expect(path.escalated).toBe(timer === 'FIRED');
      expect(path.settled).toBe(message === 'CORRELATED');
      expect(path.pending).toEqual([]);
      expect(path.subscriptions).toEqual([]);
      expect(path.execution.activityId).toBe(timer === 'FIRED' ? 'escalate' : 'settle');
    }
  });

  test(`a correlation, the hand-over job and its deadline for one instance at the same moment, ${ROUNDS} times: always consistent`, async () => {
    const outcomes = await Promise.all(
      Array.from({ length: ROUNDS }, async (_, i) => {
        const key = `C-three-${i}`;
        const { id, job, deadline, token } = await atHandOver(key);
        const [message, done, timer] = await Promise.all([
          redelivered(() => correlateRun(db, engine, key)),
          redelivered(() => completeJobRun(db, engine, job, {}, new Date())),
          redelivered(() => fireTimerRun(db, engine, deadline.id, deadline.dueAt)),
        ]);
        return { id, token, message: message.result.kind, job: done.status, timer: timer.status };
      }),
    );
    for (const { id, token, message, job, timer } of outcomes) {
      const path = await pathOf(id, token);
      if (timer === 'FIRED') {
        // The deadline won: the token left through the boundary event and the firing ended the job (stale); the message found nobody.
        expect({ job, message }).toEqual({ job: 'ALREADY_FINISHED', message: 'NO_WAITING_INSTANCE' });
        expect(path).toMatchObject({ escalated: true, settled: false, pending: [], subscriptions: [] });
        expect(path.execution).toMatchObject({ activityId: 'escalate', status: 'WAITING_JOB' });
      } else {
        expect({ job, timer }).toEqual({ job: 'COMPLETED', timer: 'NOT_FOUND' });
        expect(path.escalated).toBe(false);
        if (message === 'CORRELATED') {
          expect(path).toMatchObject({ settled: true, pending: [], subscriptions: [] });
        } else {
          // The message came before the gateway waited: the token waits with its message branch and overdue timer.
          expect(message).toBe('NO_WAITING_INSTANCE');
          expect(path).toMatchObject({ settled: false, pending: ['overdue'] });
          expect(path.subscriptions).toHaveLength(1);
          expect(path.execution.status).toBe('WAITING_EVENT');
        }
      }
    }
  });

  test('what a timer costs in reads and writes (UnitOfWork stats)', async () => {
    // The fixture process as it was before its deadline timer: the same steps without one.
    const plain = new Engine(
      [await loadProcessModel(join(FIXTURES, 'fixture-plain.bpmn'))],
      {},
      new Set(['handOver', 'settle']),
      inboxBuffer(7 * DAY),
    );
    const start = (e: Engine, processKey: string, key: string) => {
      const id = instanceId(processKey, key);
      const t = startInstance(
        e.model(processKey),
        {},
        {
          instanceId: id,
          executionId: executionId(id, 'start'),
          businessKey: key,
          variables: { caseId: key },
          now: new Date(),
        },
      );
      return runUnitOfWork(db, (uow) => applyAndSettle(uow, e, t, new Date()));
    };
    // Setting a timer: the start of a task with a boundary timer against the same start without one (the instance read
    // is the store's look at the document it writes its tokens and jobs into; startProcess has read it already).
    const withTimer = await start(engine, 'timer-paths', 'C-cost-1');
    const without = await start(plain, 'fixture-plain', 'C-cost-2');
    expect(withTimer.stats).toEqual({ reads: 1, writes: 2 });
    expect(without.stats).toEqual({ reads: 1, writes: 1 });

    // A message wins at the gateway against the same correlation at a plain catch event: one more write, the timer's delete.
    // (No eventSubscriptions delete in either: the waiting point lives in the key document alone.)
    await completeJobRun(db, engine, only(withTimer.result.jobs), {}, new Date());
    await completeJobRun(db, plain, only(without.result.jobs), {}, new Date());
    const gatewayWin = await correlateRun(db, engine, 'C-cost-1');
    const plainWin = await correlateRun(db, plain, 'C-cost-2');
    expect(gatewayWin.stats).toEqual({ reads: 2, writes: 3 });
    expect(plainWin.stats).toEqual({ reads: 2, writes: 2 });

    // Firing: the interrupting deadline (timer and instance read; timer and instance written) and the gateway's timer (+ the key document, which holds the message branch's point).
    const deadline = await atHandOver('C-cost-3');
    expect((await fireTimerCounted(db, engine, deadline.deadline.id, deadline.deadline.dueAt)).stats).toEqual({
      reads: 2,
      writes: 2,
    });
    const gate = await atHandOver('C-cost-4');
    const overdue = only((await completeJobRun(db, engine, gate.job, {}, new Date())).timers);
    expect((await fireTimerCounted(db, engine, overdue.id, overdue.dueAt)).stats).toEqual({ reads: 3, writes: 3 });
  });
});
