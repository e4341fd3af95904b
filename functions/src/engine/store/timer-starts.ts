/**
 * Timer start events: a process started on a schedule. `timerStarts/{id}`
 * (id: `id(["timer-start", processKey, activityId])`) holds each schedule's
 * next start; the timer sweep (sweepJobs, every minute) calls
 * {@link startDueByTimer} for every timer start event of the deployed models.
 * One transaction per start: it reads the schedule by id, starts the
 * instance whose business key is `ACTIVITY@DUE-TIME` (so a repeated sweep,
 * or a re-run after a commit that landed, finds it started) and moves the
 * schedule on. Missed starts (nothing swept for a while) start one instance,
 * for the latest missed time, not one per miss.
 */
import { computeStep } from '../../core/errors';
import type { Firestore } from '@google-cloud/firestore';
import { stableId } from '../../core/hash';
import type { ProcessModel, TimerStartEventNode } from '../../bpmn/model';
import { startSchedule } from '../../bpmn/timer';
import type { Engine } from '../engine';
import { executionId, instanceId } from '../ids';
import { startInstance } from '../transitions';
import { applyAndSettle, loadInstance, NOTHING_SETTLED, type Settled } from './apply';
import { runUnitOfWork } from './unit-of-work';

export const TIMER_STARTS = 'timerStarts';

/** A stored schedule. `text` is the timer as written: a model that changes it starts the schedule again. */
interface ScheduleDoc {
  readonly processKey: string;
  readonly activityId: string;
  readonly text: string;
  /** The next start; null once a bounded schedule is spent. */
  readonly nextAt: Date | null;
  /** Starts left after `nextAt`; null: for ever. */
  readonly left: number | null;
  readonly intervalMs: number | null;
  readonly updatedAt: Date;
}

/** What one call did: STARTED an instance (dispatch the Settled's jobs and timers), SCHEDULED a new schedule, or nothing due. */
export type TimerStartOutcome =
  | (Settled & { readonly kind: 'STARTED'; readonly processInstanceId: string; readonly businessKey: string })
  | { readonly kind: 'SCHEDULED'; readonly nextAt: Date | null }
  | { readonly kind: 'NOT_DUE' | 'SPENT' };

/** The timer start events of a model. */
export const timerStartsOf = (model: ProcessModel): TimerStartEventNode[] =>
  Object.values(model.nodes).filter((n): n is TimerStartEventNode => n.kind === 'timerStartEvent');

/** The next start after `at` that is later than `now` (missed ones skipped), with the starts left; null when spent. */
function after(doc: ScheduleDoc, at: Date, now: Date): { nextAt: Date | null; left: number | null } {
  if (doc.intervalMs === null || doc.left === 0) return { nextAt: null, left: 0 };
  const missed = Math.max(0, Math.floor((now.getTime() - at.getTime()) / doc.intervalMs));
  const steps = doc.left === null ? missed + 1 : Math.min(missed + 1, doc.left);
  const left = doc.left === null ? null : doc.left - steps;
  const nextAt = new Date(at.getTime() + steps * doc.intervalMs);
  return left !== null && left < 0 ? { nextAt: null, left: 0 } : { nextAt, left };
}

/** One schedule's due start, in one transaction (see the module's comment). */
export async function startDueByTimer(
  db: Firestore,
  engine: Engine,
  model: ProcessModel,
  event: TimerStartEventNode,
  now: Date,
): Promise<TimerStartOutcome> {
  const ref = db.collection(TIMER_STARTS).doc(stableId('timer-start', model.key, event.id));
  const text = event.timer.value ?? event.timer.text;
  const run = await runUnitOfWork(db, async (uow): Promise<TimerStartOutcome> => {
    const stored = (await uow.get(ref)) as ScheduleDoc | undefined;
    if (stored === undefined || stored.text !== text) {
      const schedule = startSchedule(event.timer.type, text, now);
      // The parser checked the text; a refusal here is a model that changed under a running function.
      if (!schedule.ok) throw new Error(`timer start event ${model.key}/${event.id}: ${schedule.error}`);
      const { firstAt, intervalMs, repetitions } = schedule.value;
      const doc: ScheduleDoc = {
        processKey: model.key,
        activityId: event.id,
        text,
        nextAt: firstAt,
        left: repetitions === null ? null : repetitions - 1,
        intervalMs,
        updatedAt: now,
      };
      uow.set(ref, { ...doc });
      return { kind: 'SCHEDULED', nextAt: firstAt };
    }
    if (stored.nextAt === null) return { kind: 'SPENT' };
    if (stored.nextAt.getTime() > now.getTime()) return { kind: 'NOT_DUE' };
    const businessKey = `${event.id}@${stored.nextAt.toISOString()}`;
    const id = instanceId(model.key, businessKey);
    uow.set(ref, { ...stored, ...after(stored, stored.nextAt, now), updatedAt: now });
    if ((await loadInstance(uow, id)) !== null)
      return { ...NOTHING_SETTLED, kind: 'STARTED', processInstanceId: id, businessKey };
    const t = computeStep(`starting ${model.key} by timer ${event.id}`, () =>
      startInstance(model, engine.sync, {
        instanceId: id,
        executionId: executionId(id, 'start'),
        businessKey,
        variables: {},
        now,
        startEventId: event.id,
      }),
    );
    return { ...(await applyAndSettle(uow, engine, t, now)), kind: 'STARTED', processInstanceId: id, businessKey };
  });
  return run.result;
}
