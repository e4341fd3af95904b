/**
 * Migration of a process instance from one version of its model to another
 * (`inbox migrate`): the plan. Pure: the instance as stored (its tokens,
 * jobs and the PENDING timers its tokens list), both models and the
 * operator's mapping in; per live token its move (source element → target
 * element) and what happens to its job, timer, user task or waiting point
 * out, with every change the store writes; or the refusals, each with its
 * reason. Anchored on Camunda 8's process instance migration; where ours
 * differs is docs/cli.md's table (migrate).
 *
 * Every live token needs a target: the `mapping`'s, else the element with
 * the same id. The target must be of the same kind and in the same scope
 * (likeness.ts); a token at a parallel or inclusive join (half reached) or
 * at an event-based gateway is refused. A job, a user task, a called
 * instance and a multi-instance activity's items go on as they are; the
 * catch events on the element are what the target draws (catch-events.ts).
 * An event subprocess's standby trigger is migrated only unchanged, and a
 * target that draws an event subprocess the instance does not wait for is
 * refused.
 */
import type { FlowNode, ProcessModel } from '../../bpmn/model';
import {
  type ExecutionState,
  type Incident,
  type InstanceState,
  isOpenIncident,
  type JobState,
  type TimerState,
} from '../state';
import { type CatchChanges, catchChanges, type PointChange, type TimerRewrite } from './catch-events';
import { unlike } from './likeness';

/** Source element id → target element id, as the operator gave it (`--map SOURCE=TARGET`). */
export type ElementMapping = Readonly<Record<string, string>>;

export interface MigrationInput {
  readonly instance: InstanceState;
  /** Its tokens as stored (live and kept finished ones). */
  readonly tokens: Readonly<Record<string, ExecutionState>>;
  /** Its jobs as stored. */
  readonly jobs: Readonly<Record<string, JobState>>;
  /** The PENDING timers its live tokens list, by id, as stored (a timer that is gone is left out). */
  readonly timers: Readonly<Record<string, TimerState>>;
  readonly source: ProcessModel;
  readonly target: ProcessModel;
  readonly mapping: ElementMapping;
  readonly now: Date;
}

/** One token's move and what happens to what it waits with, in words. */
export interface TokenMove {
  readonly executionId: string;
  readonly from: string;
  readonly to: string;
  readonly status: ExecutionState['status'];
  readonly effects: readonly string[];
}

/** Everything the store writes for a migration without refusals. */
export interface MigrationChanges {
  readonly instance: InstanceState;
  readonly executions: readonly ExecutionState[];
  readonly jobs: readonly JobState[];
  readonly keepTimers: readonly TimerRewrite[];
  readonly cancelTimers: readonly string[];
  readonly createTimers: readonly TimerState[];
  readonly points: readonly PointChange[];
  readonly userTasks: readonly { readonly id: string; readonly activityId: string; readonly name: string | null }[];
  /** Called instances whose caller's activity id changes (their `calledBy.activityId`). */
  readonly callers: readonly { readonly instanceId: string; readonly activityId: string }[];
}

export interface MigrationPlan {
  readonly moves: readonly TokenMove[];
  /** Why the instance cannot be migrated as asked; empty: it can, and `changes` says how. */
  readonly refusals: readonly string[];
  readonly changes: MigrationChanges;
}

const nodeIn = (model: ProcessModel, id: string): FlowNode | undefined =>
  Object.hasOwn(model.nodes, id) ? model.nodes[id] : undefined;

const isLive = (e: ExecutionState): boolean => e.status !== 'ENDED' && e.status !== 'CANCELLED';

/**
 * Mapping entries that name no element: a source id the source version does
 * not draw, a target id the target does not. Checked once per run, before
 * any instance (the same for all of them).
 */
export function mappingErrors(source: ProcessModel, target: ProcessModel, mapping: ElementMapping): string[] {
  const errors: string[] = [];
  for (const [from, to] of Object.entries(mapping)) {
    if (nodeIn(source, from) === undefined)
      errors.push(`--map ${from}=${to}: the source version draws no element ${from}`);
    if (nodeIn(target, to) === undefined) errors.push(`--map ${from}=${to}: the target version draws no element ${to}`);
  }
  return errors;
}

