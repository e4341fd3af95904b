import { evaluateCondition } from '../bpmn/condition';
import { jobId } from './ids';
import type { FlowNode, ProcessModel } from '../bpmn/model';
import { CORRELATED_MESSAGES_KEPT, type ExecutionState, type Incident, type IncidentReason, type InstanceState, isOpenIncident, type JobState, type Transition, type WaitingPoint } from './state';

/**
 * The engine core: pure functions from state to a Transition. No I/O, no
 * clock (time comes in as `now`), so Firestore may run them as often as it
 * retries a transaction.
 */

/** A synchronous task handler: runs inside the transaction, so it must be pure. Returns variables to merge. */
export type SyncHandler = (variables: Readonly<Record<string, unknown>>) => Readonly<Record<string, unknown>>;

/** Upper bound of nodes one token passes in one step; a model that loops without waiting hits it. */
export const STEP_LIMIT = 1_000;

interface Run {
  readonly model: ProcessModel;
  readonly sync: Readonly<Record<string, SyncHandler>>;
  readonly now: Date;
  instance: InstanceState;
  readonly executions: Map<string, ExecutionState>;
  readonly jobs: JobState[];
  readonly subscribe: WaitingPoint[];
  readonly unsubscribe: WaitingPoint[];
}

function node(model: ProcessModel, id: string): FlowNode {
  const found = model.nodes[id];
  if (found === undefined) throw new Error(`model ${model.key} has no node ${id}`);
  return found;
}

function targetOf(model: ProcessModel, flowId: string): string {
  const flow = model.flows[flowId];
  if (flow === undefined) throw new Error(`model ${model.key} has no flow ${flowId}`);
  return flow.targetId;
}

function update(run: Run, execution: ExecutionState, changes: Partial<ExecutionState>): ExecutionState {
  const next = { ...execution, ...changes, updatedAt: run.now };
  run.executions.set(next.id, next);
  return next;
}

function raise(run: Run, execution: ExecutionState, reason: IncidentReason, message: string): void {
  const incident: Incident = { reason, executionId: execution.id, activityId: execution.activityId, message, at: run.now };
  run.instance = { ...run.instance, status: 'INCIDENT', incidents: [...run.instance.incidents, incident], updatedAt: run.now };
  update(run, execution, { status: 'ACTIVE' });
}

