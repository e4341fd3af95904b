/**
 * Pure evaluation of a chaos run: where every planned message ended
 * (evaluate-messages.ts), and what became of every work order. Double
 * invoice: a work order billed by more than one instance or job. A race (a
 * last tranche against its timer): the instance took exactly one path,
 * invoiced or recorded overdue, never both or neither; the timer FIRED
 * exactly when it won, and is gone (cancelled) when the completion won; the
 * completion that lost is correlated nowhere. An operator's repairs: an
 * order whose token was cancelled on purpose (a cancel-token record on its
 * instance) ends COMPLETED without an invoice, its later completions
 * waiting in the buffer (OPEN, or PARKED NO_WAITING_INSTANCE), and the token
 * it cancelled stays CANCELLED (never revived by a job or a repair); no
 * instance is left in INCIDENT. The second model's work orders: through
 * their join once, the error path where planned, each user task completed
 * once (evaluate-inspection.ts); their invoice is judged here with the rest.
 */
import type { ApproverTally } from './approver';
import { evaluateInspections } from './evaluate-inspection';
import { judgeMessages } from './evaluate-messages';
import { orderFacts } from './facts';
import type { ChaosPlan } from './plan';
import type { ChaosCounts } from './report';
import type { ChaosSnapshot } from './snapshot';

/** `poisonIds[i]`: the inbox id of the i-th poison message of the plan (from its Pub/Sub messageId). */
export function evaluateChaos(
  plan: ChaosPlan,
  poisonIds: readonly string[],
  snapshot: ChaosSnapshot,
  approvals: ApproverTally | null = null,
): ChaosCounts {
  const { billingOf, overdueRecords, raceTimers, cancelled, timerWon } = orderFacts(plan, snapshot);
  const messages = judgeMessages(plan, poisonIds, snapshot, { cancelled, timerWon });
  const inspection = evaluateInspections(plan.inspections, snapshot, approvals);
  const violations: string[] = [...messages.violations, ...inspection.violations];
  for (const instance of snapshot.instances) {
    if (instance.status === 'INCIDENT')
      violations.push(`${instance.businessKey}: instance ${instance.id.slice(0, 12)} left in INCIDENT`);
    // A token cancelled on purpose stays cancelled: no job, timer or repair revived it.
    for (const r of instance.repairs.filter((x) => x.kind === 'cancel-token')) {
      const token = instance.tokens.find((t) => t.id === r.executionId);
      if (token !== undefined && token.status !== 'CANCELLED')
        violations.push(
          `${instance.businessKey}: token ${r.executionId?.slice(0, 12) ?? '?'} was cancelled, and is ${token.status} now (revived)`,
        );
    }
  }

  let doubleInvoices = 0;
  let ordersInvoiced = 0;
  let bothPaths = 0;
  const racing = new Set(plan.races.map((r) => r.workOrderId));
  for (const { workOrderId } of plan.orders) {
    const { instances, jobs, invoices } = billingOf(workOrderId);
    const overdue = overdueRecords(workOrderId);
    const timers = raceTimers(workOrderId);
    const fired = timers.filter((t) => t.status === 'FIRED').length;
    const completed = snapshot.instances.some(
      (i) => i.businessKey === workOrderId && i.calledBy === null && i.status === 'COMPLETED',
    );
    if (instances.length > 1) violations.push(`${workOrderId}: ${instances.length} process instances`);
    if (jobs > 1 || invoices > 1) {
      doubleInvoices += 1;
      violations.push(`double invoice: ${workOrderId} has ${jobs} "Create invoice" jobs and ${invoices} invoices`);
    }
    if (racing.has(workOrderId) && overdue > 0 && (jobs > 0 || invoices > 0)) {
      bothPaths += 1;
      violations.push(
        `${workOrderId}: took both paths (${jobs} "Create invoice" jobs, ${invoices} invoices, ${overdue} overdue records)`,
      );
    } else if (timerWon.has(workOrderId)) {
      if (overdue !== 1) violations.push(`${workOrderId}: recorded overdue ${overdue} times`);
      if (fired !== 1 || timers.length !== 1)
        violations.push(
          `${workOrderId}: won by its timer, but its timers are ${timers.map((t) => t.status).join(', ') || 'gone'} (expected one FIRED)`,
        );
      if (!completed)
        violations.push(`${workOrderId}: recorded overdue but not completed (${instances.length} instances)`);
    } else if (cancelled.has(workOrderId)) {
      // Cancelled on purpose: it ends without a token (COMPLETED), billed at most once (a cancel of a step whose run had billed).
      if (!completed)
        violations.push(
          `${workOrderId}: a token was cancelled on purpose, but the order is not COMPLETED (${instances.length} instances)`,
        );
      if (overdue > 0)
        violations.push(`${workOrderId}: recorded overdue ${overdue} times, but its timer was 14 days away`);
    } else {
      // Billed, and its timer went with the wait (deleted): none left PENDING, none FIRED.
      if (completed && invoices === 1) ordersInvoiced += 1;
      else
        violations.push(
          `${workOrderId}: not completed and invoiced (${instances.length} instances, ${invoices} invoices)`,
        );
      if (overdue > 0)
        violations.push(
          `${workOrderId}: recorded overdue ${overdue} times${racing.has(workOrderId) ? '' : ', but its timer was 14 days away'}`,
        );
      if (timers.length > 0)
        violations.push(
          `${workOrderId}: invoiced, but its timer is still there (${timers.map((t) => t.status).join(', ')})`,
        );
    }
  }

  const parkedByReason: Record<string, number> = {};
  for (const d of snapshot.inbox)
    if (d.status === 'PARKED') parkedByReason[d.reason ?? 'none'] = (parkedByReason[d.reason ?? 'none'] ?? 0) + 1;
  return {
    messages: plan.messages.length,
    orders: plan.orders.length,
    documents: snapshot.inbox.length,
    done: snapshot.inbox.filter((d) => d.status === 'DONE').length,
    parkedByReason,
    deadLettered: snapshot.inbox.filter((d) => d.deadLettered).length,
    requeued: snapshot.inbox.filter((d) => d.requeued).length,
    ordersInvoiced,
    ordersOverdue: timerWon.size,
    ordersCancelled: plan.orders.filter((o) => cancelled.has(o.workOrderId) && !racing.has(o.workOrderId)).length,
    races: plan.races.length,
    racesWonByTimer: timerWon.size,
    racesWonByCompletion: plan.races.filter(
      (r) =>
        !timerWon.has(r.workOrderId) && overdueRecords(r.workOrderId) === 0 && billingOf(r.workOrderId).invoices === 1,
    ).length,
    bothPaths,
    lost: messages.lost,
    doubleCorrelations: messages.doubleCorrelations,
    doubleInvoices,
    inspection,
    violations,
  };
}
