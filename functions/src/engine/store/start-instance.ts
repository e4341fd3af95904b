import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { executionId as newExecutionId, instanceId as newInstanceId } from '../ids';
import type { InstanceState } from '../state';
import { startInstance } from '../transitions';
import { applyAndSettle, loadInstance, NOTHING_SETTLED, type Settled } from './apply';
import { nearTimers } from './timers';
import { runUnitOfWork, type UnitStats } from './unit-of-work';

/** What `startProcess` asks for. */
export interface StartRequest {
  readonly processKey: string;
  readonly businessKey: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly now: Date;
  /** Chosen once per start request; see {@link InstanceState.startRequestId}. */
  readonly requestId?: string;
}

/** Starts an instance, idempotent by (process key, business key): a second start returns the first. */
export async function startProcessInstance(
  db: Firestore,
  engine: Engine,
  request: StartRequest,
): Promise<Settled & { created: boolean; instance: InstanceState }> {
  return (await startProcessInstanceCounted(db, engine, request)).result;
}

/** {@link startProcessInstance} with its transaction's read and write counts (docs/data-model.md quotes them). */
export async function startProcessInstanceCounted(
  db: Firestore,
  engine: Engine,
  request: StartRequest,
): Promise<{ result: Settled & { created: boolean; instance: InstanceState }; stats: UnitStats }> {
  const model = engine.model(request.processKey);
  const id = newInstanceId(request.processKey, request.businessKey);
  const start = (now: Date) =>
    startInstance(model, engine.sync, {
      instanceId: id,
      executionId: newExecutionId(id, 'start'),
      businessKey: request.businessKey,
      variables: request.variables,
      now,
    });
  return runUnitOfWork(db, async (uow) => {
    const existing = await loadInstance(uow, id);
    if (existing !== null) {
      // This very request created it (its commit landed, the answer was lost): the same start, the same jobs (ids are
      // deterministic), so the caller answers 201 and dispatches them (a task that exists already is a no-op).
      if (request.requestId !== undefined && existing.startRequestId === request.requestId) {
        const again = start(existing.createdAt);
        return {
          ...NOTHING_SETTLED,
          jobs: again.jobs,
          timers: nearTimers(again.timers, request.now),
          created: true,
          instance: existing,
        };
      }
      return { ...NOTHING_SETTLED, created: false, instance: existing };
    }
    const t = start(request.now);
    const tagged =
      request.requestId === undefined ? t : { ...t, instance: { ...t.instance, startRequestId: request.requestId } };
    return { ...(await applyAndSettle(uow, engine, tagged, request.now)), created: true, instance: tagged.instance };
  });
}
