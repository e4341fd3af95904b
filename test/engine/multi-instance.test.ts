import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { STORED } from '../../functions/src/engine/store/converters';
import type { InstanceState, JobState } from '../../functions/src/engine/state';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { freshFirestores } from '../support/firestore';
import { tokensOf } from '../support/process-state';

/**
 * Multi-instance activities through the Firestore store on the emulator
 * (test/fixtures/bpmn-items/): a parallel inspection of every part, with a
 * one-day timer on it, and a sequential round of approvers that stops at
 * the first yes. Each item is an instance of its own; the caller's
 * document is written when the activity starts and ends.
 */
const BPMN_DIR = join(__dirname, '..', 'fixtures', 'bpmn-items');
const DAY = 86_400_000;
const fresh = freshFirestores();
const { db } = fresh.project('multi-instance');
let engine: Engine;

beforeAll(async () => {
  engine = await loadEngine(BPMN_DIR, {}, new Set(['inspect', 'ask']), inboxBuffer(7 * DAY));
});

const instance = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState;
const itemsOf = async (callerId: string): Promise<InstanceState[]> =>
  (await db.collection(COLLECTIONS.instances).where('calledBy.instanceId', '==', callerId).get()).docs.map(
    (d) => d.data() as InstanceState,
  );

/** Runs every job, and those their completions start, in `order` (the job's item index → result); returns how many ran. */
async function runAll(
  first: readonly JobState[],
  result: (item: InstanceState) => Record<string, unknown>,
  pick: (queue: JobState[]) => JobState = (q) => q.shift() as JobState,
): Promise<number> {
  const queue = [...first];
  let ran = 0;
  while (queue.length > 0) {
    const job = pick(queue);
    const item = await instance(job.processInstanceId);
    const done = await completeJobCounted(db, engine, job, result(item), new Date());
    expect(done.result.status).toBe('COMPLETED');
    if (done.result.status === 'COMPLETED') queue.push(...done.result.jobs);
    ran += 1;
  }
  return ran;
}

describe('multi-instance activities on the emulator', () => {
  test('parallel: every part is inspected once, in windows, and the verdicts come back in item order', async () => {
    const parts = Array.from({ length: 130 }, (_, i) => `P-${i}`);
    const s = await startProcessInstance(db, engine, {
      processKey: 'fixture-inspection',
      businessKey: 'INS-1',
      variables: { parts },
      now: new Date(),
    });
    const id = s.instance.id;
    // 130 items over 7 counting documents, 14 at once each: 98 start with the activity.
    expect(s.jobs).toHaveLength(98);
    expect((await tokensOf(db, id)).find((t) => t.activityId === 'inspect')).toMatchObject({
      status: 'WAITING_ITEMS',
      items: { total: 130, shards: 7, window: 14 },
    });
    // Last in, first out: items end out of order.
    const ran = await runAll(
      s.jobs,
      (item) => ({ verdict: `ok:${String(item.variables.part)}` }),
      (q) => q.pop() as JobState,
    );
    expect(ran).toBe(130);
    const done = await instance(id);
    expect(done).toMatchObject({ status: 'COMPLETED' });
    expect(done.variables.verdicts).toEqual(parts.map((p) => `ok:${p}`));
    // Nothing an item sets comes back but its output.
    expect(done.variables).not.toHaveProperty('verdict');
    expect(done.variables).not.toHaveProperty('part');
    expect((await itemsOf(id)).map((i) => i.status)).toEqual(Array(130).fill('COMPLETED'));
    expect(
      (await db.collection(COLLECTIONS.itemBatches).get()).docs.filter((d) => d.get('batch') !== undefined),
    ).toHaveLength(0);
    expect((await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get()).size).toBe(0);
  });

  test('the timer on it terminates every item still running; their jobs go stale', async () => {
    const s = await startProcessInstance(db, engine, {
      processKey: 'fixture-inspection',
      businessKey: 'INS-2',
      variables: { parts: ['A', 'B', 'C'] },
      now: new Date(),
    });
    const id = s.instance.id;
    const first = s.jobs[0] as JobState;
    expect((await completeJobCounted(db, engine, first, { verdict: 'ok' }, new Date())).result.status).toBe(
      'COMPLETED',
    );
    const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get();
    const fired = await fireTimerRun(db, engine, timers.docs[0]?.id as string, new Date(Date.now() + 2 * DAY));
    expect(fired.status).toBe('FIRED');
    const items = await itemsOf(id);
    expect(items.filter((i) => i.terminated !== undefined)).toHaveLength(2);
    expect(await instance(id)).toMatchObject({ status: 'COMPLETED' });
    expect((await tokensOf(db, id)).find((t) => t.activityId === 'gaveUp')?.status).toBe('ENDED');
    const late = await completeJobCounted(db, engine, s.jobs[1] as JobState, { verdict: 'late' }, new Date());
    expect(late.result.status).not.toBe('COMPLETED');
    expect((await db.collection(COLLECTIONS.itemBatches).where('batch', '!=', '').get()).size).toBe(0);
  });

  test('sequential with a completion condition: one approver at a time, the first yes ends it', async () => {
    const s = await startProcessInstance(db, engine, {
      processKey: 'fixture-approval',
      businessKey: 'APP-1',
      variables: { approvers: ['ana', 'ben', 'cy', 'dee'] },
      now: new Date(),
    });
    const id = s.instance.id;
    expect(s.jobs).toHaveLength(1);
    const asked: string[] = [];
    await runAll(s.jobs, (item) => {
      asked.push(String(item.variables.approver));
      return { approved: item.variables.approver === 'cy' };
    });
    expect(asked).toEqual(['ana', 'ben', 'cy']);
    expect((await instance(id)).variables.answers).toEqual([false, false, true, null]);
    expect(await instance(id)).toMatchObject({ status: 'COMPLETED' });
    expect(await itemsOf(id)).toHaveLength(3);
  });

  test('an empty collection passes on at once with an empty output', async () => {
    const s = await startProcessInstance(db, engine, {
      processKey: 'fixture-inspection',
      businessKey: 'INS-3',
      variables: { parts: [] },
      now: new Date(),
    });
    expect(s.jobs).toEqual([]);
    expect(await instance(s.instance.id)).toMatchObject({ status: 'COMPLETED', variables: { verdicts: [] } });
  });
});