function end(run: Run, execution: ExecutionState, status: 'ENDED' | 'CANCELLED'): void {
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

/** The flow an exclusive gateway takes: first true condition in document order, else the default. */
function chooseFlow(model: ProcessModel, gatewayId: string, variables: Readonly<Record<string, unknown>>): string | null {
  const gateway = node(model, gatewayId);
  const defaultFlowId = gateway.kind === 'exclusiveGateway' ? gateway.defaultFlowId : null;
  for (const flowId of gateway.outgoing) {
    const flow = model.flows[flowId];
    if (flow === undefined || flowId === defaultFlowId) continue;
    if (flow.condition === null || evaluateCondition(flow.condition, variables)) return flowId;
  }
  return defaultFlowId;
}

/** The key a message wait waits under for a variable's value: a non-empty string, or a finite number as text; null for anything else. */
export function correlationValue(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** Moves a token into `nodeId` and on, until it waits, ends or hits an incident. */
function enter(run: Run, start: ExecutionState, firstNodeId: string): void {
  let execution = start;
  let nodeId = firstNodeId;
  for (let steps = 0; ; steps++) {
    execution = update(run, execution, { activityId: nodeId, step: execution.step + 1, status: 'ACTIVE', jobId: null, waitingFor: null });
    if (steps >= STEP_LIMIT) return raise(run, execution, 'STEP_LIMIT', `passed ${STEP_LIMIT} nodes without waiting`);
    const current = node(run.model, nodeId);
    let nextFlow: string | null | undefined;
    switch (current.kind) {
      case 'startEvent':
        nextFlow = current.outgoing[0];
        break;
      case 'endEvent':
        return end(run, execution, 'ENDED');
      case 'serviceTask':
      case 'sendTask': {
        if (current.async) {
          const job: JobState = {
            id: jobId(execution.id, execution.step),
            processInstanceId: run.instance.id,
            executionId: execution.id,
            activityId: current.id,
            status: 'PENDING',
            attempts: 0,
            lastError: null,
            createdAt: run.now,
            finishedAt: null,
          };
          run.jobs.push(job);
          update(run, execution, { status: 'WAITING_JOB', jobId: job.id });
          return;
        }
        const handler = run.sync[current.id];
        if (handler === undefined) throw new Error(`no synchronous handler registered for task ${current.id}`);
        run.instance = { ...run.instance, variables: { ...run.instance.variables, ...handler(run.instance.variables) }, updatedAt: run.now };
        nextFlow = current.outgoing[0];
        break;
      }
      case 'messageCatchEvent':
      case 'receiveTask': {
        const key = correlationValue(run.instance.variables[current.correlationVariable]);
        if (key === null) {
          return raise(run, execution, 'MISSING_CORRELATION_KEY', `variable ${current.correlationVariable} must be a non-empty string or a number to wait for ${current.messageName}`);
        }
        const point: WaitingPoint = { messageName: current.messageName, correlationKey: key, processInstanceId: run.instance.id, executionId: execution.id, activityId: current.id, createdAt: run.now };
        run.subscribe.push(point);
        update(run, execution, { status: 'WAITING_MESSAGE', waitingFor: { messageName: current.messageName, correlationKey: key } });
        return;
      }
      case 'messageStartEvent':
        nextFlow = current.outgoing[0];
        break;
      case 'timerCatchEvent':
      case 'boundaryTimer':
      case 'eventBasedGateway':
        // Issue 16 in progress: the parser refuses these kinds until the engine runs them.
        throw new Error(`node kind ${current.kind} is not run yet`);
      case 'exclusiveGateway':
        nextFlow = chooseFlow(run.model, current.id, run.instance.variables);
        if (nextFlow === null) return raise(run, execution, 'NO_MATCHING_FLOW', `no condition of gateway ${current.id} holds and it has no default flow`);
        break;
    }
    if (nextFlow === undefined) throw new Error(`node ${nodeId} has no outgoing flow`);
    nodeId = targetOf(run.model, nextFlow);
  }
}

/** Steps that never enter a node (failing a job, cancelling a token) run without a model. */
const NO_MODEL: ProcessModel = { key: '(none)', name: null, version: '', startEventId: null, messageStartEvents: {}, nodes: {}, flows: {} };

function newRun(model: ProcessModel, sync: Readonly<Record<string, SyncHandler>>, instance: InstanceState, now: Date): Run {
  return { model, sync, now, instance, executions: new Map(), jobs: [], subscribe: [], unsubscribe: [] };
}

function finish(run: Run): Transition {
  return { instance: run.instance, executions: [...run.executions.values()], jobs: run.jobs, subscribe: run.subscribe, unsubscribe: run.unsubscribe, timers: [], cancelTimers: [] };
}

/** Leaves the execution's current node by its (single) outgoing flow. */
function leave(run: Run, execution: ExecutionState): void {
  const flowId = node(run.model, execution.activityId).outgoing[0];
  if (flowId === undefined) throw new Error(`node ${execution.activityId} has no outgoing flow`);
  enter(run, execution, targetOf(run.model, flowId));
}

export interface StartInput {
  readonly instanceId: string;
  readonly executionId: string;
  readonly businessKey: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly now: Date;
  /** The start event the token starts at: a message start event's id; default the model's none start event. */
  readonly startEventId?: string;
}

/** A new instance with one token at the start event, run until it waits. */
export function startInstance(model: ProcessModel, sync: Readonly<Record<string, SyncHandler>>, input: StartInput): Transition {
  const startEventId = input.startEventId ?? model.startEventId;
  if (startEventId === null) throw new Error(`process ${model.key} has no none start event`);
  const startKind = node(model, startEventId).kind;
  if (startKind !== 'startEvent' && startKind !== 'messageStartEvent') throw new Error(`${startEventId} of process ${model.key} is a ${startKind}, not a start event`);
  const instance: InstanceState = {
    id: input.instanceId,
    processKey: model.key,
    processVersion: model.version,
    businessKey: input.businessKey,
    status: 'RUNNING',
    variables: input.variables,
    activeExecutionIds: [input.executionId],
    incidents: [],
    createdAt: input.now,
    updatedAt: input.now,
    completedAt: null,
  };
  const run = newRun(model, sync, instance, input.now);
  const execution: ExecutionState = {
    id: input.executionId,
    processInstanceId: instance.id,
    activityId: startEventId,
    status: 'ACTIVE',
    step: 0,
    jobId: null,
    waitingFor: null,
    createdAt: input.now,
    updatedAt: input.now,
  };
  enter(run, execution, startEventId);
  return finish(run);
}

/** A job finished: merge its result and move its token on. The caller checks the job is PENDING and the token waits for it. */
export function completeJob(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: { instance: InstanceState; execution: ExecutionState; job: JobState },
  result: Readonly<Record<string, unknown>>,
  now: Date,
): Transition & { readonly job: JobState } {
  const run = newRun(model, sync, { ...state.instance, variables: { ...state.instance.variables, ...result }, updatedAt: now }, now);
  leave(run, state.execution);
  return { ...finish(run), job: { ...state.job, status: 'DONE', finishedAt: now } };
}

/**
 * A message reached a waiting token: merge its variables, drop the waiting
 * point, move on. `messageId` (the inbox id) is appended to the instance's
 * audit trail `correlatedMessages`.
 */
export function deliverMessage(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: { instance: InstanceState; execution: ExecutionState },
  variables: Readonly<Record<string, unknown>>,
  now: Date,
  messageId: string | null = null,
): Transition {
  const { execution, instance } = state;
  if (execution.status !== 'WAITING_MESSAGE' || execution.waitingFor === null) {
    throw new Error(`execution ${execution.id} does not wait for a message`);
  }
  const audit = messageId === null ? {} : { correlatedMessages: [...(instance.correlatedMessages ?? []), messageId].slice(-CORRELATED_MESSAGES_KEPT) };
  const run = newRun(model, sync, { ...instance, variables: { ...instance.variables, ...variables }, ...audit, updatedAt: now }, now);
  run.unsubscribe.push({ ...execution.waitingFor, processInstanceId: execution.processInstanceId, executionId: execution.id, activityId: execution.activityId, createdAt: execution.createdAt });
  leave(run, execution);
  return finish(run);
}

/** An async step failed for good: the job is FAILED and the instance shows an incident. */
export function failJob(state: { instance: InstanceState; execution: ExecutionState; job: JobState }, error: string, now: Date): Transition & { readonly job: JobState } {
  const run = newRun(NO_MODEL, {}, state.instance, now);
  raise(run, state.execution, 'JOB_FAILED', `job ${state.job.id} at ${state.job.activityId} failed: ${error}`);
  // The token stays at the task, waiting for a repair (retry the job or move the token).
  update(run, run.executions.get(state.execution.id) ?? state.execution, { status: 'WAITING_JOB', jobId: state.job.id });
  return { ...finish(run), job: { ...state.job, status: 'FAILED', lastError: error, finishedAt: now } };
}

/**
 * Repair: put a token at `activityId` (a new token when `execution` is null,
 * else the given one moved there) and run it. The caller decides whether the
 * resulting waiting point may duplicate another (see the store's guard).
 */
export function placeToken(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: { instance: InstanceState; execution: ExecutionState },
  activityId: string,
  now: Date,
): Transition {
  node(model, activityId); // unknown activity: throws before anything changes
  const { execution } = state;
  const run = newRun(model, sync, state.instance, now);
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null) {
    run.unsubscribe.push({ ...execution.waitingFor, processInstanceId: execution.processInstanceId, executionId: execution.id, activityId: execution.activityId, createdAt: execution.createdAt });
  }
  if (!run.instance.activeExecutionIds.includes(execution.id)) {
    run.instance = { ...run.instance, activeExecutionIds: [...run.instance.activeExecutionIds, execution.id], status: run.instance.status === 'COMPLETED' ? 'RUNNING' : run.instance.status, completedAt: null };
  }
  enter(run, execution, activityId);
  return finish(run);
}

/** Repair: end a token where it stands (its waiting point goes with it). */
export function cancelToken(state: { instance: InstanceState; execution: ExecutionState }, now: Date): Transition {
  const { execution } = state;
  const run = newRun(NO_MODEL, {}, state.instance, now);
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null) {
    run.unsubscribe.push({ ...execution.waitingFor, processInstanceId: execution.processInstanceId, executionId: execution.id, activityId: execution.activityId, createdAt: execution.createdAt });
  }
  end(run, execution, 'CANCELLED');
  return finish(run);
}

