/**
 * The chaos run's plan, pure and seeded: which work orders, which messages
 * (tranche completions, duplicate publishes, key collisions, poison), in
 * which order they are started and published, which last tranches race a
 * timer, which orders run the second model (plan-inspection.ts), when the
 * faults strike, and when an operator repairs.
 * The same seed and sizes give the same plan, so a failed run can be replayed.
 */
import { collisionDocId } from '../../../functions/src/inbox/ids';
import { seededRandom } from '../../../tools/seeded-random';
import { planInspections, type PlannedInspection } from './plan-inspection';
import { planFaults, planRepairs, type PlannedFault, type PlannedRepair } from './plan-schedule';
import { completionData, interpreted, POISON_VARIANTS, poisonData, type PlannedMessage } from './plan-messages';

/** Distinct completions each work order needs (waits in chaos/bpmn/work-order-execution.bpmn). */
export const TRANCHES = 4;
/** Shares of the mix, of all messages (poison, collisions) or of work orders (overtake, race). */
export const SHARES = { poison: 0.01, collision: 0.01, overtake: 0.1, race: 0.25 } as const;

/**
 * The chaos model's race: the last wait (a receive task) has an interrupting
 * timer boundary event whose duration is the variable `raceDeadline` (14
 * days when absent); when it fires, `escalateOverdueWorkOrder` records the
 * work order as overdue (`escalations/`) and the instance ends at `overdue`.
 */
export const RACE = {
  waitId: 'waitForTranche4',
  boundaryEventId: 'lastTrancheOverdue',
  overdueTaskId: 'escalateOverdueWorkOrder',
  variable: 'raceDeadline',
} as const;
/** Racing timers are due this many seconds after the token reaches the last wait (one of these, seeded). */
export const RACE_DEADLINES_S: readonly number[] = [4, 5, 6];
/**
 * When the racing tranche is published, ms relative to the timer's due time
 * (seeded, uniform in [from, to]). Before the due time: a published
 * completion needs one to two seconds in the chaos run (push, store, the
 * relay, four relays on two cores) before it correlates; windows of ±1.5 s
 * and of -2.5 to +0.5 s let the timer win all 4 races of the small run
 * (one published 1 s ahead), so the window reaches 4 s ahead.
 */
export const RACE_OFFSET_MS = { from: -4_000, to: 0 } as const;

export interface ChaosSizes {
  readonly seed: number;
  readonly orders: number;
  /** Messages published in all; what completions, poison and collisions leave are duplicate publishes. */
  readonly messages: number;
  readonly relayKills: number;
  readonly firestoreRestarts: number;
  /** Bursts of failing Cloud Tasks dispatches (and failing CreateTask calls). */
  readonly dispatchFaults: number;
  /** Operator repairs made while the run goes on (cancel-token, move-token, requeue; see {@link PlannedRepair}). */
  readonly repairs: number;
  /** Work orders that run the second model (parallel fork and join, BPMN error, user task): at most those that race nothing. */
  readonly inspections: number;
}

export const DEFAULT_SIZES: ChaosSizes = {
  seed: 1,
  orders: 2_000,
  messages: 10_000,
  relayKills: 5,
  firestoreRestarts: 2,
  dispatchFaults: 3,
  repairs: 30,
  inspections: 400,
};

export type Step =
  { readonly kind: 'start'; readonly workOrderId: string } | { readonly kind: 'publish'; readonly message: number };

/**
 * A work order whose last tranche races its timer. The racing message is in
 * no step: the run publishes it once the order waits at the last wait (its
 * timer is set), `offsetMs` after the timer's due time. No duplicate or
 * collision copies it, so the race is between exactly one message and one timer.
 */
export interface PlannedRace {
  readonly workOrderId: string;
  /** Index of the racing completion in `messages`: the order's latest planned tranche (never an overtaking one). */
  readonly message: number;
  /** The `raceDeadline` variable the order starts with (`PT<n>S`). */
  readonly deadline: string;
  /** When to publish the racing tranche, relative to the timer's due time (negative: before). */
  readonly offsetMs: number;
}

export interface ChaosPlan {
  readonly sizes: ChaosSizes;
  readonly run: string;
  readonly orders: ReadonlyArray<{ readonly workOrderId: string; readonly overtakes: boolean }>;
  readonly messages: readonly PlannedMessage[];
  readonly steps: readonly Step[];
  readonly races: readonly PlannedRace[];
  readonly faults: readonly PlannedFault[];
  readonly repairs: readonly PlannedRepair[];
  /** The work orders that run the second model (plan-inspection.ts), in plan order; the others run the first. */
  readonly inspections: readonly PlannedInspection[];
}

/** Validates sizes; every problem names the option. */
export function checkSizes(sizes: ChaosSizes): void {
  const ints: Array<[keyof ChaosSizes, number]> = [
    ['orders', 1],
    ['messages', 1],
    ['relayKills', 0],
    ['firestoreRestarts', 0],
    ['dispatchFaults', 0],
    ['repairs', 0],
    ['inspections', 0],
    ['seed', 0],
  ];
  for (const [name, min] of ints) {
    const v = sizes[name];
    if (!Number.isSafeInteger(v) || v < min) throw new RangeError(`${name}: an integer of at least ${min} (got ${v})`);
  }
  const floor =
    sizes.orders * TRANCHES +
    Math.round(sizes.messages * SHARES.poison) +
    Math.round(sizes.messages * SHARES.collision);
  if (sizes.messages < floor)
    throw new RangeError(
      `messages: at least ${floor} for ${sizes.orders} work orders (${TRANCHES} completions each, plus poison and collisions)`,
    );
}

