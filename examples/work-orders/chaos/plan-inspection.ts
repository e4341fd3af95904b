/**
 * Which work orders of a chaos run run the second model
 * (bpmn/work-order-inspection.bpmn: a parallel fork of the tranches, an
 * inspection that goes round an error boundary loop once per finding, and
 * a person's approval followed by a multi-instance "Ask the approvers",
 * joined before the invoice), and what happens to each: how many findings
 * its inspection makes (the rounds of the loop), when the approver
 * completes its user task and whether the completion is repeated, and who
 * its approvers are, what each answers and when. Seeded, from a stream of
 * its own, and chosen among the orders that race nothing (the race is the
 * first model's timer), so the rest of a seed's plan is what it was.
 */
import { seededRandom } from '../../../tools/seeded-random';

/** One approver of "Ask the approvers": an item of the multi-instance activity, answered by the run's approver. */
export interface PlannedApprover {
  /** The entry of the start's `approvers` list: the item's `approver`. */
  readonly name: string;
  /** What they answer (`approves`): true ends the activity (its completion condition), if it is still running. */
  readonly approves: boolean;
  /** How long after the item's user task was created the approver answers it, ms. */
  readonly answerAfterMs: number;
}

export interface PlannedInspection {
  readonly workOrderId: string;
  /**
   * The start's inspectionFindings, 0 to 3: the inspection throws
   * DEFECTS_FOUND and "Record the defects" lowers it by one, so the token
   * goes round the error boundary loop this many times, then passes.
   */
  readonly findings: number;
  /** How long after its user task was created the approver completes it, ms. */
  readonly approveAfterMs: number;
  /** The approver sends the same completion again (same request id): the answer must be ALREADY_COMPLETED. */
  readonly repeat: boolean;
  /** A second person completes the task after the approver, with a request id of their own: it must be refused. */
  readonly secondPerson: boolean;
  /** "Ask the approvers": 2 to 4 approvers, in item order. */
  readonly approvers: readonly PlannedApprover[];
}

/**
 * Of the inspected orders, in the seeded draw: the first half (rounded)
 * find defects (1 to `maxFindings`: rounds of the loop); every second
 * repeats its completion, every fourth meets a second person; every third
 * (the 3rd, 6th, …) has only approvers who say no (2 of them, then 4, in
 * turn), the others 2 to 4 with at least one yes, each approver a yes with
 * `approves`.
 */
export const INSPECTION_SHARES = { defects: 0.5, maxFindings: 3, approves: 0.4 } as const;
/** How many approvers an order asks (seeded, uniform), and their names. */
export const APPROVERS = { from: 2, to: 4, names: ['ana', 'ben', 'cleo', 'dev'] } as const;
/**
 * When the approver completes a task, ms after it was created (seeded,
 * uniform): before, among and after the tranches, and long enough for some
 * of the operator's moves to find a token waiting at it.
 */
export const APPROVE_AFTER_MS = { from: 0, to: 8_000 } as const;

/** The request id of the approver's completion of a user task: the same for a retry and the planned repeat. */
export const approvalRequestId = (userTaskId: string): string => `approve-${userTaskId}`;
/** The request id of an approver's answer to an item's task of "Ask the approvers": the same for a retry. */
export const answerRequestId = (userTaskId: string): string => `answer-${userTaskId}`;

/**
 * The approvers of one order: 2 to 4 with at least one yes; or all no,
 * `allNo` of them (2: the activity ends after its last item; 4: its third
 * answer meets the completion condition and the fourth item is terminated).
 */
function planApprovers(random: () => number, allNo: number | null): PlannedApprover[] {
  const drawn = APPROVERS.from + Math.floor(random() * (APPROVERS.to - APPROVERS.from + 1));
  const count = allNo ?? drawn;
  const approvers = APPROVERS.names.slice(0, count).map((name): PlannedApprover => ({
    name,
    approves: allNo === null && random() < INSPECTION_SHARES.approves,
    answerAfterMs: Math.round(APPROVE_AFTER_MS.from + random() * (APPROVE_AFTER_MS.to - APPROVE_AFTER_MS.from)),
  }));
  const anyYes = Math.floor(random() * count);
  if (allNo === null && !approvers.some((a) => a.approves))
    approvers[anyYes] = { ...(approvers[anyYes] as PlannedApprover), approves: true };
  return approvers;
}

/**
 * `count` of `orders` (at most as many as race nothing), in plan order. In
 * the seeded draw, the first half (rounded) has findings (1 to 3), the
 * completions are repeated by every second order (the 1st, 3rd, …) and met
 * by a second person at every fourth (the 2nd, 6th, …), and every third
 * (the 3rd, 6th, …) is answered no by all its approvers (two, then four),
 * so each kind is there from a few orders on, with findings and without.
 */
export function planInspections(
  seed: number,
  orders: ReadonlyArray<{ readonly workOrderId: string }>,
  racing: ReadonlySet<string>,
  count: number,
): PlannedInspection[] {
  const random = seededRandom(seed ^ 0x1a5e);
  const candidates = orders.map((o) => o.workOrderId).filter((id) => !racing.has(id));
  // A seeded shuffle (Fisher-Yates); the first `count` are inspected.
  for (let i = candidates.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [candidates[i], candidates[j]] = [candidates[j] as string, candidates[i] as string];
  }
  const chosen = candidates.slice(0, Math.min(count, candidates.length));
  const defective = Math.round(chosen.length * INSPECTION_SHARES.defects);
  const planned = chosen.map((workOrderId, i) => ({
    workOrderId,
    findings: i < defective ? 1 + Math.floor(random() * INSPECTION_SHARES.maxFindings) : 0,
    approveAfterMs: Math.round(APPROVE_AFTER_MS.from + random() * (APPROVE_AFTER_MS.to - APPROVE_AFTER_MS.from)),
    repeat: i % 2 === 0,
    secondPerson: i % 4 === 1,
    approvers: planApprovers(random, i % 3 !== 2 ? null : i % 6 === 2 ? APPROVERS.from : APPROVERS.to),
  }));
  const position = new Map(orders.map((o, i) => [o.workOrderId, i]));
  return planned.sort((a, b) => (position.get(a.workOrderId) ?? 0) - (position.get(b.workOrderId) ?? 0));
}
