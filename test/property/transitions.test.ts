import fc from 'fast-check';
import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import {
  CORRELATED_MESSAGES_KEPT,
  type ExecutionState,
  type InstanceState,
  type JobState,
  type Transition,
  type WaitingPoint,
} from '../../functions/src/engine/state';
import type { SyncHandler } from '../../functions/src/engine/run';
import {
  cancelToken,
  completeJob,
  deliverMessage,
  failJob,
  placeToken,
  startInstance,
} from '../../functions/src/engine/transitions';
import { REPO_ROOT, roundsEngine } from '../support/engine';

/**
 * Properties of the pure engine core (engine/transitions.ts) over random
 * sequences of steps (jobs done or failed, messages, repairs) on the deployed
 * fixture app's model and the test models. The store writes each Transition as
 * it is, so a transition that unsubscribes a point nobody holds, subscribes a
 * token twice or loses a job leaves Firestore state no relay can repair.
 */

const SEED = 20_261_129;
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'bpmn');
let models: ProcessModel[] = [];
let sync: Readonly<Record<string, SyncHandler>> = {};

beforeAll(async () => {
  const rounds = await roundsEngine();
  sync = rounds.sync;
  models = [
    await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'app', 'bpmn', 'fixture-process.bpmn')),
    await loadProcessModel(join(FIXTURES, 'gateway.bpmn')),
    await loadProcessModel(join(FIXTURES, 'two-messages.bpmn')),
    rounds.model('rounds'),
  ];
});

type Vars = Record<string, unknown>;
type Op =
  | {
      readonly kind: 'completeJob' | 'failJob' | 'deliver' | 'deliverNotWaiting' | 'cancel';
      readonly pick: number;
      readonly vars: Vars;
    }
  | { readonly kind: 'place'; readonly pick: number | null; readonly node: number };

/** Variables the models read: correlation key (good and bad values), the gateway's count, the rounds counter. */
const caseId = fc.oneof(
  { arbitrary: fc.constantFrom('C-1', 'C-2', 42), weight: 8 },
  { arbitrary: fc.constantFrom('', null, { id: 1 }), weight: 1 },
);
const varsArb: fc.Arbitrary<Vars> = fc.record(
  { caseId, completedItems: fc.integer({ min: -1, max: 3 }), rounds: fc.integer({ min: 0, max: 6 }) },
  { requiredKeys: [] },
);
const startArb: fc.Arbitrary<Vars> = fc.record(
  { caseId, completedItems: fc.integer({ min: -1, max: 3 }) },
  { requiredKeys: ['caseId'] },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constantFrom('completeJob' as const, 'deliver' as const),
      pick: fc.nat(),
      vars: varsArb,
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom('failJob' as const, 'deliverNotWaiting' as const, 'cancel' as const),
      pick: fc.nat(),
      vars: fc.constant({}),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('place' as const), pick: fc.option(fc.nat()), node: fc.nat() }),
    weight: 2,
  },
);
const scenarioArb = fc.record({ model: fc.nat({ max: 3 }), start: startArb, ops: fc.array(opArb, { maxLength: 30 }) });

/** Everything the store would hold for one instance, rebuilt from transitions alone. */
interface World {
  instance: InstanceState;
  readonly executions: Map<string, ExecutionState>;
  readonly jobs: Map<string, JobState>;
  readonly waiting: Map<string, WaitingPoint>;
  subscribed: number;
  unsubscribed: number;
  repairs: number;
  /** Message ids delivered, in order: what the audit trail must show (its last CORRELATED_MESSAGES_KEPT). */
  readonly delivered: string[];
}

