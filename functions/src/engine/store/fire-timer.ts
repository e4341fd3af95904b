import { computeStep } from '../../core/errors';
import type { Firestore } from '@google-cloud/firestore';
import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine';
import type { TimerState } from '../state';
import { fireTimer, timerIsLive } from '../timer-transitions';
import {
  applyAndSettle,
  loadExecution,
  loadInstance,
  loadTokens,
  NOTHING_SETTLED,
  type Settled,
  stillPending,
} from './apply';
import { plain, refs } from './collections';
import { asTimer, firedTimerDoc } from './timers';
import { runUnitOfWork, type UnitStats } from './unit-of-work';
import { modelOf } from './versions';

/**
 * How early a timer may fire: a Cloud Task dispatched by a clock a little
 * ahead of ours is accepted up to this much before `dueAt`; earlier, the
 * firing is NOT_DUE and the caller has Cloud Tasks come back.
 */
export const TIMER_EARLY_TOLERANCE_MS = 1_000;

/**
 * Outcome of firing a timer. Only FIRED changed the process:
 * - NOT_FOUND: no such timer (its token left without it: deleted then);
 * - ALREADY_FIRED: fired before (a duplicate delivery, or a re-run of a
 *   transaction whose commit landed);
 * - STALE: its token is gone or no longer waits with it; the document is deleted;
 * - NOT_DUE: more than {@link TIMER_EARLY_TOLERANCE_MS} early (clock skew); nothing changed.
 */
export type TimerFiring = Settled & {
  readonly status: 'FIRED' | 'ALREADY_FIRED' | 'NOT_FOUND' | 'STALE' | 'NOT_DUE';
  /** The timer as read (FIRED: as written); absent for NOT_FOUND. */
  readonly timer?: TimerState;
};

/**
 * What a firing records on its FIRED timer: the call that fired it and what
 * that created, so a re-run of the same call after a commit that landed but
 * reported an error finds its own firing and dispatches what it created
 * (as a start finds its `startRequestId`), where another call's firing is
 * ALREADY_FIRED (that call dispatched its own).
 */
interface FiringRecord {
  readonly id: string;
  readonly jobIds: readonly string[];
  readonly timerIds: readonly string[];
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The firing record on a stored timer, or null (a timer fired before firings were recorded, or not FIRED). */
function firingOf(data: Readonly<Record<string, unknown>>): FiringRecord | null {
  const firing = data.firing;
  if (typeof firing !== 'object' || firing === null) return null;
  const { id, jobIds, timerIds } = firing as Record<string, unknown>;
  return typeof id === 'string' ? { id, jobIds: strings(jobIds), timerIds: strings(timerIds) } : null;
}

/**
 * Fires a timer in one transaction that reads by id only: the timer, its
 * instance and its token. A message or a job that moved the token on
 * first has deleted the timer (NOT_FOUND) or left it behind (STALE); a
 * timer that wins writes itself FIRED in the same transaction as the
 * token's move, so the loser finds no waiting point, or a stale job.
 * Dispatch `jobs` and `timers` after the commit, as for every Settled: a
 * re-run of this call that finds its own firing landed reports FIRED with
 * what it created and is still PENDING (see {@link FiringRecord}).
 */
export async function fireTimerRun(
  db: Firestore,
  engine: Engine,
  timerIdValue: string,
  now: Date,
): Promise<TimerFiring> {
  return (await fireTimerCounted(db, engine, timerIdValue, now)).result;
}

/** {@link fireTimerRun} with the transaction's read and write counts (docs/data-model.md quotes them). */
export async function fireTimerCounted(
  db: Firestore,
  engine: Engine,
  timerIdValue: string,
  now: Date,
): Promise<{ result: TimerFiring; stats: UnitStats }> {
  // One id per call, the same for every attempt of its transaction.
  const firingId = randomUUID();
  return runUnitOfWork(db, async (uow): Promise<TimerFiring> => {
    const ref = refs.timer(db, timerIdValue);
    const data = await uow.get(ref);
    if (data === undefined) return { ...NOTHING_SETTLED, status: 'NOT_FOUND' };
    const timer = asTimer(data);
    if (timer.status === 'FIRED') {
      const own = firingOf(data);
      if (own?.id !== firingId) return { ...NOTHING_SETTLED, status: 'ALREADY_FIRED', timer };
      // This call's own commit landed on an earlier attempt: report it as fired, with what it created still to dispatch.
      return {
        ...NOTHING_SETTLED,
        ...(await stillPending(uow, timer.processInstanceId, own.jobIds, own.timerIds)),
        status: 'FIRED',
        timer,
      };
    }
    if (now.getTime() < timer.dueAt.getTime() - TIMER_EARLY_TOLERANCE_MS)
      return { ...NOTHING_SETTLED, status: 'NOT_DUE', timer };
    const instance = await loadInstance(uow, timer.processInstanceId);
    const execution = await loadExecution(uow, timer.processInstanceId, timer.executionId);
    if (instance === null || execution === null || !timerIsLive(execution, timer)) {
      uow.delete(ref);
      return { ...NOTHING_SETTLED, status: 'STALE', timer };
    }
    const tokens = await loadTokens(uow, instance.id);
    const model = await modelOf(uow, engine, instance);
    const t = computeStep(`firing timer ${timer.id} of ${timer.activityId}`, () =>
      fireTimer(model, engine.sync, { instance, execution, timer, tokens }, now),
    );
    const settled = await applyAndSettle(uow, engine, t, now);
    const firing: FiringRecord = {
      id: firingId,
      jobIds: settled.jobs.map((j) => j.id),
      timerIds: settled.timers.map((x) => x.id),
    };
    uow.set(ref, { ...plain(firedTimerDoc(t.timer, now)), firing });
    return { ...settled, status: 'FIRED', timer: t.timer };
  });
}
