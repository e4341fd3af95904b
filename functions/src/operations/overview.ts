import { QUERIES } from '../queries';
import { readAllWaitingGauges, readGauges, USER_TASKS_GAUGE } from '../relay/gauges';
import type { OperationsDeps, Overview } from './types';
import { REASONS, STATUSES } from './vocabulary';

/**
 * The figures of `inbox stats` and the console's overview: counts by status
 * and by park reason (count() aggregations, every reason, 0 included), and
 * the relay's gauges (relay/gauges.ts), the levels the alert policies watch.
 */
export async function readOverview(deps: OperationsDeps): Promise<Overview> {
  const db = deps.db();
  const now = deps.now();
  const [open, done, parked, ...byReason] = await Promise.all([
    ...STATUSES.map((s) => QUERIES.byStatus.build(db, s).count().get()),
    ...REASONS.map((r) => QUERIES.byStatusAndReason.build(db, 'PARKED', r).count().get()),
  ]);
  const engine = await deps.engine();
  const days = deps.config.relay.waitingAlertDays;
  const [gauges, waiting] = await Promise.all([
    readGauges(db, deps.config.shards, now),
    readAllWaitingGauges(db, engine, days, now),
  ]);
  return {
    at: now.toISOString(),
    counts: { OPEN: open?.data().count ?? 0, DONE: done?.data().count ?? 0, PARKED: parked?.data().count ?? 0 },
    parkedByReason: Object.fromEntries(REASONS.map((r, i) => [r, byReason[i]?.data().count ?? 0])),
    oldestOpenAgeSeconds: gauges.oldestOpenAgeSeconds,
    openIncidents: gauges.openIncidents,
    failedJobs: gauges.failedJobs,
    waitingAlertDays: days,
    waiting: waiting.map((w) => ({
      kind: w.messageName === USER_TASKS_GAUGE ? ('userTasks' as const) : ('message' as const),
      messageName: w.messageName,
      waitingOverThreshold: w.waitingOverThreshold,
      oldestWaitingAgeSeconds: w.oldestWaitingAgeSeconds,
    })),
  };
}
