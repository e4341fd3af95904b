/** A chaos run's figures and its one line. */
import type { InspectionCounts } from './evaluate-inspection';

export interface ChaosCounts {
  readonly messages: number;
  readonly orders: number;
  readonly documents: number;
  readonly done: number;
  readonly parkedByReason: Readonly<Record<string, number>>;
  readonly deadLettered: number;
  readonly requeued: number;
  readonly ordersInvoiced: number;
  /** Work orders recorded overdue (a race their timer won). */
  readonly ordersOverdue: number;
  /** Work orders an operator cancelled a token of, on purpose (recorded on the instance): they end without an invoice. */
  readonly ordersCancelled: number;
  /** Races planned, and who won each: the timer or the last completion. */
  readonly races: number;
  readonly racesWonByTimer: number;
  readonly racesWonByCompletion: number;
  /** Races whose instance took both paths (invoiced and recorded overdue). */
  readonly bothPaths: number;
  readonly lost: number;
  readonly doubleCorrelations: number;
  readonly doubleInvoices: number;
  /** The second model's work orders: through the join, the error loop, the user tasks, the approvers (evaluate-inspection.ts). */
  readonly inspection: InspectionCounts;
  /** Everything that breaks the promise, one line each (the first few are printed). */
  readonly violations: readonly string[];
}

/** The promise held: nothing lost, nothing twice, every order billed once, nothing unexpected. */
export const chaosPassed = (c: ChaosCounts): boolean => c.violations.length === 0;

/** What the chaos operator's repairs came to (tools/chaos/operator.ts), for the line. */
export interface OperatorCounts {
  readonly cancelled: number;
  readonly moved: number;
  readonly requeued: number;
  readonly refusedAtPreview: number;
  readonly refusedAtConfirm: number;
  readonly failed: number;
  readonly nothingToDo: number;
  readonly abandoned: number;
}

/** The run's one line. */
export function chaosLine(seed: number, c: ChaosCounts, seconds: number, op?: OperatorCounts): string {
  const parked = Object.entries(c.parkedByReason)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([r, n]) => `${r} ${n}`)
    .join(', ');
  const repairs =
    op === undefined
      ? ''
      : `, operator repairs: cancelled ${op.cancelled}, moved ${op.moved}, requeued ${op.requeued}, refused ${op.refusedAtPreview} by the dry run and ${op.refusedAtConfirm} at the confirmation, failed ${op.failed}, not confirmed ${op.abandoned}, nothing to do ${op.nothingToDo}`;
  const i = c.inspection;
  const inspected = `, inspected work orders ${i.orders} (through the join ${i.throughJoin}, error loops ${i.rounds} of ${i.roundsPlanned} rounds on ${i.defectsPlanned} orders with findings, defect records ${i.defectRecords}, passed at the end ${i.passedAtEnd}, user tasks completed ${i.userTasksCompleted}, repeats answered already completed ${i.repeatsAnswered}, second persons refused ${i.secondPersonsRefused}, approvals ended ${i.approvalsEnded} (condition ${i.endedByCondition}, all answered ${i.endedAllAnswered}), outputs exact ${i.outputsExact}, late answers refused ${i.lateAnswersRefused}, tallied once ${i.talliedOnce}, stuck ${i.stuck})`;
  return `chaos seed ${seed}: messages ${c.messages}, DONE ${c.done}, PARKED ${parked === '' ? 0 : parked}, dead-lettered ${c.deadLettered} (requeued ${c.requeued}), lost ${c.lost}, double correlations ${c.doubleCorrelations}, double invoices ${c.doubleInvoices}, races ${c.races} (timer won ${c.racesWonByTimer}, completion won ${c.racesWonByCompletion}, both paths ${c.bothPaths})${repairs}${inspected}, work orders invoiced ${c.ordersInvoiced} + overdue ${c.ordersOverdue} + cancelled ${c.ordersCancelled} of ${c.orders} (${seconds} s)`;
}