function must(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

/** Applies a transition the way store/apply.ts does, checking that each write makes sense on the state before it. */
function apply(world: World, t: Transition, job: JobState | null = null): void {
  must(t.instance.id === world.instance.id, 'a transition changed another instance');
  world.instance = t.instance;
  for (const e of t.executions) {
    must(e.processInstanceId === t.instance.id, `execution ${e.id} belongs to another instance`);
    world.executions.set(e.id, e);
  }
  if (job !== null) world.jobs.set(job.id, job);
  for (const j of t.jobs) {
    must(!world.jobs.has(j.id), `job id ${j.id} created twice (its store create() would fail the transaction)`);
    must(j.status === 'PENDING', 'a new job is not PENDING');
    world.jobs.set(j.id, j);
  }
  for (const u of t.unsubscribe) {
    const held = world.waiting.get(u.executionId);
    must(
      held !== undefined &&
        held.messageName === u.messageName &&
        held.correlationKey === u.correlationKey &&
        held.activityId === u.activityId,
      `unsubscribed a waiting point nobody holds: ${JSON.stringify(u)}`,
    );
    world.waiting.delete(u.executionId);
    world.unsubscribed += 1;
  }
  for (const s of t.subscribe) {
    must(!world.waiting.has(s.executionId), `token ${s.executionId} subscribed twice: it would wait in two places`);
    world.waiting.set(s.executionId, s);
    world.subscribed += 1;
  }
}

/** The invariants of one instance's state, after every step. */
function checkInvariants(model: ProcessModel, w: World): void {
  const { instance } = w;
  const active = instance.activeExecutionIds;
  must(new Set(active).size === active.length, 'an execution is listed twice as active');
  for (const e of w.executions.values()) {
    const node = model.nodes[e.activityId];
    must(node !== undefined, `token at unknown node ${e.activityId}`);
    const finished = e.status === 'ENDED' || e.status === 'CANCELLED';
    must(
      active.includes(e.id) === !finished,
      `execution ${e.id} is ${e.status} but ${finished ? '' : 'not '}listed active`,
    );
    // One place per token: a waiting point iff it waits for a message, there, for what the node names.
    const point = w.waiting.get(e.id);
    must(
      (e.status === 'WAITING_MESSAGE') === (point !== undefined) && (point !== undefined) === (e.waitingFor !== null),
      `execution ${e.id} (${e.status}) and its waiting point disagree`,
    );
    if (point !== undefined) {
      must(
        point.activityId === e.activityId &&
          point.messageName === e.waitingFor?.messageName &&
          point.correlationKey === e.waitingFor.correlationKey,
        `waiting point of ${e.id} is not where the token is`,
      );
      must(
        node?.kind === 'messageCatchEvent' || node?.kind === 'receiveTask',
        `token waits for a message at a ${node?.kind}`,
      );
      if (node?.kind === 'messageCatchEvent' || node?.kind === 'receiveTask')
        must(node.messageName === point.messageName, 'waits for a message its node does not name');
    }
    must(
      (e.status === 'WAITING_JOB') === (e.jobId !== null),
      `execution ${e.id} (${e.status}) has jobId ${String(e.jobId)}`,
    );
    if (e.jobId !== null) {
      const job = w.jobs.get(e.jobId);
      must(
        job !== undefined && job.executionId === e.id && job.activityId === e.activityId && job.status !== 'DONE',
        `token ${e.id} waits for a job that is missing, elsewhere or done`,
      );
      must(node?.kind === 'serviceTask' || node?.kind === 'sendTask', 'token waits for a job outside a task');
    }
    if (e.status === 'ENDED') must(node?.kind === 'endEvent', `token ended at a ${node?.kind}`);
    // A token stands still outside a wait only when an incident says why.
    if (e.status === 'ACTIVE')
      must(
        instance.incidents.some((i) => i.executionId === e.id),
        `token ${e.id} is stuck ACTIVE without an incident`,
      );
  }
  for (const id of active) must(w.executions.has(id), `active execution ${id} was never written`);
  must(
    (instance.status === 'INCIDENT') === instance.incidents.length > 0,
    `status ${instance.status} with ${instance.incidents.length} incidents`,
  );
  if (instance.status === 'COMPLETED') must(active.length === 0, 'COMPLETED with active executions');
  if (instance.status === 'RUNNING') must(active.length > 0, 'RUNNING without any active execution');
  must((instance.completedAt !== null) === (active.length === 0), 'completedAt disagrees with the active executions');
  must(w.subscribed === w.unsubscribed + w.waiting.size, 'waiting points created != removed + still waiting');
  must(
    JSON.stringify(instance.correlatedMessages ?? []) === JSON.stringify(w.delivered.slice(-CORRELATED_MESSAGES_KEPT)),
    'the audit trail lost, repeated or reordered a delivered message',
  );
}

const pick = <T>(items: readonly T[], n: number): T | undefined => items[n % Math.max(1, items.length)];

/** Runs one scenario, checking every step; returns the final world (for the determinism check). */
function run(scenario: { model: number; start: Vars; ops: readonly Op[] }): World {
  const model = models[scenario.model] as ProcessModel;
  const t0 = Date.parse('2026-11-29T10:00:00Z');
  const first = startInstance(model, sync, {
    instanceId: 'i-1',
    executionId: 'e-1',
    businessKey: 'C-1',
    variables: scenario.start,
    now: new Date(t0),
  });
  const world: World = {
    instance: first.instance,
    executions: new Map(),
    jobs: new Map(),
    waiting: new Map(),
    subscribed: 0,
    unsubscribed: 0,
    repairs: 0,
    delivered: [],
  };
  apply(world, first);
  checkInvariants(model, world);
  scenario.ops.forEach((op, i) => {
    const now = new Date(t0 + (i + 1) * 1_000);
    const executions = [...world.executions.values()];
    const jobsDue = [...world.jobs.values()].filter(
      (j) => j.status === 'PENDING' && world.executions.get(j.executionId)?.jobId === j.id,
    );
    // Every token as the store would pass them: the instance document's.
    const state = (
      e: ExecutionState,
    ): { instance: InstanceState; execution: ExecutionState; tokens: Record<string, ExecutionState> } => ({
      instance: world.instance,
      execution: e,
      tokens: Object.fromEntries(world.executions),
    });
    switch (op.kind) {
      case 'completeJob':
      case 'failJob': {
        const job = pick(jobsDue, op.pick);
        const execution = job === undefined ? undefined : world.executions.get(job.executionId);
        if (job === undefined || execution === undefined) return;
        const t =
          op.kind === 'completeJob'
            ? completeJob(model, sync, { ...state(execution), job }, op.vars, now)
            : failJob({ ...state(execution), job }, 'down', now);
        must(t.job.status === (op.kind === 'completeJob' ? 'DONE' : 'FAILED'), 'the finished job has the wrong status');
        apply(world, t, t.job);
        break;
      }
      case 'deliver': {
        const execution = pick(
          executions.filter((e) => e.status === 'WAITING_MESSAGE'),
          op.pick,
        );
        if (execution === undefined) return;
        const messageId = `m-${i}`;
        apply(world, deliverMessage(model, sync, state(execution), op.vars, now, messageId));
        world.delivered.push(messageId);
        break;
      }
      case 'deliverNotWaiting': {
        const execution = pick(
          executions.filter((e) => e.status !== 'WAITING_MESSAGE'),
          op.pick,
        );
        if (execution === undefined) return;
        // What the relay relies on when a stale waiting point names a token that moved on.
        expect(() => deliverMessage(model, sync, state(execution), op.vars, now)).toThrow(
          'does not wait for a message',
        );
        break;
      }
      case 'cancel': {
        const execution = pick(
          executions.filter((e) => world.instance.activeExecutionIds.includes(e.id)),
          op.pick,
        );
        if (execution === undefined) return;
        apply(world, cancelToken(state(execution), now));
        break;
      }
      case 'place': {
        const nodeId = pick(Object.keys(model.nodes), op.node) as string;
        const existing = op.pick === null ? undefined : pick(executions, op.pick);
        const execution: ExecutionState = existing ?? {
          id: `e-repair-${++world.repairs}`,
          processInstanceId: world.instance.id,
          activityId: nodeId,
          status: 'ACTIVE',
          step: 0,
          jobId: null,
          waitingFor: null,
          createdAt: now,
          updatedAt: now,
        };
        apply(world, placeToken(model, sync, state(execution), nodeId, now));
        break;
      }
    }
    checkInvariants(model, world);
  });
  return world;
}

describe('engine transitions over random step sequences', () => {
  test('every step keeps one place per token, waiting points balanced, jobs unique, status consistent with the tokens, every delivery in the audit trail', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => void run(scenario)),
      { seed: SEED, numRuns: 400 },
    );
  });

  test('pure: the same steps from the same start give the same state', () => {
    const snapshot = (world: World): unknown => ({
      ...world,
      executions: [...world.executions],
      jobs: [...world.jobs],
      waiting: [...world.waiting],
    });
    fc.assert(
      fc.property(scenarioArb, (scenario) => expect(snapshot(run(scenario))).toEqual(snapshot(run(scenario)))),
      { seed: SEED, numRuns: 100 },
    );
  });

  test('without repairs, a loop-free model gives each task at most one job and each wait at most one waiting point', () => {
    const noRepairs = scenarioArb.map((s) => ({
      ...s,
      model: s.model % 3,
      ops: s.ops.filter((op) => op.kind !== 'place' && op.kind !== 'cancel'),
    }));
    fc.assert(
      fc.property(noRepairs, (scenario) => {
        const world = run(scenario);
        const model = models[scenario.model] as ProcessModel;
        const waits = Object.values(model.nodes).filter(
          (n) => n.kind === 'messageCatchEvent' || n.kind === 'receiveTask',
        ).length;
        const activities = [...world.jobs.values()].map((j) => j.activityId);
        expect(new Set(activities).size).toBe(activities.length);
        expect(world.subscribed).toBeLessThanOrEqual(waits);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
