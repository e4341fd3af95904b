import type { Firestore } from '@google-cloud/firestore';
import type { ExecutionState, InstanceState, JobState, WaitingPoint } from '../state';
import { checkBasis, incidentsBasis, type RepairBasis } from '../repair-basis';
import { resolveIncidents } from '../incidents';
import { asCorrelationKey, refs } from './collections';
import { readInstanceDoc, readJob, writeInstance } from './instance-doc';
import {
  appliedRepair,
  newRequestId,
  type RepairBinding,
  RepairRefusedError,
  type RepairOptions,
  repairRecord,
  runRepair,
  withRepair,
} from './repair-request';

export interface ResolvedIncidents {
  readonly instance: InstanceState;
  /** How many open incidents were closed. */
  readonly resolved: number;
  /** Found done by an earlier attempt of the same request (a transaction re-run after its commit landed). */
  readonly alreadyApplied: boolean;
  /** The incidents it acted on, as read (engine/repair-basis.ts); null when already applied. */
  readonly basis: RepairBasis | null;
}

/** What a resolve's request id is bound to: the instance's incidents (the instance is where it is recorded). */
const RESOLVE: RepairBinding = { kind: 'resolve-incident', target: '' };

/**
 * Repair: `inbox repair resolve-incident`. One transaction, reads by id only:
 * the instance document (its tokens and jobs in it), the key
 * document a token waits under; the pure {@link resolveIncidents} decides.
 * Throws {@link RepairRefusedError} naming every cause that persists.
 * Idempotent per request id (default: a new one per call; see repair-request.ts).
 * With `options.expect` (its preview's basis), refused if the instance's
 * status or open incidents changed since (a new incident nobody previewed).
 */
export async function resolveIncident(
  db: Firestore,
  processInstanceId: string,
  note: string | null,
  now: Date,
  requestId: string = newRequestId(),
  options: RepairOptions = {},
): Promise<ResolvedIncidents> {
  return runRepair(
    db,
    async (uow) => {
      const doc = await readInstanceDoc(uow, processInstanceId);
      const instance = doc?.instance ?? null;
      if (doc === null || instance === null)
        throw new RepairRefusedError(`process instance ${processInstanceId} does not exist`);
      const applied = appliedRepair(instance, requestId, RESOLVE);
      if (applied !== null)
        return { instance, resolved: Number(applied.details.resolved ?? 0), alreadyApplied: true, basis: null };
      const basis = incidentsBasis(instance);
      checkBasis(options.expect, basis, `the incidents of instance ${instance.id}`);
      const executions: ExecutionState[] = [];
      const jobs: Record<string, JobState> = {};
      const waiting: Record<string, readonly WaitingPoint[]> = {};
      for (const id of instance.activeExecutionIds) {
        const execution = doc.tokens[id];
        if (execution === undefined) continue;
        executions.push(execution);
        if (execution.status === 'WAITING_JOB' && execution.jobId !== null) {
          const job = await readJob(uow, doc, execution.jobId);
          if (job !== null) jobs[execution.jobId] = job.job;
        }
        if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null) {
          const key = execution.waitingFor.correlationKey;
          waiting[key] ??= asCorrelationKey(await uow.get(refs.correlationKey(db, key)), key).waiting;
        }
      }
      const decided = resolveIncidents({ instance, executions, jobs, waiting }, note, now);
      if (decided.kind === 'REFUSED') throw new RepairRefusedError(`refused: ${decided.causes.join('; ')}`);
      const resolved = withRepair(
        decided.instance,
        repairRecord(RESOLVE, requestId, now, { resolved: decided.resolved }, options.actor),
      );
      await writeInstance(uow, instance.id, { instance: resolved });
      return { instance: resolved, resolved: decided.resolved, alreadyApplied: false, basis };
    },
    options.sink === undefined ? {} : { sink: options.sink },
  );
}
