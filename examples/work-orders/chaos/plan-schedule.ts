/**
 * When a chaos run's faults strike and its operator repairs: at planned
 * steps, seeded (the faults from the plan's stream, the repairs from a
 * stream of their own).
 */
import { seededRandom } from '../../../tools/seeded-random';

/** Concurrent relay instances of the run. */
export const RELAYS = 4;

/**
 * What the chaos operator does (tools/chaos/operator.ts), as an operator
 * would with the CLI: a `--dry-run`, a pause, then the real run held to the
 * dry run's `--expect` line.
 * - cancel: ends the first live token of a running work order of the first
 *   model on purpose (the order then ends COMPLETED without an invoice,
 *   recorded on the instance);
 * - move: puts a live token of a running order (of the second model, any of
 *   its branches but one waiting at the join) back on the activity it is at (re-runs an async step, lets it wait again, or
 *   opens its user task anew): the order must still end invoiced once;
 * - requeue: a PARKED document (most are unreadable or collisions: refused,
 *   with the reason).
 */
export type RepairKind = 'cancel' | 'move' | 'requeue';
/** A repair made once `atStep` steps have been taken. */
export interface PlannedRepair {
  readonly kind: RepairKind;
  readonly atStep: number;
  /** Which candidate, in [0, 1): the index into the candidates sorted by id. */
  readonly pick: number;
  /** How long the operator reads the dry run before confirming, ms. */
  readonly pauseMs: number;
}
const REPAIR_KINDS: readonly RepairKind[] = ['cancel', 'move', 'move', 'requeue'];

export type FaultKind = 'relay-kill' | 'firestore-restart' | 'dispatch-faults' | 'deploy';
/** A fault strikes once `atStep` steps have been taken. */
export interface PlannedFault {
  readonly kind: FaultKind;
  readonly atStep: number;
  /** relay-kill: which relay instance. */
  readonly target: number;
}

/** The faults, in step order; `random` is the plan's stream, drawn after the steps are laid out. */
export function planFaults(
  sizes: { readonly relayKills: number; readonly firestoreRestarts: number; readonly dispatchFaults: number },
  stepCount: number,
  random: () => number,
  deployAt: number = Math.floor(stepCount / 2),
): PlannedFault[] {
  const faults: PlannedFault[] = [];
  const strike = (kind: FaultKind, count: number, from: number, to: number, targets: number): void => {
    for (let i = 0; i < count; i++)
      faults.push({
        kind,
        atStep: Math.floor(stepCount * (from + ((to - from) * (i + random())) / count)),
        target: Math.floor(random() * targets),
      });
  };
  strike('relay-kill', sizes.relayKills, 0.05, 0.95, RELAYS);
  strike('firestore-restart', sizes.firestoreRestarts, 0.15, 0.85, 1);
  strike('dispatch-faults', sizes.dispatchFaults, 0.1, 0.9, 1);
  // A second version of both models, deployed once at `deployAt` (no draw: every other fault of a seed stays where it was).
  faults.push({ kind: 'deploy', atStep: deployAt, target: 0 });
  return faults.sort((a, b) => a.atStep - b.atStep);
}

/** The operator's repairs, from a stream of their own, so adding them left the rest of a seed's plan as it was. */
export function planRepairs(
  sizes: { readonly seed: number; readonly repairs: number },
  stepCount: number,
): PlannedRepair[] {
  const repairRandom = seededRandom(sizes.seed ^ 0x0e7a);
  return Array.from({ length: sizes.repairs }, (_, i) => ({
    kind: REPAIR_KINDS[Math.floor(repairRandom() * REPAIR_KINDS.length)] ?? 'move',
    atStep: Math.floor(stepCount * (0.2 + (0.75 * (i + repairRandom())) / Math.max(1, sizes.repairs))),
    pick: repairRandom(),
    pauseMs: Math.round(200 + repairRandom() * 1_800),
  }));
}
