import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { correlate } from '../../functions/src/engine/store/correlate';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { listWaiting } from '../../functions/src/operations/waiting';
import { readAllWaitingGauges, USER_TASKS_GAUGE } from '../../functions/src/relay/gauges';
import { freshFirestores } from '../support/firestore';
import { operationsDepsFor } from '../support/operations';
import { tokensOf } from '../support/process-state';

/**
 * Message boundary events and event subprocesses through the Firestore store
 * on the emulator (test/fixtures/bpmn-standby/fixture-standby.bpmn): their
 * waiting points are standby points in the key document, correlated like
 * any other but left out of the waiting gauges' fields and `inbox waiting`,
 * which watch the waits a process cannot go on without (here: the review,
 * which is a user task, not a message wait).
 */
const BPMN_DIR = join(__dirname, '..', 'fixtures', 'bpmn-standby');
const fresh = freshFirestores();
const { db, projectId } = fresh.project('standby-points');
let engine: Engine;

beforeAll(async () => {
  engine = await loadEngine(BPMN_DIR, {}, new Set());
});

const send = (messageName: string, correlationKey: string, messageId: string) =>
  runUnitOfWork(db, (uow) =>
    correlate(uow, engine, { messageName, correlationKey, variables: {}, now: new Date(), messageId }),
  ).then((r) => r.result);

describe('standby points on the emulator', () => {
  test('the key document holds both standby points, the gauges and inbox waiting see neither', async () => {
    const s = await startProcessInstance(db, engine, {
      processKey: 'fixture-standby',
      businessKey: 'S-1',
      variables: { caseId: 'S-1' },
      now: new Date(),
    });
    const key = (await refs.correlationKey(db, 'S-1').get()).data();
    expect(
      (key?.waiting as Array<{ messageName: string; standby?: boolean }>).map((w) => [w.messageName, w.standby]),
    ).toEqual([
      ['CaseNote', true],
      ['CaseWithdrawn', true],
    ]);
    expect(key?.waitingFor).toEqual([]);
    expect(key?.waitingSince).toBeUndefined();
    const { deps } = operationsDepsFor(db, projectId, engine);
    const page = await listWaiting(deps, { messageName: null, olderThanMs: null }, { size: 50, after: null });
    expect(page.waitingPoints.filter((p) => p.instanceId === s.instance.id)).toEqual([]);
    // The review is watched instead: the user-task gauge counts it once it is older than the threshold (0 days here).
    const gauges = await readAllWaitingGauges(db, engine, 0, new Date(Date.now() + 1_000));
    expect(gauges).toEqual([
      {
        messageName: USER_TASKS_GAUGE,
        oldestWaitingAgeSeconds: expect.any(Number),
        waitingOverThreshold: 1,
        thresholdDays: 0,
      },
    ]);
    expect((await readAllWaitingGauges(db, engine, 1, new Date()))[0]?.waitingOverThreshold).toBe(0);
  });

  test('a note runs the event subprocess beside the review (twice, two notes); a withdrawal ends the review and the instance', async () => {
    const s = await startProcessInstance(db, engine, {
      processKey: 'fixture-standby',
      businessKey: 'S-2',
      variables: { caseId: 'S-2' },
      now: new Date(),
    });
    expect((await send('CaseNote', 'S-2', 'inbox-note-1')).kind).toBe('CORRELATED');
    expect((await send('CaseNote', 'S-2', 'inbox-note-2')).kind).toBe('CORRELATED');
    const afterNotes = await tokensOf(db, s.instance.id);
    expect(afterNotes.filter((t) => t.activityId === 'noteKept' && t.status === 'ENDED')).toHaveLength(2);
    expect((await refs.instance(db, s.instance.id).get()).get('status')).toBe('RUNNING');

    expect((await send('CaseWithdrawn', 'S-2', 'inbox-withdrawn')).kind).toBe('CORRELATED');
    expect((await refs.instance(db, s.instance.id).get()).get('status')).toBe('COMPLETED');
    const tasks = await db.collection(COLLECTIONS.userTasks).where('processInstanceId', '==', s.instance.id).get();
    expect(tasks.docs.map((d) => d.get('cancelReason'))).toEqual(['message boundary event withdrawn']);
    // Nothing waits any more: the key document is gone, a late note finds nobody.
    expect((await refs.correlationKey(db, 'S-2').get()).exists).toBe(false);
    expect((await send('CaseNote', 'S-2', 'inbox-note-3')).kind).toBe('NO_WAITING_INSTANCE');
  });
});
