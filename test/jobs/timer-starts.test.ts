import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { instanceId } from '../../functions/src/engine/ids';
import { refs } from '../../functions/src/engine/store/collections';
import { startDueByTimer, timerStartsOf } from '../../functions/src/engine/store/timer-starts';
import { freshFirestores } from '../support/firestore';

/**
 * Timer start events through the store on the emulator
 * (test/fixtures/bpmn-scheduled/fixture-scheduled.bpmn, `R/PT1H`): the
 * first sweep schedules, a sweep at the due time starts one instance with
 * the business key `ACTIVITY@DUE-TIME`, a second sweep then starts nothing,
 * and starts missed while nothing swept start once, not once per miss.
 */
const HOUR = 3_600_000;
const fresh = freshFirestores();
const { db } = fresh.project('timer-starts');
let engine: Engine;

beforeAll(async () => {
  engine = await loadEngine(join(__dirname, '..', 'fixtures', 'bpmn-scheduled'), {}, new Set());
});

test('schedule, start once when due, skip what was missed', async () => {
  const model = engine.model('fixture-scheduled');
  const [event] = timerStartsOf(model);
  if (event === undefined) throw new Error('no timer start event');
  const t0 = new Date('2026-12-06T08:00:00Z');
  const sweep = (at: number) => startDueByTimer(db, engine, model, event, new Date(t0.getTime() + at));

  expect(await sweep(0)).toEqual({ kind: 'SCHEDULED', nextAt: new Date(t0.getTime() + HOUR) });
  expect(await sweep(HOUR / 2)).toEqual({ kind: 'NOT_DUE' });
  const first = await sweep(HOUR + 5_000);
  expect(first).toMatchObject({ kind: 'STARTED', businessKey: 'hourly@2026-12-06T09:00:00.000Z' });
  const id = instanceId('fixture-scheduled', 'hourly@2026-12-06T09:00:00.000Z');
  expect((await refs.instance(db, id).get()).data()).toMatchObject({
    status: 'RUNNING',
    businessKey: 'hourly@2026-12-06T09:00:00.000Z',
  });
  expect(await sweep(HOUR + 10_000)).toEqual({ kind: 'NOT_DUE' });

  // Nothing swept from 10:00 to 12:30: one start, for 10:00; the next is 13:00.
  expect(await sweep(4.5 * HOUR)).toMatchObject({ kind: 'STARTED', businessKey: 'hourly@2026-12-06T10:00:00.000Z' });
  expect(await sweep(4.6 * HOUR)).toEqual({ kind: 'NOT_DUE' });
  expect(await sweep(5 * HOUR)).toMatchObject({ kind: 'STARTED', businessKey: 'hourly@2026-12-06T13:00:00.000Z' });
});
