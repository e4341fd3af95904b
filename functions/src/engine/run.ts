/**
 * One step of the engine core while it is being computed: the state it
 * started from and everything it changed so far, plus the helpers every
 * transition shares. Pure, like the rest of the core (transitions.ts).
 */
import type { FlowNode, ProcessModel } from '../bpmn/model';
import type {
  ExecutionState,
  Incident,
  IncidentReason,
  InstanceState,
  JobState,
  TimerState,
  Transition,
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
  readonly executions: Map<string, ExecutionState>;
  readonly jobs: JobState[];
  readonly subscribe: WaitingPoint[];
  readonly unsubscribe: WaitingPoint[];
  readonly timers: TimerState[];
  readonly cancelTimers: string[];
  readonly staleJobs: string[];
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
): Run {
  return {
    model,
    sync,
    now,
    instance,
    executions: new Map(),
    jobs: [],
    subscribe: [],
    unsubscribe: [],
    timers: [],
    cancelTimers: [],
    staleJobs: [],
  };
}

export function finish(run: Run): Transition {
  return {
    instance: run.instance,
    executions: [...run.executions.values()],
    jobs: run.jobs,
    subscribe: run.subscribe,
    unsubscribe: run.unsubscribe,
    timers: run.timers,
    cancelTimers: run.cancelTimers,
    staleJobs: run.staleJobs,
  };
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

/** Stops a token with an incident: it stays ACTIVE at its node until a repair moves or cancels it. */
export function raise(run: Run, execution: ExecutionState, reason: IncidentReason, message: string): void {
  const incident: Incident = {
    reason,
    executionId: execution.id,
    activityId: execution.activityId,
    message,
    at: run.now,
  };
  run.instance = {
    ...run.instance,
    status: 'INCIDENT',
    incidents: [...run.instance.incidents, incident],
    updatedAt: run.now,
  };
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
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null)
    return [{ ...execution.waitingFor, ...base, activityId: execution.activityId }];
  if (execution.status !== 'WAITING_EVENT') return [];
  return (execution.gatewayWaits ?? []).map((w) => ({ ...w, ...base, gatewayId: execution.activityId }));
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
  except: { readonly timerId?: string; readonly jobId?: string } = {},
): ExecutionState {
  run.unsubscribe.push(...pointsOf(execution));
  run.cancelTimers.push(...(execution.timerIds ?? []).filter((id) => id !== except.timerId));
  if (execution.status === 'WAITING_JOB' && execution.jobId !== null && execution.jobId !== except.jobId)
    run.staleJobs.push(execution.jobId);
  const changes: { waitingFor: null; timerIds?: string[]; gatewayWaits?: [] } = { waitingFor: null };
  if (execution.timerIds !== undefined) changes.timerIds = [];
  if (execution.gatewayWaits !== undefined) changes.gatewayWaits = [];
  return update(run, execution, changes);
}
