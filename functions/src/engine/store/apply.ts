import { computeStep, StepFailedError } from '../../core/errors';
import type { Engine, MessageBuffer } from '../engine';
import {
  type ExecutionState,
  type Incident,
  type InstanceState,
  isOpenIncident,
  MAX_LIVE_TOKENS,
  type JobState,
  type TimerState,
  type Transition,
  type WaitingPoint,
} from '../state';
import { deliverMessage, deliveryAddsToken } from '../transitions';
import { asCorrelationKey, plain, refs, saveCorrelationKey } from './collections';
import { readInstanceDoc, readJob, writeInstance } from './instance-doc';
import { staleEnd } from './stale-job';
import { asTimer, nearTimers, pendingTimerDoc } from './timers';
import type { UnitOfWork } from './unit-of-work';
import { writeUserTasks } from './user-tasks';
import { callSteps } from './calls';
import type { Step } from './step';
import { modelOf } from './versions';

/** Two or more tokens now wait for the same message under the same key. */
export interface DuplicateWaitingPoint {
  readonly messageName: string;
  readonly correlationKey: string;
  readonly waiting: readonly WaitingPoint[];
}

const samePoint = (a: WaitingPoint, b: WaitingPoint): boolean =>
  a.executionId === b.executionId && a.messageName === b.messageName;

function withDuplicateIncident(instance: InstanceState, point: WaitingPoint, count: number, now: Date): InstanceState {
  // Only an open incident covers this one: a duplicate that comes back after a resolution is a new incident.
  const already = instance.incidents.some(
    (i) => i.reason === 'DUPLICATE_WAITING_POINT' && i.executionId === point.executionId && isOpenIncident(i),
  );
  if (already) return instance;
  const incident: Incident = {
    reason: 'DUPLICATE_WAITING_POINT',
    executionId: point.executionId,
    activityId: point.activityId,
    message: `${count} tokens wait for ${point.messageName} with correlation key ${point.correlationKey}: the next such message cannot be correlated`,
    at: now,
  };
  return { ...instance, status: 'INCIDENT', incidents: [...instance.incidents, incident], updatedAt: now };
}

/**
 * Writes a Transition into the unit of work: the instance document (with its
 * changed tokens, new jobs and the jobs its tokens left, ended stale: one write), new timers (`timers/{id}`, cancelled
 * ones deleted), waiting points (in the per-key document only: its `shard`,
 * `waitingFor` and `waitingSince` serve the waiting queries, see saveCorrelationKey).
 *
 * The double-token guard lives here, because this is where a waiting point
 * is created: if another token already waits for the same message and key,
 * the new point is still recorded (no state is lost), and every instance
 * involved is marked INCIDENT / DUPLICATE_WAITING_POINT now, not months later
 * when the next message cannot be correlated.
 */
export async function applyTransition(uow: UnitOfWork, t: Transition, now: Date): Promise<DuplicateWaitingPoint[]> {
  const db = uow.db;
  let instance = t.instance;
  const others = new Map<string, InstanceState>();
  const duplicates: DuplicateWaitingPoint[] = [];

  const keys = new Set([...t.subscribe, ...t.unsubscribe].map((p) => p.correlationKey));
  for (const key of keys) {
    const stored = asCorrelationKey(await uow.get(refs.correlationKey(db, key)), key);
    let waiting = stored.waiting.filter((w) => !t.unsubscribe.some((u) => samePoint(u, w)));
    for (const point of t.subscribe.filter((p) => p.correlationKey === key)) {
      waiting = [...waiting.filter((w) => !samePoint(w, point)), point];
      const rivals = waiting.filter((w) => w.messageName === point.messageName);
      if (rivals.length < 2) continue;
      duplicates.push({ messageName: point.messageName, correlationKey: key, waiting: rivals });
      for (const rival of rivals) {
        if (rival.processInstanceId === instance.id) {
          instance = withDuplicateIncident(instance, rival, rivals.length, now);
          continue;
        }
        const current = others.get(rival.processInstanceId) ?? (await loadInstance(uow, rival.processInstanceId));
        if (current !== null) others.set(current.id, withDuplicateIncident(current, rival, rivals.length, now));
      }
    }
    saveCorrelationKey(uow, { ...stored, waiting }, now);
  }

  await writeInstance(uow, instance.id, {
    instance,
    executions: t.executions,
    jobs: [...t.jobs, ...(await staleJobsEnded(uow, instance.id, t.staleJobs, now))],
  });
  for (const other of others.values()) await writeInstance(uow, other.id, { instance: other });
  await writeUserTasks(uow, t.userTasks, t.closeUserTasks, now);
  for (const id of t.cancelTimers) uow.delete(refs.timer(db, id));
  for (const timer of t.timers) uow.create(refs.timer(db, timer.id), plain(pendingTimerDoc(timer, now)));
  return duplicates;
}

