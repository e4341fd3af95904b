import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { DEFAULTS } from '../config';
import { classifyFailure, errorMessage, type FailureClass } from '../core/errors';
import { isTimestamp } from '../core/timestamp';
import type { Engine } from '../engine/engine';
import { STATE_SHARDS } from '../engine/store/collections';
import { datesIn } from '../engine/store/converters';
import { instanceJobs } from '../engine/store/instance-doc';
import { type Answer, answering, failureAnswer } from '../http/answer';
import { refuseMethod } from '../http/request';
import type { Logger } from '../log';
import { QUERIES } from '../queries';
import type { JobQueue } from '../tasks/job-queue';
import { dispatchJobs } from './dispatch';
import type { PayloadStore } from '../storage/payload-store';
import { type PayloadSweepOptions, sweepPayloads } from './sweep-payloads';
import { sweepTimers, type TimerSweepOptions } from './sweep-timers';

/** Jobs younger than this are left alone: their creator is probably still dispatching them (INBOX_SWEEP_GRACE_MS). */
export const SWEEP_GRACE_MS = DEFAULTS.INBOX_SWEEP_GRACE_MS;
/** PENDING jobs older than this whose task still exists are reported at ERROR (INBOX_JOB_STUCK_AFTER_MS). */
export const JOB_STUCK_AFTER_MS = DEFAULTS.INBOX_JOB_STUCK_AFTER_MS;

export interface SweepOptions {
  readonly graceMs?: number;
  readonly stuckAfterMs?: number;
  readonly limit?: number;
}

interface SweptJob {
  readonly id: string;
  readonly activityId: string;
  readonly processInstanceId: string;
  readonly createdAt: Date | null;
}

/**
 * Re-dispatches PENDING jobs older than the grace period (from the instance
 * documents and, for instances stored before 0.6.0, the job documents): the ones whose Cloud
 * Task was never created (a crash between commit and enqueue) get it now; for
 * the others (still retrying) the task exists and the call answers
 * ALREADY_EXISTS, which changes nothing.
 *
 * ALREADY_EXISTS for a job older than `stuckAfterMs` (longer than the queue's
 * whole retry schedule) means the job is stuck: its task was dropped after
 * the queue's last attempt without runJob recording the failure (Firestore
 * failed then too), and the task name stays reserved for about an hour. That
 * is logged at ERROR with `incident: JOB_STUCK`, which the incidents alert
 * counts (metric inbox_incidents); once the name is
 * free again a later sweep creates the task anew and the job runs again.
 */
export async function sweepUndispatchedJobs(
  db: Firestore,
  queue: JobQueue,
  log: Logger,
  now: Date,
  options: SweepOptions = {},
): Promise<number> {
  const { graceMs = SWEEP_GRACE_MS, stuckAfterMs = JOB_STUCK_AFTER_MS, limit = 500 } = options;
  const jobs = await stalePendingJobs(db, new Date(now.getTime() - graceMs), limit);
  if (jobs.length === 0) return 0;
  log.info('re-dispatching PENDING jobs older than the grace period', { count: jobs.length });
  const stuckBefore = now.getTime() - stuckAfterMs;
  return dispatchJobs(queue, jobs, log, {
    onExists: (l, job) => {
      const ageMs = job.createdAt === null ? null : now.getTime() - job.createdAt.getTime();
      if (job.createdAt !== null && job.createdAt.getTime() > stuckBefore) {
        l.info('job task already existed', { jobId: job.id, activityId: job.activityId });
        return;
      }
      l.error(
        'job stuck: PENDING longer than its task can retry, and its task name is still taken (the task was dropped, or retries far too long)',
        {
          incident: 'JOB_STUCK',
          jobId: job.id,
          activityId: job.activityId,
          processInstanceId: job.processInstanceId,
          ageMs,
        },
      );
    },
  });
}

/**
 * PENDING jobs created at or before `before`: from the instance documents
 * (one query per shard on `jobsPendingSince`), and from the job documents of
 * the layout before 0.6.0 (one query; one read when there are none).
 */
async function stalePendingJobs(db: Firestore, before: Date, limit: number): Promise<SweptJob[]> {
  const [legacy, ...shards] = await Promise.all([
    QUERIES.stalePendingJobs.build(db, before, limit).get(),
    ...Array.from({ length: STATE_SHARDS }, (_, shard) =>
      QUERIES.instancesWithPendingJobs.build(db, shard, before, limit).get(),
    ),
  ]);
  const jobs = legacy.docs.map((d): SweptJob => {
    const createdAt: unknown = d.get('createdAt');
    return {
      id: d.id,
      activityId: String(d.get('activityId')),
      processInstanceId: String(d.get('processInstanceId')),
      createdAt: isTimestamp(createdAt) ? createdAt.toDate() : null,
    };
  });
  for (const snap of shards) {
    for (const doc of snap.docs) {
      for (const job of instanceJobs(datesIn(doc.data()))) {
        if (job.status !== 'PENDING' || !(job.createdAt instanceof Date) || job.createdAt.getTime() > before.getTime())
          continue;
        jobs.push({ id: job.id, activityId: job.activityId, processInstanceId: doc.id, createdAt: job.createdAt });
      }
    }
  }
  return jobs.slice(0, limit);
}