/** The plan for `sizes`. Time is a number in [0, 1): starts and publishes are sorted by it. */
export function planChaos(sizes: ChaosSizes): ChaosPlan {
  checkSizes(sizes);
  const random = seededRandom(sizes.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const run = `s${sizes.seed}`;
  const timed: Array<{ at: number; step: Step }> = [];
  const messages: PlannedMessage[] = [];
  const at: number[] = []; // publish time of each message
  const publish = (message: PlannedMessage, time: number): void => {
    at.push(time);
    timed.push({ at: time, step: { kind: 'publish', message: messages.length } });
    messages.push(message);
  };

  const orders = Array.from({ length: sizes.orders }, (_, i) => ({
    workOrderId: `WO-${run}-${String(i + 1).padStart(5, '0')}`,
    overtakes: random() < SHARES.overtake,
  }));
  // Races draw from a stream of their own, so adding them left the rest of a seed's plan as it was.
  const raceRandom = seededRandom(sizes.seed ^ 0x7ace);
  const races: PlannedRace[] = [];
  const racing = new Set<number>();
  for (const order of orders) {
    // An overtaking order starts late and one of its completions comes before it; the others start early enough that theirs follow.
    const startAt = order.overtakes ? 0.1 + random() * 0.85 : random() * 0.85;
    timed.push({ at: startAt, step: { kind: 'start', workOrderId: order.workOrderId } });
    const early = Math.floor(random() * TRANCHES) + 1;
    const first = messages.length;
    for (let tranche = 1; tranche <= TRANCHES; tranche++) {
      const data = completionData(order.workOrderId, tranche, tranche);
      const time = order.overtakes && tranche === early ? random() * startAt : startAt + random() * (1 - startAt);
      publish({ kind: 'completion', workOrderId: order.workOrderId, tranche, data, docId: interpreted(data).id }, time);
    }
    if (raceRandom() < SHARES.race) {
      // The latest of the four: after the start even for an overtaking order (its early one is the earliest).
      const last = Array.from({ length: TRANCHES }, (_, i) => first + i).reduce((a, b) =>
        (at[b] ?? 0) > (at[a] ?? 0) ? b : a,
      );
      const seconds = RACE_DEADLINES_S[Math.floor(raceRandom() * RACE_DEADLINES_S.length)] ?? 3;
      races.push({
        workOrderId: order.workOrderId,
        message: last,
        deadline: `PT${seconds}S`,
        offsetMs: Math.round(RACE_OFFSET_MS.from + raceRandom() * (RACE_OFFSET_MS.to - RACE_OFFSET_MS.from)),
      });
      racing.add(last);
    }
  }
  const completions = messages.length;
  // Copies (duplicates, collisions) only of completions that race nothing.
  const copyable = Array.from({ length: completions }, (_, i) => i).filter((i) => !racing.has(i));
  const pickCopyable = (): number => copyable[Math.floor(random() * copyable.length)] ?? 0;
  const later = (of: number): number => {
    const t = at[of] ?? 0;
    return t + random() * (1 - t);
  };
  const poison = Math.round(sizes.messages * SHARES.poison);
  const collisions = Math.round(sizes.messages * SHARES.collision);
  for (let i = 0; i < collisions; i++) {
    const of = pickCopyable();
    const original = messages[of];
    if (original?.kind !== 'completion') throw new Error('collisions are planned on completions');
    const data = completionData(original.workOrderId, original.tranche, 100 + i);
    const mine = interpreted(data);
    // Whichever of the two arrives first owns the id; the other gets the collision id of its own payload.
    const theirs = interpreted(original.data);
    publish(
      {
        kind: 'collision',
        of,
        data,
        docId: original.docId,
        collisionIds: [
          collisionDocId(original.docId, mine.payloadHash),
          collisionDocId(original.docId, theirs.payloadHash),
        ],
      },
      later(of),
    );
  }
  for (let i = 0; i < poison; i++) {
    const variant = pick(POISON_VARIANTS);
    publish({ kind: 'poison', variant, ...poisonData(variant, i) }, random());
  }
  const duplicates = sizes.messages - messages.length;
  for (let i = 0; i < duplicates; i++) {
    const of = pickCopyable();
    const original = messages[of];
    if (original?.kind !== 'completion') throw new Error('duplicates are planned on completions');
    publish({ kind: 'duplicate', of, data: original.data, docId: original.docId }, later(of));
  }

  const steps = timed
    .filter((t) => t.step.kind !== 'publish' || !racing.has(t.step.message))
    .sort((a, b) => a.at - b.at)
    .map((t) => t.step);
  const racingOrders = new Set(races.map((r) => r.workOrderId));
  const inspections = planInspections(sizes.seed, orders, racingOrders, sizes.inspections);
  const faults = planFaults(sizes, steps.length, random, deployStep(steps, inspections));
  const repairs = planRepairs(sizes, steps.length);
  return { sizes, run, orders, messages, steps, races, faults, repairs, inspections };
}

/**
 * Where the second version is deployed: when half the orders of the model
 * that starts sooner have started (the earlier of the two models' median
 * starts), so each model has instances on both versions.
 */
function deployStep(steps: readonly Step[], inspections: readonly PlannedInspection[]): number {
  const inspected = new Set(inspections.map((i) => i.workOrderId));
  const starts: [number[], number[]] = [[], []];
  for (const [index, step] of steps.entries())
    if (step.kind === 'start') starts[inspected.has(step.workOrderId) ? 1 : 0].push(index);
  const medians = starts.filter((s) => s.length > 0).map((s) => s[Math.floor(s.length / 2)] ?? 0);
  return medians.length === 0 ? Math.floor(steps.length / 2) : Math.min(...medians);
}
