/**
 * Repair: migrate one process instance to another version of its model
 * (`inbox migrate`), in one transaction: the instance is re-read by id,
 * held to its preview (the fingerprint of its basis, engine/migration/expect.ts),
 * planned (engine/migration/plan.ts, pure) and rewritten: its version, every
 * live token's element, its jobs and open incidents in the instance
 * document, its timers, its waiting points in the correlation key
 * documents, its user tasks and the `calledBy` of the instances its call
 * activities started. Idempotent by request id, as every repair
 * (repair-request.ts): a re-run finds its record and reports what the first
 * run did, changing nothing. The Cloud Tasks of the timers it sets are the
 * caller's, after the commit.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { ProcessModel } from '../../bpmn/model';
import type { Engine } from '../engine';
import type { PointChange } from '../migration/catch-events';
import { fingerprint, migrationBasis } from '../migration/expect';
import { type ElementMapping, type MigrationChanges, planMigration, type TokenMove } from '../migration/plan';
import { describeFacts, type RepairBasis } from '../repair-basis';
import type { TimerState, WaitingPoint } from '../state';
import { loadInstance, stillPending } from './apply';
import { asCorrelationKey, plain, refs, saveCorrelationKey } from './collections';
import { readInstanceDoc, writeInstance } from './instance-doc';
import {
  appliedRepair,
  type RepairBinding,
  repairRecord,
  RepairRefusedError,
  type RepairOptions,
  runRepair,
  withRepair,
} from './repair-request';
import { asTimer, nearTimers, pendingTimerDoc } from './timers';
import type { UnitOfWork } from './unit-of-work';
import { storedModel, type VersionRead, versionRef } from './versions';

/** What `inbox migrate` asks of one instance. */
export interface MigrateRequest {
  readonly processInstanceId: string;
  readonly processKey: string;
  readonly from: string;
  readonly to: string;
  readonly mapping: ElementMapping;
  readonly now: Date;
  /** One per command run: every instance records it. */
  readonly requestId: string;
}

/** How it runs: {@link RepairOptions} but the basis, which is the instance's fingerprint here. */
export interface MigrateOptions extends Omit<RepairOptions, 'expect'> {
  /** The fingerprint its preview read; null: the preview did not list this instance; absent: no preview to hold it to. */
  readonly expect?: string | null;
}

/** What a migration of one instance did (or, previewed, would do). */
export interface Migrated {
  readonly moves: readonly TokenMove[];
  readonly alreadyApplied: boolean;
  /** What it acted on, as read, and its fingerprint (null when already applied). */
  readonly basis: RepairBasis | null;
  readonly fingerprint: string | null;
  /** New timers due within the horizon: their Cloud Tasks after the commit. */
  readonly timers: readonly TimerState[];
}

/** What a migration's request id is bound to: the versions and the mapping. */
export function migrateBinding(request: Pick<MigrateRequest, 'processKey' | 'from' | 'to' | 'mapping'>): RepairBinding {
  const map = Object.entries(request.mapping)
    .map(([a, b]) => `${a}=${b}`)
    .sort()
    .join(',');
  return {
    kind: 'migrate',
    target: `${request.processKey} ${request.from} to ${request.to}${map === '' ? '' : ` mapping ${map}`}`,
  };
}

/**
 * A stored version of a model (versions.ts, storedModel: the engine's, or
 * read through `read` and kept by the engine). Refused when it is not
 * stored: a migration never runs on a guess.
 */
export async function storedVersion(
  engine: Engine,
  processKey: string,
  version: string,
  read: VersionRead,
): Promise<ProcessModel> {
  const model = await storedModel(engine, processKey, version, read);
  if (model === null)
    throw new RepairRefusedError(
      `version ${version} of ${processKey} is not stored in processVersions: list the stored ones with inbox versions ${processKey}`,
    );
  return model;
}

