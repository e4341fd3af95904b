/**
 * Which work orders of a chaos run run the second model
 * (bpmn/work-order-inspection.bpmn: a parallel fork of the tranches, an
 * inspection that may throw a BPMN error, and a person's approval, joined
 * before the invoice), and what happens to each: whether its inspection
 * finds defects (the error path), when the approver completes its user
 * task, and whether the completion is repeated. Seeded, from a stream of its
 * own, and chosen among the orders that race nothing (the race is the first
 * model's timer), so the rest of a seed's plan is what it was.
 */
import { seededRandom } from '../../../tools/seeded-random';

export interface PlannedInspection {
  readonly workOrderId: string;
  /** The start's inspectionFindings: above 0 the inspection throws DEFECTS_FOUND and the error path records them; 0 it passes. */
  readonly findings: number;
  /** How long after its user task was created the approver completes it, ms. */
  readonly approveAfterMs: number;
  /** The approver sends the same completion again (same request id): the answer must be ALREADY_COMPLETED. */
  readonly repeat: boolean;
  /** A second person completes the task after the approver, with a request id of their own: it must be refused. */
  readonly secondPerson: boolean;
}

/** Of the inspected orders, in the seeded draw: the first half (rounded) find defects; every second repeats its completion, every fourth meets a second person. */
export const INSPECTION_SHARES = { defects: 0.5 } as const;
/**
 * When the approver completes a task, ms after it was created (seeded,
 * uniform): before, among and after the tranches, and long enough for some
 * of the operator's moves to find a token waiting at it.
 */
export const APPROVE_AFTER_MS = { from: 0, to: 8_000 } as const;

/** The request id of the approver's completion of a user task: the same for a retry and the planned repeat. */
export const approvalRequestId = (userTaskId: string): string => `approve-${userTaskId}`;

/**
 * `count` of `orders` (at most as many as race nothing), in plan order. In
 * the seeded draw, the first half (rounded) has findings (1 to 5), and the
 * completions are repeated by every second order (the 1st, 3rd, …) and met
 * by a second person at every fourth (the 2nd, 6th, …), so each kind is
 * there from a few orders on, with findings and without.
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
    findings: i < defective ? 1 + Math.floor(random() * 5) : 0,
    approveAfterMs: Math.round(APPROVE_AFTER_MS.from + random() * (APPROVE_AFTER_MS.to - APPROVE_AFTER_MS.from)),
    repeat: i % 2 === 0,
    secondPerson: i % 4 === 1,
  }));
  const position = new Map(orders.map((o, i) => [o.workOrderId, i]));
  return planned.sort((a, b) => (position.get(a.workOrderId) ?? 0) - (position.get(b.workOrderId) ?? 0));
}