/** The plan for one instance (see the module's comment). */
export function planMigration(input: MigrationInput): MigrationPlan {
  const { instance, source, target, mapping, now } = input;
  const targetOf = (id: string): string => (Object.hasOwn(mapping, id) ? (mapping[id] as string) : id);
  const moves: TokenMove[] = [];
  const refusals: string[] = [];
  const executions: ExecutionState[] = [];
  const jobs: JobState[] = [];
  const catches: CatchChanges[] = [];
  const userTasks: MigrationChanges['userTasks'][number][] = [];
  const callers: MigrationChanges['callers'][number][] = [];
  const moved = new Map<string, { from: string; to: string }>();
  const live = instance.activeExecutionIds
    .map((id) => input.tokens[id])
    .filter((e): e is ExecutionState => e !== undefined && isLive(e));

  for (const token of live) {
    const from = nodeIn(source, token.activityId);
    const at = `token ${token.id} at ${token.activityId}`;
    if (from === undefined) {
      refusals.push(
        `${at}: the source version draws no ${token.activityId}; is the instance on the version named by --from?`,
      );
      continue;
    }
    if (token.status === 'WAITING_JOIN') {
      refusals.push(
        `${at}: it waits at a join half reached (arrived by ${token.arrivedBy ?? 'a flow'}); let the join complete, or cancel the waiting token, then migrate`,
      );
      continue;
    }
    if (token.status === 'WAITING_EVENT') {
      refusals.push(
        `${at}: it waits at an event-based gateway; migrating one is not supported: let an event take it on first`,
      );
      continue;
    }
    const toId = targetOf(from.id);
    const to = nodeIn(target, toId);
    if (to === undefined) {
      refusals.push(`${at}: no target: the target version draws no ${toId}; map it with --map ${from.id}=TARGET`);
      continue;
    }
    const why = unlike({ token, from, to, scope: from.scope === undefined ? undefined : targetOf(from.scope) });
    if (why !== null) {
      refusals.push(why);
      continue;
    }
    const timers = (token.timerIds ?? []).map((id) => input.timers[id]).filter((t): t is TimerState => t !== undefined);
    const c = catchChanges({ instance, token, from, to, target, timers, targetOf, now }, source);
    refusals.push(...c.refusals);
    catches.push(c);
    moved.set(token.id, { from: from.id, to: to.id });
    const effects = [...sideEffects(input, token, to), ...c.effects];
    moves.push({ executionId: token.id, from: from.id, to: to.id, status: token.status, effects });
    const next: Record<string, unknown> = { ...token, activityId: to.id, updatedAt: now, ...c.fields };
    if (c.fields.timerIds === undefined) delete next.timerIds;
    if (c.fields.boundaryWaits === undefined) delete next.boundaryWaits;
    executions.push(next as unknown as ExecutionState);
    const job = token.jobId === null ? undefined : input.jobs[token.jobId];
    if (job !== undefined && job.status !== 'DONE' && job.activityId !== to.id)
      jobs.push({ ...job, activityId: to.id });
    if (token.userTaskId !== undefined) userTasks.push({ id: token.userTaskId, activityId: to.id, name: to.name });
    if (token.calledInstanceId !== undefined && token.status === 'WAITING_CALL' && from.id !== to.id)
      callers.push({ instanceId: token.calledInstanceId, activityId: to.id });
  }
  refusals.push(...newTriggers(input, live, targetOf));

  const incidents: Incident[] = instance.incidents.map((i) => {
    const m = moved.get(i.executionId);
    return isOpenIncident(i) && m !== undefined && i.activityId === m.from ? { ...i, activityId: m.to } : i;
  });
  const changes: MigrationChanges = {
    instance: { ...instance, processVersion: target.version, incidents, updatedAt: now },
    executions,
    jobs,
    keepTimers: catches.flatMap((c) => c.keepTimers),
    cancelTimers: catches.flatMap((c) => c.cancelTimers),
    createTimers: catches.flatMap((c) => c.createTimers),
    points: catches.flatMap((c) => c.points),
    userTasks,
    callers,
  };
  return { moves, refusals, changes };
}

/** What happens to the token's job, user task, called instance or items, in words. */
function sideEffects(input: MigrationInput, token: ExecutionState, to: FlowNode): string[] {
  const job = token.jobId === null ? undefined : input.jobs[token.jobId];
  switch (token.status) {
    case 'WAITING_JOB':
      return [
        `its job ${token.jobId ?? ''} (${job?.status ?? 'not found'}) goes on as it is; its completion moves the token along the target`,
      ];
    case 'WAITING_USER':
      return [`its user task ${token.userTaskId ?? ''} stays open, with its assignment, as ${to.id}`];
    case 'WAITING_CALL':
      return [`its called instance ${token.calledInstanceId ?? ''} goes on unchanged (migrate it on its own)`];
    case 'WAITING_ITEMS':
      return ['items already started finish on the source version; items started after run the target'];
    case 'WAITING_SCOPE':
      return ['the tokens inside move by their own mapping'];
    case 'ACTIVE':
      return ['it stays stopped by its incident, which now names the target element'];
    case 'WAITING_MESSAGE':
    case 'WAITING_TIMER':
    case 'WAITING_EVENT':
    case 'WAITING_JOIN':
    case 'ENDED':
    case 'CANCELLED':
      // What a wait or timer does is said by catch-events.ts; the rest is never planned.
      return [];
  }
}

/**
 * Event subprocesses with a message or timer start that the target draws in
 * a scope the instance runs (the process, or a subprocess a token waits at)
 * and that no migrated trigger token waits for: refused (Camunda 8 opens
 * their subscriptions; ours does not yet).
 */
function newTriggers(
  input: MigrationInput,
  live: readonly ExecutionState[],
  targetOf: (id: string) => string,
): string[] {
  const waited = new Set(live.filter((t) => t.trigger === true).map((t) => `${targetOf(t.activityId)}`));
  const scopes = new Set<string | undefined>([
    undefined,
    ...live.filter((t) => t.status === 'WAITING_SCOPE').map((t) => targetOf(t.activityId)),
  ]);
  return Object.values(input.target.nodes)
    .filter((n) => n.kind === 'eventSubProcess' && (n.trigger.kind === 'message' || n.trigger.kind === 'timer'))
    .filter((n) => scopes.has(n.scope) && !waited.has(n.id))
    .map(
      (n) =>
        `the target draws the event subprocess ${n.id} in ${n.scope ?? 'the process'}, which the instance does not wait for; opening its subscription is not supported: migrate before adding it, or add it in a later version`,
    );
}
