/** What the evaluation looks up per work order in a chaos run's snapshot: its instances, billing, overdue records, race timers. */
import { RACE, type ChaosPlan } from './plan';
import type { ChaosSnapshot } from './snapshot';

export interface OrderFacts {
  /** Its instances (the top-level ones: not the items of a multi-instance activity, which have its business key too), "Create invoice" jobs (not stale ones) and invoices. */
  readonly billingOf: (workOrderId: string) => { instances: string[]; jobs: number; invoices: number };
  /** Its overdue records (`escalations/`). */
  readonly overdueRecords: (workOrderId: string) => number;
  /** Its race timer documents (a cancelled timer is deleted, so it is not here). */
  readonly raceTimers: (workOrderId: string) => Array<{ status: string }>;
  /** Orders an operator cancelled on purpose: the record on the instance says so. */
  readonly cancelled: ReadonlySet<string>;
  /** The races the timer won: the order was recorded overdue and billed nowhere (both paths is judged apart). */
  readonly timerWon: ReadonlySet<string>;
}

export function orderFacts(plan: ChaosPlan, snapshot: ChaosSnapshot): OrderFacts {
  const instancesOf = new Map<string, string[]>();
  for (const i of snapshot.instances.filter((x) => x.calledBy === null))
    instancesOf.set(i.businessKey, [...(instancesOf.get(i.businessKey) ?? []), i.id]);
  const jobsOf = new Map<string, number>();
  for (const j of snapshot.invoiceJobs) jobsOf.set(j.processInstanceId, (jobsOf.get(j.processInstanceId) ?? 0) + 1);
  const billingOf = (workOrderId: string): { instances: string[]; jobs: number; invoices: number } => {
    const instances = instancesOf.get(workOrderId) ?? [];
    return {
      instances,
      jobs: instances.reduce((n, id) => n + (jobsOf.get(id) ?? 0), 0),
      invoices: snapshot.invoices.filter((v) => v.workOrderId === workOrderId).length,
    };
  };
  const overdueRecords = (workOrderId: string): number =>
    snapshot.escalations.filter((e) => e.workOrderId === workOrderId).length;
  const raceTimers = (workOrderId: string): Array<{ status: string }> => {
    const ids = new Set(instancesOf.get(workOrderId) ?? []);
    return snapshot.timers.filter((t) => ids.has(t.processInstanceId) && t.activityId === RACE.boundaryEventId);
  };
  const cancelled = new Set(
    snapshot.instances.filter((i) => i.repairs.some((r) => r.kind === 'cancel-token')).map((i) => i.businessKey),
  );
  const timerWon = new Set(
    plan.races
      .filter(
        (r) =>
          overdueRecords(r.workOrderId) > 0 &&
          billingOf(r.workOrderId).jobs === 0 &&
          billingOf(r.workOrderId).invoices === 0,
      )
      .map((r) => r.workOrderId),
  );
  return { billingOf, overdueRecords, raceTimers, cancelled, timerWon };
}
