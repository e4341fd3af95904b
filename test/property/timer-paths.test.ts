import fc from 'fast-check';
import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import type {
  ExecutionState,
  InstanceState,
  JobState,
  TimerState,
  Transition,
  WaitingPoint,
} from '../../functions/src/engine/state';
import { fireTimer, timerIsLive } from '../../functions/src/engine/timer-transitions';
import { completeJob, deliverMessage, startInstance } from '../../functions/src/engine/transitions';
import { REPO_ROOT } from '../support/engine';

/**
 * For any interleaving of message, timer and job events on the deployed-like
 * model (test/fixtures/bpmn/timer-paths.bpmn: an async hand-over with an
 * interrupting deadline, then an event-based gateway with the completion
 * message and an overdue timer), an instance ends in exactly one path:
 * settled or escalated, never both, never neither. Pure transitions only;
 * the world below applies them as the store does (a stale job or timer
 * changes nothing, a message with no waiting point waits in the buffer).
 */

const SEED = 20_261_201;
let model: ProcessModel;

beforeAll(async () => {
  model = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'timer-paths.bpmn'));
});

type Event = { readonly kind: 'job' | 'timer' | 'message'; readonly pick: number; readonly late: number };
const eventArb: fc.Arbitrary<Event> = fc.record({
  kind: fc.constantFrom('job' as const, 'timer' as const, 'message' as const),
  pick: fc.nat(),
  late: fc.nat({ max: 3_600_000 }),
});
const variablesArb = fc.record(
  {
    handOverDeadline: fc.constantFrom('PT1M', 'PT1H', 'P1D'),
    completionDeadline: fc.constantFrom('PT30S', 'P14D', 'P60D'),
  },
  { requiredKeys: [] },
);

interface World {
  instance: InstanceState;
  readonly executions: Map<string, ExecutionState>;
  readonly jobs: Map<string, JobState>;
  readonly timers: Map<string, TimerState>;
  readonly points: WaitingPoint[];
  /** Messages that found no waiting point (the inbox keeps them OPEN for the buffer). */
  buffered: number;
  now: Date;
}

