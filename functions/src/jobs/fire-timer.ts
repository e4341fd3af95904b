import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import type { PushTokenVerifier } from '../auth/push-token';
import { classifyFailure, errorMessage, StepFailedError, storableText } from '../core/errors';
import type { Engine } from '../engine/engine';
import { failTimerRun } from '../engine/store/fail-timer';
import { fireTimerRun, type TimerFiring } from '../engine/store/fire-timer';
import { type Answer, answering, failureAnswer } from '../http/answer';
import { parseBody, refuseMethod, refuseToken } from '../http/request';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { dispatchSettled, logDuplicates } from './dispatch';

/** What fireTimer needs, passed in (tests build their own); fireTimerFunction (wiring.ts) builds it from the configuration. */
export interface FireTimerDeps {
  /** The Firestore client, created on the first call (keeps the SDK out of the cold start). */
  readonly db: () => Firestore;
  /** The deployed models, loaded on the first firing: the token takes the timer's path through its model. */
  readonly engine: () => Promise<Engine>;
  /** The jobs queue (INBOX_TASKS_QUEUE): the jobs a firing creates (the timer's path reaching an async step) go there after the commit. */
  readonly queue: () => JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE): the timers a firing sets (the next occurrence of a cycle, a wait on the timer's path). */
  readonly timerQueue: () => JobQueue;
  /**
   * Checks the OIDC token Cloud Tasks signs for the fireTimer URL as
   * INBOX_TASKS_SERVICE_ACCOUNT (timer tasks are signed as job tasks are).
   * null when INBOX_PUSH_AUTH=disabled or no tasks service account is set.
   */
  readonly verifier: (() => Promise<PushTokenVerifier>) | null;
  /** JSON lines on stdout for Cloud Logging, tagged with the function. */
  readonly log: Logger;
  /** The clock a firing is judged by (due or not) and stamped with (firedAt). */
  readonly now: () => Date;
  /** The one transaction of a firing; {@link fireTimerRun} unless a test stands in for it. */
  readonly fire?: typeof fireTimerRun;
}

const Body = z.object({ timerId: z.string().regex(/^[0-9a-f]{40}$/, 'a timer id (40 hex digits)') });

/**
 * Seconds a task that came too early is asked to wait: until the due time
 * by this instance's clock, at least 1 (Retry-After counts whole seconds).
 */
export function retryAfterSeconds(dueAt: Date, now: Date): number {
  return Math.max(1, Math.ceil((dueAt.getTime() - now.getTime()) / 1000));
}

/**
 * `fireTimer`, the target of the timers queue (INBOX_TIMERS_QUEUE): fires
 * one timer in one transaction (engine/store/fire-timer.ts). Every outcome
 * that ends the timer's story answers 200, so Cloud Tasks ends the task:
 * `fired` (the token took the timer's path), `already fired` (a second
 * delivery, or the sweep fired it first), `not found` (cancelled: its token
 * left without it and the document was deleted), `stale` (the token moved
 * on or is gone; the timer is deleted, a recorded no-op). A task that comes
 * before the due time by this instance's clock (clock skew between Cloud
 * Tasks and Cloud Run, beyond the store's 1 s tolerance) is answered 503
 * with `Retry-After` until the due time, so Cloud Tasks comes back rather
 * than the timer firing early; a Firestore failure 503 (the queue's backoff),
 * a defect 500 (http/answer.ts). A task that gives up loses nothing: the
 * sweep fires a timer still PENDING after its due time + the sweep grace.
 */
export function createFireTimerHandler(deps: FireTimerDeps): (req: Request, res: Response) => Promise<void> {
  return answering((req) => answerDelivery(deps, req));
}

async function answerDelivery(deps: FireTimerDeps, req: Request): Promise<Answer> {
  let timerId: string | null = null;
  try {
    const refused = refuseMethod(req, 'use POST (Cloud Tasks)') ?? (await refuseToken(deps.verifier, req));
    if (refused !== null) return refused;
    const body = parseBody(req, Body);
    if (!body.ok) return body.answer;
    timerId = body.value.timerId;
    return await fire(deps, timerId);
  } catch (err) {
    const failure = classifyFailure(err);
    deps.log.log(failure.kind === 'retryable' ? 'WARNING' : 'ERROR', 'timer not fired; Cloud Tasks will retry', {
      timerId,
      code: failure.code,
      error: storableText(errorMessage(err)),
    });
    return failureAnswer(failure, 'fire the timer', null);
  }
}

/**
 * A firing the engine cannot apply (StepFailedError): Cloud Tasks and the
 * sweep would fire it again and fail the same way without end, so the
 * timer is deleted and its instance shows a STEP_FAILED incident saying
 * why (engine/store/fail-timer.ts); 200 ends the task.
 */
async function failed(deps: FireTimerDeps, timerId: string, err: StepFailedError): Promise<Answer> {
  const error = storableText(err.message);
  const recorded = await failTimerRun(deps.db(), timerId, error, deps.now());
  deps.log.error('timer could not fire: the engine cannot apply its path; incident STEP_FAILED', {
    incident: 'STEP_FAILED',
    timerId,
    recorded,
    error,
  });
  return { kind: 'ok', body: { outcome: 'failed', timerId } };
}

/** The firing's transaction, then what it created dispatched (fired) or the outcome logged; the answer by outcome. */
async function fire(deps: FireTimerDeps, timerId: string): Promise<Answer> {
  const engine = await deps.engine();
  const now = deps.now();
  let firing: TimerFiring;
  try {
    firing = await (deps.fire ?? fireTimerRun)(deps.db(), engine, timerId, now);
  } catch (err) {
    if (err instanceof StepFailedError) return failed(deps, timerId, err);
    throw err;
  }
  const context = {
    timerId,
    processInstanceId: firing.timer?.processInstanceId ?? null,
    activityId: firing.timer?.activityId ?? null,
  };
  switch (firing.status) {
    case 'FIRED': {
      logDuplicates(deps.log, firing.duplicates);
      await dispatchSettled({ jobs: deps.queue(), timers: deps.timerQueue() }, firing, deps.log);
      const lateMs = firing.timer === undefined ? null : now.getTime() - firing.timer.dueAt.getTime();
      deps.log.info('timer fired', {
        ...context,
        lateMs,
        nextJobs: firing.jobs.length,
        nextTimers: firing.timers.length,
      });
      return { kind: 'ok', body: { outcome: 'fired', timerId } };
    }
    case 'STALE':
      // The token left the node, or is gone, without the timer: the firing changes nothing but the timer's deletion.
      deps.log.info('timer stale: its token moved on; the timer is deleted and changes nothing', context);
      return { kind: 'ok', body: { outcome: 'stale', timerId } };
    case 'ALREADY_FIRED':
      deps.log.info('timer already fired', context);
      return { kind: 'ok', body: { outcome: 'already fired', timerId } };
    case 'NOT_FOUND':
      deps.log.info('timer not found: cancelled (its token left without it)', context);
      return { kind: 'ok', body: { outcome: 'not found', timerId } };
    case 'NOT_DUE': {
      const dueAt = firing.timer?.dueAt ?? now;
      deps.log.warn('timer task came before the due time (clock skew): Cloud Tasks will retry', {
        ...context,
        dueAt: dueAt.toISOString(),
        earlyMs: dueAt.getTime() - now.getTime(),
      });
      return {
        kind: 'retry',
        code: 'NOT_DUE',
        error: 'the timer is not due yet',
        retryAfterSeconds: retryAfterSeconds(dueAt, now),
      };
    }
  }
}