/** What `sweepJobs` needs, passed in (wiring.ts builds it from the configuration). */
export interface SweepJobsDeps {
  readonly db: () => Firestore;
  /** The deployed models: an overdue timer is fired inline through its model (loaded only then). */
  readonly engine: () => Promise<Engine>;
  /** The jobs queue (INBOX_TASKS_QUEUE). */
  readonly queue: () => JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE): the tasks of FAR timers brought near, and what an inline firing sets. */
  readonly timerQueue: () => JobQueue;
  readonly log: Logger;
  readonly now: () => Date;
  readonly options: SweepOptions;
  /** The timer sweep's bounds; its grace defaults to the jobs' (`options.graceMs`, INBOX_SWEEP_GRACE_MS). */
  readonly timers?: TimerSweepOptions;
  /**
   * Cloud Storage (INBOX_PAYLOAD_BUCKET), for the payload sweep
   * (jobs/sweep-payloads.ts): offloaded payloads of DONE documents past
   * payloadExpireAt, object then document. Absent: no payload sweep runs.
   */
  readonly payloadStore?: () => PayloadStore;
  /** The payload sweep's bounds. */
  readonly payloads?: PayloadSweepOptions;
}

/**
 * `sweepJobs`, called by Cloud Scheduler: one {@link sweepUndispatchedJobs},
 * one timer sweep (jobs/sweep-timers.ts) and one payload sweep
 * (jobs/sweep-payloads.ts) side by side, so one scheduler job serves them all
 * and none holds another back. 200 with the number of jobs dispatched and
 * what the timer and payload sweeps did (no `payloads` without a store). When either fails (its
 * queries; a single timer's failure is counted in its summary, not thrown),
 * 503 if a retry can heal it, else 500 (http/answer.ts), logged at ERROR;
 * what the other did stands, and the next scheduled call sweeps again. No
 * `Retry-After`: the scheduler's retry settings are the schedule.
 */
export function createSweepJobsHandler(deps: SweepJobsDeps): (req: Request, res: Response) => Promise<void> {
  const sweep = async (req: Request): Promise<Answer> => {
    const wrongMethod = refuseMethod(req, 'use POST (Cloud Scheduler)');
    if (wrongMethod !== null) return wrongMethod;
    const now = deps.now();
    // Side by side: a failing jobs query must not hold the timers back, nor the other way round.
    // async arrows: creating the Firestore client may throw too, and must end in the answer below.
    const store = deps.payloadStore;
    const [jobs, timers, payloads] = await Promise.allSettled([
      (async () => sweepUndispatchedJobs(deps.db(), deps.queue(), deps.log, now, deps.options))(),
      (async () =>
        sweepTimers(
          {
            db: deps.db(),
            engine: deps.engine,
            queues: { jobs: deps.queue(), timers: deps.timerQueue() },
            log: deps.log,
            now,
          },
          { graceMs: deps.options.graceMs ?? SWEEP_GRACE_MS, ...deps.timers },
        ))(),
      (async () =>
        store === undefined ? null : sweepPayloads({ db: deps.db(), store, log: deps.log, now }, deps.payloads))(),
    ]);
    if (jobs.status === 'fulfilled' && timers.status === 'fulfilled' && payloads.status === 'fulfilled') {
      // Without a store there is no payload sweep, and nothing about it in the answer.
      return {
        kind: 'ok',
        body: {
          dispatched: jobs.value,
          timers: timers.value,
          ...(payloads.value === null ? {} : { payloads: payloads.value }),
        },
      };
    }
    let failure: FailureClass | null = null;
    for (const [what, outcome] of [
      ['job', jobs],
      ['timer', timers],
      ['payload', payloads],
    ] as const) {
      if (outcome.status === 'fulfilled') continue;
      failure ??= classifyFailure(outcome.reason);
      deps.log.error(`${what} sweep failed`, {
        code: classifyFailure(outcome.reason).code,
        error: errorMessage(outcome.reason),
      });
    }
    return failureAnswer(
      failure ?? { kind: 'unexpected', code: 'UNKNOWN' },
      'sweep the jobs, timers and payloads',
      null,
    );
  };
  return answering(sweep);
}
