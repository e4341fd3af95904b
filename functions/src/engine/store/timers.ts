/**
 * How a timer is stored: `timers/{timerId}` holds the TimerState plus the
 * store's own fields (docs/data-model.md, timers):
 * - `shard`: 0..STATE_SHARDS-1 from the id, so the sweep queries shard by shard;
 * - `horizon`: NEAR when due within {@link TIMER_HORIZON_MS} of the time it
 *   was written (its Cloud Task is created after the commit), FAR beyond
 *   (no task yet: the sweep creates it once the timer comes within the
 *   horizon and sets NEAR);
 * - `expireAt` (FIRED only): when the TTL policy on `timers.expireAt` may
 *   delete the record. A cancelled timer is deleted at once, in the
 *   transaction in which its token leaves.
 */
import type { TimerState } from '../state';
import { shardOf } from './collections';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How far ahead a timer's Cloud Task is created: Cloud Tasks refuses a
 * scheduleTime more than 30 days ahead; one day less leaves room for clock
 * skew and a sweep that runs late.
 */
export const TIMER_HORIZON_MS = 29 * DAY_MS;

/** How long a FIRED timer is kept as a record (the default retention of DONE inbox documents). */
export const FIRED_TIMER_RETENTION_MS = 7 * DAY_MS;

export type TimerHorizon = 'NEAR' | 'FAR';

/** A stored timer: the engine's TimerState and the store's fields. */
export interface TimerDoc extends TimerState {
  readonly shard: number;
  readonly horizon: TimerHorizon;
  /** FIRED timers only: the TTL field. */
  readonly expireAt?: Date;
}

/** NEAR when due within the horizon of `now` (overdue ones included). */
export const horizonOf = (dueAt: Date, now: Date): TimerHorizon =>
  dueAt.getTime() - now.getTime() <= TIMER_HORIZON_MS ? 'NEAR' : 'FAR';

/** The document of a new PENDING timer, written at `now`. */
export function pendingTimerDoc(timer: TimerState, now: Date): TimerDoc {
  return { ...timer, shard: shardOf(timer.id), horizon: horizonOf(timer.dueAt, now) };
}

/** The document of a fired timer: kept for {@link FIRED_TIMER_RETENTION_MS}, then the TTL policy removes it. */
export function firedTimerDoc(timer: TimerState, now: Date): TimerDoc {
  return {
    ...timer,
    status: 'FIRED',
    firedAt: timer.firedAt ?? now,
    shard: shardOf(timer.id),
    horizon: horizonOf(timer.dueAt, now),
    expireAt: new Date(now.getTime() + FIRED_TIMER_RETENTION_MS),
  };
}

/** The engine's view of a stored timer: the TimerState fields only (the store's fields stay in the store). */
export function asTimer(data: Record<string, unknown>): TimerState {
  const d = data as unknown as TimerState;
  return {
    id: d.id,
    processInstanceId: d.processInstanceId,
    executionId: d.executionId,
    activityId: d.activityId,
    waitingAt: d.waitingAt,
    step: d.step,
    dueAt: d.dueAt,
    occurrence: d.occurrence,
    repetitionsLeft: d.repetitionsLeft,
    intervalMs: d.intervalMs,
    status: d.status,
    createdAt: d.createdAt,
    firedAt: d.firedAt,
  };
}

/** The timers whose Cloud Task the caller creates after the commit: those due within the horizon. */
export const nearTimers = (timers: readonly TimerState[], now: Date): TimerState[] =>
  timers.filter((t) => horizonOf(t.dueAt, now) === 'NEAR');