/** Migrates one instance (see the module's comment); refusals are RepairRefusedErrors, nothing changed. */
export async function migrateInstance(
  db: Firestore,
  engine: Engine,
  request: MigrateRequest,
  options: MigrateOptions = {},
): Promise<Migrated> {
  const binding = migrateBinding(request);
  return runRepair(
    db,
    async (uow) => {
      const id = request.processInstanceId;
      const doc = await readInstanceDoc(uow, id);
      if (doc === null) throw new RepairRefusedError(`process instance ${id} does not exist`);
      const applied = appliedRepair(doc.instance, request.requestId, binding);
      if (applied !== null)
        return {
          ...(await doneBefore(uow, id, applied.details)),
          alreadyApplied: true,
          basis: null,
          fingerprint: null,
        };
      const { instance } = doc;
      if (instance.processKey !== request.processKey)
        throw new RepairRefusedError(`instance ${id} runs ${instance.processKey}, not ${request.processKey}`);
      const basis = migrationBasis(instance, doc.tokens);
      const fp = fingerprint(basis);
      if (options.expect === null)
        throw new RepairRefusedError(
          `instance ${id} was not in the preview: nothing was done to it; preview again to include it`,
        );
      if (options.expect !== undefined && options.expect !== fp)
        throw new RepairRefusedError(
          `refused: instance ${id} changed since the preview (now ${describeFacts(basis)}): nothing was done to it; preview again to see what a migration would do now`,
        );
      if (instance.processVersion !== request.from)
        throw new RepairRefusedError(`instance ${id} is on version ${instance.processVersion}, not ${request.from}`);
      if (instance.status === 'COMPLETED')
        throw new RepairRefusedError(`instance ${id} has completed: nothing to migrate`);
      const read: VersionRead = (processKey, version) => uow.get(versionRef(uow.db, processKey, version));
      const source = await storedVersion(engine, request.processKey, request.from, read);
      const target = await storedVersion(engine, request.processKey, request.to, read);
      const timers: Record<string, TimerState> = {};
      for (const token of Object.values(doc.tokens))
        for (const timerId of token.timerIds ?? []) {
          const data = await uow.get(refs.timer(uow.db, timerId));
          if (data !== undefined && asTimer(data).status === 'PENDING') timers[timerId] = asTimer(data);
        }
      const plan = planMigration({ ...doc, timers, source, target, mapping: request.mapping, now: request.now });
      if (plan.refusals.length > 0) throw new RepairRefusedError(`instance ${id}: ${plan.refusals.join('; ')}`);
      const created = nearTimers(plan.changes.createTimers, request.now);
      const record = repairRecord(
        binding,
        request.requestId,
        request.now,
        { moves: plan.moves.map((m) => ({ ...m, effects: [...m.effects] })), timerIds: created.map((t) => t.id) },
        options.actor,
      );
      await writeChanges(uow, plan.changes, request.now);
      await writeInstance(uow, id, {
        instance: withRepair(plan.changes.instance, record),
        executions: plan.changes.executions,
        jobs: plan.changes.jobs,
      });
      return { moves: plan.moves, alreadyApplied: false, basis, fingerprint: fp, timers: created };
    },
    options.sink === undefined ? {} : { sink: options.sink },
  );
}

/** What an applied migration's record says it did, with the timers it set that are still PENDING (dispatched again: harmless). */
async function doneBefore(
  uow: UnitOfWork,
  instanceId: string,
  details: Readonly<Record<string, unknown>>,
): Promise<Pick<Migrated, 'moves' | 'timers'>> {
  const ids: unknown[] = Array.isArray(details.timerIds) ? details.timerIds : [];
  const { timers } = await stillPending(
    uow,
    instanceId,
    [],
    ids.filter((t): t is string => typeof t === 'string'),
  );
  return { moves: Array.isArray(details.moves) ? (details.moves as TokenMove[]) : [], timers };
}

/** The documents keyed by element besides the instance: timers, waiting points, user tasks, called instances. */
async function writeChanges(uow: UnitOfWork, changes: MigrationChanges, now: Date): Promise<void> {
  const db = uow.db;
  for (const t of changes.keepTimers) {
    const data = await uow.get(refs.timer(db, t.id));
    if (data !== undefined)
      uow.set(refs.timer(db, t.id), { ...data, activityId: t.activityId, waitingAt: t.waitingAt });
  }
  for (const id of changes.cancelTimers) uow.delete(refs.timer(db, id));
  for (const timer of changes.createTimers) uow.create(refs.timer(db, timer.id), plain(pendingTimerDoc(timer, now)));
  for (const key of new Set(changes.points.map(keyOf))) {
    const stored = asCorrelationKey(await uow.get(refs.correlationKey(db, key)), key);
    const waiting = changes.points.filter((c) => keyOf(c) === key).reduce(applyPoint, stored.waiting);
    saveCorrelationKey(uow, { ...stored, waiting }, now);
  }
  for (const task of changes.userTasks) {
    const data = await uow.get(refs.userTask(db, task.id));
    if (data !== undefined)
      uow.set(refs.userTask(db, task.id), { ...data, activityId: task.activityId, name: task.name });
  }
  for (const caller of changes.callers) {
    const child = await loadInstance(uow, caller.instanceId);
    if (child?.calledBy === undefined) continue;
    await writeInstance(uow, child.id, {
      instance: { ...child, calledBy: { ...child.calledBy, activityId: caller.activityId } },
    });
  }
}

const keyOf = (c: PointChange): string => (c.op === 'add' ? c.point.correlationKey : c.correlationKey);

function applyPoint(waiting: readonly WaitingPoint[], c: PointChange): WaitingPoint[] {
  if (c.op === 'add')
    return [
      ...waiting.filter((w) => !(w.executionId === c.point.executionId && w.activityId === c.point.activityId)),
      c.point,
    ];
  const mine = (w: WaitingPoint): boolean => w.executionId === c.executionId && w.activityId === c.activityId;
  if (c.op === 'remove') return waiting.filter((w) => !mine(w));
  return waiting.map((w) => (mine(w) ? { ...w, ...c.to } : w));
}