/** What deciding on an instance's incidents needs: the store reads it by id. */
export interface IncidentState {
  readonly instance: InstanceState;
  /** The instance's active tokens (those of `activeExecutionIds` that exist). */
  readonly executions: readonly ExecutionState[];
  /** The job each WAITING_JOB token waits for, by job id. */
  readonly jobs: Readonly<Record<string, JobState>>;
  /** The waiting points stored for each key a WAITING_MESSAGE token waits under, by key. */
  readonly waiting: Readonly<Record<string, readonly WaitingPoint[]>>;
}

export type IncidentResolution =
  | { readonly kind: 'RESOLVED'; readonly instance: InstanceState; readonly resolved: number }
  | { readonly kind: 'REFUSED'; readonly causes: readonly string[] };

/** Why an active token still needs a repair, or null. */
function causeAt(state: IncidentState, execution: ExecutionState): string | null {
  if (execution.status === 'ACTIVE') return `token ${execution.id} is stopped at ${execution.activityId}: move or cancel it`;
  if (execution.status === 'WAITING_JOB' && execution.jobId !== null && state.jobs[execution.jobId]?.status === 'FAILED') {
    return `token ${execution.id} waits at ${execution.activityId} for FAILED job ${execution.jobId}: move the token onto the step to re-run it, or cancel it`;
  }
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null) {
    const { messageName, correlationKey } = execution.waitingFor;
    const others = (state.waiting[correlationKey] ?? []).filter((w) => w.messageName === messageName && w.executionId !== execution.id);
    if (others.length > 0) {
      const names = others.map((w) => `${w.executionId} of ${w.processInstanceId}`).join(', ');
      return `token ${execution.id} waits for ${messageName} with key ${correlationKey}, and so does ${names}: cancel one`;
    }
  }
  return null;
}