function must(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

/** Applies a transition as store/apply.ts does, checking each write against the state before it. */
function apply(world: World, t: Transition): void {
  world.instance = t.instance;
  for (const e of t.executions) world.executions.set(e.id, e);
  for (const j of t.jobs) world.jobs.set(j.id, j);
  for (const id of t.cancelTimers) {
    must(world.timers.get(id)?.status === 'PENDING', `cancelled timer ${id} is not a PENDING timer`);
    world.timers.delete(id);
  }
  for (const timer of t.timers) world.timers.set(timer.id, timer);
  for (const u of t.unsubscribe) {
    const index = world.points.findIndex((p) => p.executionId === u.executionId && p.activityId === u.activityId);
    must(index >= 0, `unsubscribed point ${u.activityId} does not exist`);
    world.points.splice(index, 1);
  }
  world.points.push(...t.subscribe);
  // The buffer: a new waiting point takes a message that came too early (applyAndSettle).
  const point = t.subscribe[0];
  if (point !== undefined && world.buffered > 0) {
    world.buffered -= 1;
    deliver(world, point);
  }
}

function deliver(world: World, point: WaitingPoint): void {
  const execution = world.executions.get(point.executionId);
  if (execution === undefined) throw new Error('point without token');
  apply(
    world,
    deliverMessage(
      model,
      {},
      { instance: world.instance, execution, point, tokens: Object.fromEntries(world.executions) },
      { completedItems: 1 },
      world.now,
    ),
  );
}

function step(world: World, event: Event): void {
  world.now = new Date(world.now.getTime() + event.late);
  if (event.kind === 'message') {
    const point = world.points.find((p) => p.messageName === 'TaskCompleted');
    if (point === undefined) world.buffered += 1;
    else deliver(world, point);
    return;
  }
  if (event.kind === 'job') {
    const pending = [...world.jobs.values()].filter((j) => j.status === 'PENDING');
    const job = pending[event.pick % Math.max(pending.length, 1)];
    if (job === undefined) return;
    const execution = world.executions.get(job.executionId);
    if (execution?.status !== 'WAITING_JOB' || execution.jobId !== job.id) {
      world.jobs.set(job.id, { ...job, status: 'DONE' }); // STALE: complete-job.ts ends it without a move
      return;
    }
    const t = completeJob(
      model,
      {},
      { instance: world.instance, execution, job, tokens: Object.fromEntries(world.executions) },
      {},
      world.now,
    );
    world.jobs.set(job.id, t.job);
    apply(world, t);
    return;
  }
  const pending = [...world.timers.values()].filter((t) => t.status === 'PENDING');
  const timer = pending[event.pick % Math.max(pending.length, 1)];
  if (timer === undefined) return;
  const execution = world.executions.get(timer.executionId);
  must(
    execution !== undefined && timerIsLive(execution, timer),
    `PENDING timer ${timer.id} whose token does not wait with it (it should have been cancelled)`,
  );
  if (execution === undefined) return;
  const t = fireTimer(
    model,
    {},
    { instance: world.instance, execution, timer, tokens: Object.fromEntries(world.executions) },
    world.now,
  );
  world.timers.set(timer.id, t.timer);
  apply(world, t);
}

/** Everything still outstanding happens: jobs run, the remaining timers fire. Bounded: the model has no loop. */
function drain(world: World): void {
  for (let i = 0; i < 20 && world.instance.activeExecutionIds.length > 0; i++) {
    step(world, { kind: 'job', pick: 0, late: 0 });
    step(world, { kind: 'timer', pick: 0, late: 0 });
  }
}

function checkInvariants(world: World): void {
  const jobs = [...world.jobs.values()].map((j) => j.activityId);
  must(!(jobs.includes('settle') && jobs.includes('escalate')), 'both settlement and escalation jobs exist');
  must(world.instance.activeExecutionIds.length <= 1, 'a second token appeared');
  for (const point of world.points) {
    const execution = world.executions.get(point.executionId);
    must(
      execution?.status === 'WAITING_EVENT' || execution?.status === 'WAITING_MESSAGE',
      `point ${point.activityId} of a token that does not wait`,
    );
  }
  for (const timer of world.timers.values()) {
    const execution = world.executions.get(timer.executionId);
    if (timer.status === 'PENDING')
      must(execution !== undefined && timerIsLive(execution, timer), `orphan PENDING timer ${timer.activityId}`);
  }
}

test('any interleaving of message, timer and job events ends the instance in exactly one path', () => {
  fc.assert(
    fc.property(variablesArb, fc.array(eventArb, { maxLength: 25 }), (variables, events) => {
      const t0 = new Date('2026-12-01T10:00:00Z');
      const started = startInstance(
        model,
        {},
        {
          instanceId: 'i-1',
          executionId: 'e-1',
          businessKey: 'C-1',
          variables: { caseId: 'C-1', ...variables },
          now: t0,
        },
      );
      const world: World = {
        instance: started.instance,
        executions: new Map(),
        jobs: new Map(),
        timers: new Map(),
        points: [],
        buffered: 0,
        now: t0,
      };
      apply(world, started);
      for (const event of events) {
        step(world, event);
        checkInvariants(world);
      }
      drain(world);
      checkInvariants(world);
      const ends = [...world.executions.values()].filter((e) => e.status === 'ENDED').map((e) => e.activityId);
      must(ends.length === 1 && (ends[0] === 'settled' || ends[0] === 'escalated'), `ended at ${JSON.stringify(ends)}`);
      must(world.instance.status === 'COMPLETED', `instance is ${world.instance.status}`);
      must(
        [...world.timers.values()].every((t) => t.status === 'FIRED'),
        'a timer is left PENDING after the end',
      );
      must(world.points.length === 0, 'a waiting point is left after the end');
    }),
    { seed: SEED, numRuns: 400 },
  );
});
