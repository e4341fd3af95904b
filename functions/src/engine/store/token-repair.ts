import { type DuplicateWaitingPoint, loadInstance, type Settled, stillPending } from './apply';
import { writeInstance } from './instance-doc';
import type { RepairBasis } from '../repair-basis';
import { type RepairActor, type RepairBinding, type RepairRecord, repairRecord, withRepair } from './repair-request';
import type { UnitOfWork } from './unit-of-work';

/**
 * What a repair of tokens did; `alreadyApplied`: found done by an earlier
 * attempt of the same request; `basis`: what it acted on, as read (null when
 * already applied: the state is the repair's own result then).
 */
export type Repaired = Settled & { readonly alreadyApplied: boolean; readonly basis: RepairBasis | null };

/**
 * Records a token repair on its instance, after everything else of the unit
 * of work (the instance as the unit holds it now, buffered deliveries
 * included), with what a re-run must report: the token, the new jobs and
 * timers (so the caller still dispatches them), consumed messages and duplicates.
 */
export async function recordOnInstance(
  uow: UnitOfWork,
  instanceId: string,
  binding: RepairBinding,
  requestId: string,
  executionId: string,
  changed: Settled,
  now: Date,
  actor?: RepairActor,
): Promise<void> {
  const instance = await loadInstance(uow, instanceId);
  if (instance === null) return;
  const record: RepairRecord = repairRecord(
    binding,
    requestId,
    now,
    {
      executionId,
      jobIds: changed.jobs.map((j) => j.id),
      timerIds: changed.timers.map((t) => t.id),
      consumed: changed.consumed,
      duplicates: changed.duplicates,
    },
    actor,
  );
  await writeInstance(uow, instanceId, { instance: withRepair(instance, record) });
}

/** What an applied repair did, re-read for a re-run: its jobs and timers that are still PENDING (dispatching one twice is harmless). */
export async function changedBy(uow: UnitOfWork, instanceId: string, record: RepairRecord): Promise<Repaired> {
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  const { jobs, timers } = await stillPending(
    uow,
    instanceId,
    strings(record.details.jobIds),
    strings(record.details.timerIds),
  );
  const duplicates = Array.isArray(record.details.duplicates)
    ? (record.details.duplicates as DuplicateWaitingPoint[])
    : [];
  return { jobs, timers, duplicates, consumed: strings(record.details.consumed), alreadyApplied: true, basis: null };
}