/** The PENDING ones of `ids` (jobs whose token left them), ended stale; an old-layout job document is deleted as it is folded in. */
async function staleJobsEnded(
  uow: UnitOfWork,
  instanceId: string,
  ids: readonly string[],
  now: Date,
): Promise<JobState[]> {
  if (ids.length === 0) return [];
  const doc = await readInstanceDoc(uow, instanceId);
  if (doc === null) return [];
  const ended: JobState[] = [];
  for (const id of ids) {
    const found = await readJob(uow, doc, id);
    if (found === null || found.job.status !== 'PENDING') continue;
    if (found.legacyPath !== null) uow.delete(uow.db.doc(found.legacyPath));
    ended.push(staleEnd(found.job, now));
  }
  return ended;
}

/** An instance as this unit of work holds it (instance-doc.ts: one read, cached), or null. */
export async function loadInstance(uow: UnitOfWork, id: string): Promise<InstanceState | null> {
  return (await readInstanceDoc(uow, id))?.instance ?? null;
}

/** Every token of an instance as its document holds them (what a join or a terminate end event sees); none for an unknown instance. */
export async function loadTokens(
  uow: UnitOfWork,
  instanceId: string,
): Promise<Readonly<Record<string, ExecutionState>>> {
  return (await readInstanceDoc(uow, instanceId))?.tokens ?? {};
}

/** A token of an instance, from the instance document (an old-layout one: from `executions/`), or null. */
export async function loadExecution(
  uow: UnitOfWork,
  instanceId: string,
  executionId: string,
): Promise<ExecutionState | null> {
  return (await readInstanceDoc(uow, instanceId))?.tokens[executionId] ?? null;
}

/**
 * Everything one unit of work changed, after buffered messages were
 * delivered. The store's operations return it: dispatch the new jobs after
 * the commit (the transaction may run several times, Cloud Tasks must be
 * called once) and log the duplicate waiting points as errors.
 */
export interface Settled {
  readonly jobs: readonly JobState[];
  /** New timers due within the horizon (NEAR): create their Cloud Tasks after the commit, like `jobs`. FAR ones wait for the sweep. */
  readonly timers: readonly TimerState[];
  readonly duplicates: readonly DuplicateWaitingPoint[];
  /** Inbox ids the buffer consumed on the way. */
  readonly consumed: readonly string[];
}

/** An operation that changed nothing (found its work done, or nothing to do). */
export const NOTHING_SETTLED: Settled = { jobs: [], timers: [], duplicates: [], consumed: [] };

/**
 * The jobs and timers an earlier attempt created (by id) that are still
 * PENDING: what a re-run that finds its own commit landed dispatches again
 * (dispatching one twice is harmless; one already run or fired is left out).
 */
export async function stillPending(
  uow: UnitOfWork,
  instanceId: string,
  jobIds: readonly string[],
  timerIds: readonly string[],
): Promise<{ jobs: JobState[]; timers: TimerState[] }> {
  const jobs: JobState[] = [];
  const doc = await readInstanceDoc(uow, instanceId);
  for (const id of jobIds) {
    const found = doc === null ? null : await readJob(uow, doc, id);
    if (found !== null && found.job.status === 'PENDING') jobs.push(found.job);
  }
  const timers: TimerState[] = [];
  for (const id of timerIds) {
    const data = await uow.get(refs.timer(uow.db, id));
    if (data !== undefined && asTimer(data).status === 'PENDING') timers.push(asTimer(data));
  }
  return { jobs, timers };
}

/**
 * Most transitions one unit of work applies (the step itself, the instances
 * its call and multi-instance activities start and end, the buffered
 * messages its new waits take): a step that needs more is more than one
 * transaction may hold (Firestore takes about 500 documents in one) and
 * fails as a StepFailedError, written nowhere.
 */
export const UNIT_BUDGET = 500;

/**
 * Transitions after which a unit takes no further buffered message: a
 * backlog on one key is consumed in one transaction up to here, and the
 * rest stays OPEN for the relay's next document, so a long backlog never
 * makes a unit fail.
 */
export const BUFFERED_SHARE = 400;

/**
 * Applies a transition, then what follows from it in the same unit of work,
 * depth first: the instances its call activities start or terminate, the
 * caller its called instance's end moves on (an item's end: counted,
 * items.ts), and every new waiting point's buffered message (if the engine
 * has a buffer). Each follow-up is computed when its turn comes
 * ({@link Step}), so two changes of one instance never start from the same
 * state, and right after what caused it, so a multi-instance activity whose
 * completion condition holds leaves before its other items go on.
 */
