import { TIMER_HORIZON_MS } from '../../functions/src/engine/store/timers';
import { dispatchSettled, dispatchTimers } from '../../functions/src/jobs/dispatch';
import { createLogger } from '../../functions/src/log';
import type { EnqueueOptions, JobQueue } from '../../functions/src/tasks/job-queue';

/** A queue that records each task it is asked for, and fails for the ids in `failing`. */
function recording(
  failing: ReadonlySet<string> = new Set(),
): JobQueue & { readonly calls: Array<{ id: string; options: EnqueueOptions | undefined }> } {
  const calls: Array<{ id: string; options: EnqueueOptions | undefined }> = [];
  return {
    calls,
    enqueue: async (id, options) => {
      calls.push({ id, options });
      if (failing.has(id)) throw Object.assign(new Error('Cloud Tasks unavailable'), { code: 14 });
      return 'CREATED';
    },
  };
}

const now = new Date('2026-12-01T10:00:00Z');
const at = (ms: number): Date => new Date(now.getTime() + ms);
const timer = (id: string, dueAt: Date) => ({ id, activityId: 'deadline', dueAt });

describe('dispatchTimers', () => {
  test('creates one task per NEAR timer, named after it and scheduled at its due time', async () => {
    const queue = recording();
    const dispatched = await dispatchTimers(
      queue,
      [timer('t1', at(5_000)), timer('t2', at(-1_000))],
      createLogger(() => undefined),
      now,
    );
    expect(dispatched).toBe(2);
    expect(queue.calls).toEqual([
      { id: 't1', options: { scheduleTime: at(5_000) } },
      { id: 't2', options: { scheduleTime: at(-1_000) } },
    ]);
  });

  test('leaves a FAR timer (beyond the horizon) to the sweep: Cloud Tasks would refuse its scheduleTime', async () => {
    const queue = recording();
    const dispatched = await dispatchTimers(
      queue,
      [timer('edge', at(TIMER_HORIZON_MS)), timer('far', at(TIMER_HORIZON_MS + 1))],
      createLogger(() => undefined),
      now,
    );
    expect(dispatched).toBe(1);
    expect(queue.calls.map((c) => c.id)).toEqual(['edge']);
  });

  test('a failed task is a WARNING naming the timer; the others are still created, and nothing throws', async () => {
    const queue = recording(new Set(['t1']));
    const logs: Array<Record<string, unknown>> = [];
    const dispatched = await dispatchTimers(
      queue,
      [timer('t1', at(1_000)), timer('t2', at(2_000))],
      createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>)),
      now,
    );
    expect(dispatched).toBe(1);
    expect(queue.calls.map((c) => c.id)).toEqual(['t1', 't2']);
    expect(logs).toEqual([
      expect.objectContaining({
        severity: 'WARNING',
        timerId: 't1',
        activityId: 'deadline',
        dueAt: at(1_000).toISOString(),
        error: 'Cloud Tasks unavailable',
        message: expect.stringContaining('the sweep fires the timer'),
      }),
    ]);
  });
});

test('dispatchSettled sends the jobs to the jobs queue and the timers to the timers queue', async () => {
  const jobs = recording();
  const timers = recording();
  const dispatched = await dispatchSettled(
    { jobs, timers },
    { jobs: [{ id: 'j1', activityId: 'settle', processInstanceId: 'p1' }], timers: [timer('t1', at(1_000))] },
    createLogger(() => undefined),
  );
  expect(dispatched).toEqual({ jobs: 1, timers: 1 });
  expect(jobs.calls).toEqual([{ id: 'j1', options: { processInstanceId: 'p1' } }]);
  expect(timers.calls.map((c) => c.id)).toEqual(['t1']);
});
