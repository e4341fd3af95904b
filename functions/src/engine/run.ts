/**
 * One step of the engine core while it is being computed: the state it
 * started from and everything it changed so far, plus the helpers every
 * transition shares. Pure, like the rest of the core (transitions.ts).
 */
import { type FlowNode, type ProcessModel, TRANSITION_BUDGET } from '../bpmn/model';
import { itemInstanceId } from './ids';
import { isOpenIncident, MAX_LIVE_TOKENS } from './state';
import type {
  CallCancel,
  CallStart,
  ClosedUserTask,
  ExecutionState,
  Incident,
  IncidentReason,
  InstanceState,
  JobState,
  TimerState,
  Transition,
  UserTaskState,
  WaitingPoint,
} from './state';

/** A synchronous task handler: runs inside the transaction, so it must be pure. Returns variables to merge. */
export type SyncHandler = (variables: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>;

/** A transition being computed: mutable lists the store later writes in one transaction. */
export interface Run {
  readonly model: ProcessModel;
  readonly sync: Readonly<Record<string, SyncHandler>>;
  readonly now: Date;
  instance: InstanceState;
  /** The instance's tokens as stored when the step began (the instance document's `tokens`): what a join or a terminate end event sees of the other tokens. */
  readonly stored: Readonly<Record<string, ExecutionState>>;
  readonly executions: Map<string, ExecutionState>;
  readonly jobs: JobState[];
  readonly subscribe: WaitingPoint[];
  readonly unsubscribe: WaitingPoint[];
  readonly timers: TimerState[];
  readonly cancelTimers: string[];
  readonly staleJobs: string[];
  readonly userTasks: UserTaskState[];
  readonly closeUserTasks: ClosedUserTask[];
  readonly calls: CallStart[];
  readonly cancelCalls: CallCancel[];
  readonly endBatches: { readonly batch: string; readonly shards: number }[];
  /** The work done so far (every node entered, every token created): at most TRANSITION_BUDGET. */
  spent: number;
  /** Set once the budget ran out: the token that passed it has its STEP_LIMIT incident; every later move stops where it is. */
  exhausted: boolean;
}

/** Steps that never enter a node (failing a job, cancelling a token) run without a model. */
export const NO_MODEL: ProcessModel = {
  key: '(none)',
  name: null,
  version: '',
  startEventId: null,
  messageStartEvents: {},
  nodes: {},
  flows: {},
};

export function newRun(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  instance: InstanceState,
  now: Date,
  stored: Readonly<Record<string, ExecutionState>> = {},
): Run {
  return {
    model,
    sync,
    now,
    instance,
    stored,
    executions: new Map(),
    jobs: [],
    subscribe: [],
    unsubscribe: [],
    timers: [],
    cancelTimers: [],
    staleJobs: [],
    userTasks: [],
    closeUserTasks: [],
    calls: [],
    cancelCalls: [],
    endBatches: [],
    spent: 0,
    exhausted: false,
  };
}

/** A token as it stands in this step: changed here, else as stored. */
export function tokenOf(run: Run, id: string): ExecutionState | undefined {
  return run.executions.get(id) ?? run.stored[id];
}

/** The tokens not yet ended, as they stand in this step. */
export function liveTokens(run: Run): ExecutionState[] {
  return run.instance.activeExecutionIds.flatMap((id) => {
    const token = tokenOf(run, id);
    return token === undefined ? [] : [token];
  });
}

export function finish(run: Run): Transition {
  standbyDone(run);
  stuckJoins(run);
  statusOfTokens(run);
  // A timer or job set and left again within this step (a subprocess or call that ends at once, a token a
  // terminate end event cancels) never existed: neither created nor deleted, nor dispatched.
  const timersLeft = new Set(run.cancelTimers);
  const jobsLeft = new Set(run.staleJobs);
  const timers = run.timers.filter((t) => !timersLeft.has(t.id));
  const jobs = run.jobs.filter((j) => !jobsLeft.has(j.id));
  const setHere = (id: string, made: readonly { readonly id: string }[]): boolean => made.some((m) => m.id === id);
  return {
    instance: run.instance,
    executions: [...run.executions.values()],
    jobs,
    subscribe: run.subscribe,
    unsubscribe: run.unsubscribe,
    timers,
    cancelTimers: run.cancelTimers.filter((id) => !setHere(id, run.timers)),
    staleJobs: run.staleJobs.filter((id) => !setHere(id, run.jobs)),
    userTasks: run.userTasks,
    closeUserTasks: run.closeUserTasks,
    calls: run.calls,
    cancelCalls: run.cancelCalls,
    endBatches: run.endBatches,
  };
}

/**
 * An instance's status agrees with its tokens after every transition: one
 * with a live token is never COMPLETED (a repair that gives a completed or
 * terminated instance a token makes it RUNNING, or keeps it INCIDENT), and
 * one without is never RUNNING.
 */
function statusOfTokens(run: Run): void {
  const { instance } = run;
  const live = instance.activeExecutionIds.length > 0;
  if (live && instance.status === 'COMPLETED') run.instance = { ...instance, status: 'RUNNING', completedAt: null };
  else if (!live && instance.status === 'RUNNING')
    run.instance = { ...instance, status: 'COMPLETED', completedAt: instance.completedAt ?? run.now };
}

/**
 * The process's own work is done when only standby triggers of its event
 * subprocesses are left at the process level: they are cancelled, so the
 * instance completes. (A subprocess's triggers go when it is left:
 * scopes.ts, leaveScopeIfDone.)
 */
function standbyDone(run: Run): void {
  const live = liveTokens(run);
  if (live.length === 0 || live.some((t) => t.trigger !== true || t.parentId !== undefined)) return;
  for (const token of live) end(run, release(run, token, { reason: 'the process ended' }), 'CANCELLED');
}

/**
 * A join that can never complete is an incident, not a silent wait: when
 * every token left waits at a parallel join, none of them can bring another
 * (a branch ended, a repair cancelled one), so each join gets a
 * JOIN_INCOMPLETE incident (once while open) naming the flows it lacks.
 * The tokens stay WAITING_JOIN: a repair that puts a token on a missing
 * flow's path, or moves one to the join, completes it.
 */
function stuckJoins(run: Run): void {
  // A subprocess's token waits for its children and a standby trigger for its event: neither brings anything to a join.
  const live = liveTokens(run).filter((t) => t.status !== 'WAITING_SCOPE' && t.trigger !== true);
  if (live.length === 0 || live.some((t) => t.status !== 'WAITING_JOIN')) return;
  const byJoin = new Map<string, ExecutionState[]>();
  for (const token of live) byJoin.set(token.activityId, [...(byJoin.get(token.activityId) ?? []), token]);
  for (const [joinId, tokens] of byJoin) {
    const first = tokens[0] as ExecutionState;
    const arrived = new Set(tokens.map((t) => t.arrivedBy));
    const missing = (run.model.nodes[joinId]?.incoming ?? []).filter((f) => !arrived.has(f));
    noteIncident(
      run,
      'JOIN_INCOMPLETE',
      first.id,
      joinId,
      `join ${joinId} waits for a token on ${missing.join(', ') || 'another flow'}, and no token is left that could bring one`,
    );
  }
}

export function node(model: ProcessModel, id: string): FlowNode {
  const found = model.nodes[id];
  if (found === undefined) throw new Error(`model ${model.key} has no node ${id}`);
  return found;
}

export function targetOf(model: ProcessModel, flowId: string): string {
  const flow = model.flows[flowId];
  if (flow === undefined) throw new Error(`model ${model.key} has no flow ${flowId}`);
  return flow.targetId;
}

export function update(run: Run, execution: ExecutionState, changes: Partial<ExecutionState>): ExecutionState {
  const next = { ...execution, ...changes, updatedAt: run.now };
  run.executions.set(next.id, next);
  return next;
}

/** Why `count` more tokens cannot be made in this step, or null: the transition's budget, or the instance's live tokens. */
export function noRoomFor(
  run: Run,
  count: number,
): { readonly reason: IncidentReason; readonly message: string } | null {
  if (run.exhausted || run.spent + count > TRANSITION_BUDGET)
    return {
      reason: 'STEP_LIMIT',
      message: `the step would do more than ${TRANSITION_BUDGET} nodes and tokens in all without waiting`,
    };
  const live = run.instance.activeExecutionIds.length;
  if (live + count > MAX_LIVE_TOKENS)
    return {
      reason: 'TOKEN_LIMIT',
      message: `the instance holds ${live} live tokens and may hold at most ${MAX_LIVE_TOKENS}`,
    };
  return null;
}

/**
 * An incident about an event, not a stopped token (the token it names goes
 * on): recorded once while one of the same reason at the same element is open.
 */
export function noteIncident(
  run: Run,
  reason: IncidentReason,
  executionId: string,
  activityId: string,
  message: string,
): void {
  const open = run.instance.incidents.some(
    (i) => i.reason === reason && i.activityId === activityId && isOpenIncident(i),
  );
  if (!open) addIncident(run, reason, executionId, activityId, message);
}

/**
 * A new live token of the instance at `activityId` (ACTIVE, step 0), inside
 * the scope `parentId` when given: listed in `activeExecutionIds`, counted
 * against the step's budget. Its id derives from what made it, so a re-run
 * of the step makes the same token. Null when there is no room for it
 * ({@link noRoomFor}): the caller stops the token that needed it, or notes
 * the event it did not take.
 */
export function newToken(
  run: Run,
  id: string,
  activityId: string,
  parentId: string | undefined,
  fields: Partial<ExecutionState> = {},
): ExecutionState | null {
  if (noRoomFor(run, 1) !== null) return null;
  run.spent += 1;
  run.instance = { ...run.instance, activeExecutionIds: [...run.instance.activeExecutionIds, id] };
  return update(
    run,
    {
      id,
      processInstanceId: run.instance.id,
      ...(parentId === undefined ? {} : { parentId }),
      activityId,
      status: 'ACTIVE',
      step: 0,
      jobId: null,
      waitingFor: null,
      createdAt: run.now,
      updatedAt: run.now,
    },
    fields,
  );
}

/** Records an open incident on the instance (INCIDENT until an operator resolves it). */
export function addIncident(
  run: Run,
  reason: IncidentReason,
  executionId: string,
  activityId: string,
  message: string,
): void {
  const incident: Incident = { reason, executionId, activityId, message, at: run.now };
  run.instance = {
    ...run.instance,
    status: 'INCIDENT',
    incidents: [...run.instance.incidents, incident],
    updatedAt: run.now,
  };
}

/** Stops a token with an incident: it stays ACTIVE at its node until a repair moves or cancels it. */
export function raise(run: Run, execution: ExecutionState, reason: IncidentReason, message: string): void {
  addIncident(run, reason, execution.id, execution.activityId, message);
  update(run, execution, { status: 'ACTIVE' });
}

export function end(run: Run, execution: ExecutionState, status: 'ENDED' | 'CANCELLED'): void {
  update(run, execution, { status, jobId: null, waitingFor: null });
  const active = run.instance.activeExecutionIds.filter((id) => id !== execution.id);
  const done = active.length === 0;
  run.instance = {
    ...run.instance,
    activeExecutionIds: active,
    // An instance with an open incident stays INCIDENT until an operator resolves it (resolveIncidents), even with no token left.
    status: done && run.instance.status === 'RUNNING' ? 'COMPLETED' : run.instance.status,
    completedAt: done ? run.now : run.instance.completedAt,
    updatedAt: run.now,
  };
}

/** The waiting points a token holds: its message wait's, or one per message branch of the event-based gateway it waits at. */
export function pointsOf(execution: ExecutionState): WaitingPoint[] {
  const base = {
    processInstanceId: execution.processInstanceId,
    executionId: execution.id,
    createdAt: execution.createdAt,
  };
  const boundary = (execution.boundaryWaits ?? []).map((w): WaitingPoint => ({
    ...w,
    ...base,
    boundaryOf: execution.activityId,
    standby: true,
  }));
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null)
    return [
      {
        ...execution.waitingFor,
        ...base,
        activityId: execution.activityId,
        ...(execution.trigger === true ? { standby: true as const } : {}),
      },
      ...boundary,
    ];
  if (execution.status !== 'WAITING_EVENT') return boundary;
  return [
    ...(execution.gatewayWaits ?? []).map((w) => ({ ...w, ...base, gatewayId: execution.activityId })),
    ...boundary,
  ];
}