export async function applyAndSettle(uow: UnitOfWork, engine: Engine, first: Transition, now: Date): Promise<Settled> {
  const jobs: JobState[] = [];
  const timers: TimerState[] = [];
  const duplicates: DuplicateWaitingPoint[] = [];
  const consumed: string[] = [];
  let applied = 0;
  /** Applies one transition; returns the steps that follow from it. */
  const apply = async (t: Transition): Promise<Step[]> => {
    applied += 1;
    if (applied > UNIT_BUDGET)
      throw new StepFailedError(
        `the step would apply more than ${UNIT_BUDGET} transitions in one transaction (call and multi-instance activities that start and end at once, buffered messages)`,
      );
    const dups = await applyTransition(uow, t, now);
    duplicates.push(...dups);
    jobs.push(...t.jobs);
    // A timer set and cancelled within this unit (a buffered message took its token on) never existed.
    const cancelled = new Set(t.cancelTimers);
    for (let i = timers.length - 1; i >= 0; i--) if (cancelled.has(timers[i]?.id ?? '')) timers.splice(i, 1);
    timers.push(...nearTimers(t.timers, now));
    // Call activities: instances started or terminated, a caller moved on by its child's end.
    const follow = callSteps(uow, engine, t, now);
    if (engine.buffer === null) return follow;
    const buffer = engine.buffer;
    for (const point of t.subscribe) {
      // Two tokens wait: delivering to either would be a guess. The relay parks the message instead.
      if (dups.some((d) => d.correlationKey === point.correlationKey && d.messageName === point.messageName)) continue;
      // A long backlog of one key is taken in one unit up to a share of its budget; the rest stays OPEN for the relay.
      follow.push(() =>
        applied >= BUFFERED_SHARE ? Promise.resolve(null) : takeBuffered(uow, engine, buffer, point, now, consumed),
      );
    }
    return follow;
  };
  const stack: Step[] = [() => Promise.resolve(first)];
  for (let step = stack.pop(); step !== undefined; step = stack.pop()) {
    const next = await step();
    if (next === null) continue;
    if ('instance' in next) stack.push(...(await apply(next)).reverse());
    else if ('siblings' in next) {
      // Each sibling is applied before anything that follows from any of them.
      const after: Step[] = [];
      for (const sibling of next.siblings) {
        const t = await sibling();
        if (t === null) continue;
        if (!('instance' in t)) throw new Error('a sibling step gives a transition or nothing');
        after.push(...(await apply(t)));
      }
      stack.push(...after.reverse());
    } else stack.push(...[...next].reverse());
  }
  return { jobs, timers, duplicates, consumed };
}

/**
 * A new waiting point takes its key's oldest buffered message, if its token
 * still waits there (the branches of an event-based gateway are several
 * points of one token: the first message moves it, the others find it gone).
 */
async function takeBuffered(
  uow: UnitOfWork,
  engine: Engine,
  buffer: MessageBuffer,
  point: WaitingPoint,
  now: Date,
  consumed: string[],
): Promise<Transition | null> {
  const waiting = await waitingState(uow, point);
  if (waiting === null) return null;
  // A delivery that would pass the instance's most live tokens leaves the message to the relay, which parks it.
  const model = await modelOf(uow, engine, waiting.instance);
  if (
    waiting.instance.activeExecutionIds.length >= MAX_LIVE_TOKENS &&
    deliveryAddsToken(model, waiting.execution, point)
  )
    return null;
  const buffered = await buffer.take(uow, point, now);
  if (buffered === null) return null;
  consumed.push(buffered.inboxId);
  return computeStep(`delivering buffered message ${buffered.inboxId} at ${point.activityId}`, () =>
    deliverMessage(model, engine.sync, { ...waiting, point }, buffered.variables, now, buffered.inboxId),
  );
}

/**
 * The instance and token of a waiting point whose token still waits there:
 * WAITING_MESSAGE, or WAITING_EVENT at the point's gateway; null for a
 * stale point (its token gone or moved on).
 */
export async function waitingState(
  uow: UnitOfWork,
  point: WaitingPoint,
): Promise<{
  instance: InstanceState;
  execution: ExecutionState;
  tokens: Readonly<Record<string, ExecutionState>>;
} | null> {
  const instance = await loadInstance(uow, point.processInstanceId);
  const execution = await loadExecution(uow, point.processInstanceId, point.executionId);
  if (instance === null || execution === null) return null;
  const waits =
    point.boundaryOf !== undefined
      ? execution.activityId === point.boundaryOf &&
        (execution.boundaryWaits ?? []).some((w) => w.activityId === point.activityId)
      : point.gatewayId === undefined
        ? execution.status === 'WAITING_MESSAGE'
        : execution.status === 'WAITING_EVENT' && execution.activityId === point.gatewayId;
  return waits ? { instance, execution, tokens: await loadTokens(uow, instance.id) } : null;
}