/**
 * Repair: an operator declares an instance's incidents resolved. Refused
 * while a cause persists: a token stopped by an incident (ACTIVE), a token
 * waiting for a FAILED job, a token sharing its waiting point's message and
 * key with another. Otherwise every open incident gets `resolvedAt` and the
 * note, and the instance is RUNNING again, or COMPLETED if no token is left
 * (its last token ended while it was INCIDENT).
 */
export function resolveIncidents(state: IncidentState, note: string | null, now: Date): IncidentResolution {
  const { instance } = state;
  const open = instance.incidents.filter(isOpenIncident).length;
  if (open === 0 && instance.status !== 'INCIDENT') return { kind: 'REFUSED', causes: [`instance ${instance.id} has no open incident`] };
  const causes = state.executions.map((e) => causeAt(state, e)).filter((c): c is string => c !== null);
  if (causes.length > 0) return { kind: 'REFUSED', causes };
  const done = instance.activeExecutionIds.length === 0;
  return {
    kind: 'RESOLVED',
    resolved: open,
    instance: {
      ...instance,
      incidents: instance.incidents.map((i) => (isOpenIncident(i) ? { ...i, resolvedAt: now, resolution: note } : i)),
      resolvedIncidents: (instance.resolvedIncidents ?? 0) + open,
      status: done ? 'COMPLETED' : 'RUNNING',
      completedAt: done ? (instance.completedAt ?? now) : null,
      updatedAt: now,
    },
  };
}