/**
 * A token leaves the node it waits at: every waiting point it holds is
 * unsubscribed, every timer it waits with is cancelled and the job it waits
 * for is stale, except what moves it now: the timer that fires
 * (`except.timerId`, written FIRED by the caller) or the job that finished
 * (`except.jobId`, written DONE by the caller).
 */
export function release(
  run: Run,
  execution: ExecutionState,
  except: {
    readonly timerId?: string;
    readonly jobId?: string;
    /** The user task that completes now (written COMPLETED by the caller). */
    readonly userTaskId?: string;
    /** The called instance that ended now (its end moves the token). */
    readonly calledInstanceId?: string;
    /** The items ended now (their last end, or the completion condition, moves the token): none is terminated here. */
    readonly itemsDone?: true;
    /** Why the token leaves: the cancel reason of a user task it leaves open. */
    readonly reason?: string;
  } = {},
): ExecutionState {
  for (const point of pointsOf(execution)) {
    // A point this very step subscribed never reached the store: it goes from the step's subscriptions instead.
    const here = run.subscribe.findIndex(
      (p) =>
        p.executionId === point.executionId &&
        p.messageName === point.messageName &&
        p.correlationKey === point.correlationKey,
    );
    if (here >= 0) run.subscribe.splice(here, 1);
    else run.unsubscribe.push(point);
  }
  run.cancelTimers.push(...(execution.timerIds ?? []).filter((id) => id !== except.timerId));
  if (execution.status === 'WAITING_JOB' && execution.jobId !== null && execution.jobId !== except.jobId)
    run.staleJobs.push(execution.jobId);
  if (
    execution.status === 'WAITING_USER' &&
    execution.userTaskId !== undefined &&
    execution.userTaskId !== except.userTaskId
  ) {
    run.closeUserTasks.push({ id: execution.userTaskId, reason: except.reason ?? 'its token left the task' });
  }
  if (
    execution.status === 'WAITING_CALL' &&
    execution.calledInstanceId !== undefined &&
    execution.calledInstanceId !== except.calledInstanceId
  ) {
    run.cancelCalls.push({
      instanceId: execution.calledInstanceId,
      reason: except.reason ?? `its caller's token left ${execution.activityId}`,
    });
  }
  if (execution.status === 'WAITING_ITEMS' && execution.items !== undefined) {
    const { batch, total, shards } = execution.items;
    run.endBatches.push({ batch, shards });
    if (except.itemsDone !== true) {
      const reason = except.reason ?? `its caller's token left ${execution.activityId}`;
      for (let index = 0; index < total; index++)
        run.cancelCalls.push({ instanceId: itemInstanceId(batch, index), reason });
    }
  }
  const changes: {
    waitingFor: null;
    items?: undefined;
    calledInstanceId?: undefined;
    timerIds?: string[];
    gatewayWaits?: [];
    arrivedBy?: undefined;
    userTaskId?: undefined;
    boundaryWaits?: [];
  } = { waitingFor: null };
  if (execution.boundaryWaits !== undefined) changes.boundaryWaits = [];
  if (execution.timerIds !== undefined) changes.timerIds = [];
  if (execution.gatewayWaits !== undefined) changes.gatewayWaits = [];
  if (execution.arrivedBy !== undefined) changes.arrivedBy = undefined;
  if (execution.userTaskId !== undefined) changes.userTaskId = undefined;
  if (execution.calledInstanceId !== undefined) changes.calledInstanceId = undefined;
  if (execution.items !== undefined) changes.items = undefined;
  return update(run, execution, changes);
}
