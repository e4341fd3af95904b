/**
 * The demo's plan: which work order plays which failure mode of the article.
 * Pure, so the split and the expectations are table-tested.
 */
import type { ProviderScript } from '../local/provider';

export type ScenarioId =
  | 'normal'
  | 'duplicate'
  | 'overtake'
  | 'conflict'
  | 'ambiguous'
  | 'outage'
  | 'deadLetter'
  | 'neverAnswered'
  | 'reportByReference'
  | 'reportOffloaded'
  | 'poison';

/** A scenario whose completion carries a large report: how it travels and how many line items it has. */
export interface LargeReport {
  /** `reference`: the provider uploads it and sends `gs://…#generation`; `offloaded`: inline, and the receiver offloads it. */
  readonly route: 'reference' | 'offloaded';
  readonly lineItems: number;
}

export interface Scenario {
  readonly id: ScenarioId;
  readonly title: string;
  /** What a reader should see for each work order (or message) of the scenario. */
  readonly expected: string;
  /** How the simulated provider answers its work orders. */
  readonly providerScript: ProviderScript;
  /** Share of the work orders (the rest are `normal`); at least one each. */
  readonly share: number;
  /** At most this many work orders, whatever the share (no cap when absent). */
  readonly maxCount?: number;
  /** Exactly this many work orders, whatever the run's size (the share is then unused). */
  readonly count?: number;
  /** Process variables its work orders start with, besides workOrderId and providerScript. */
  readonly variables?: Readonly<Record<string, string>>;
  /**
   * Whether the way the completion was correlated is part of the outcome
   * (via the buffer, after a dead letter). Elsewhere a completion may come
   * before or after its process waits for it (the provider is fast), and
   * "DONE" is DONE either way.
   */
  readonly showsPath: boolean;
  /**
   * Whether where the token waits, the escalations and `inbox waiting` are
   * part of the outcome (the orders nobody answers). Escalations show on
   * every order that has one, so a stray one fails its scenario.
   */
  readonly showsWaiting?: boolean;
  /** The completion carries a large report: its claim and the invoice's item count are part of the outcome. */
  readonly report?: LargeReport;
}

const ORDER_DONE = 'DONE · COMPLETED · invoiced';

/** Line items of the report sent by reference (about 3.4 MiB). */
export const REFERENCE_ITEMS = 6_000;
/** Line items of the report sent inline, and what its offloaded object measures (the canonical JSON of the payload). */
export const OFFLOADED_ITEMS = 9_000;
export const OFFLOADED_MIB = '5.1 MiB';

export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'normal',
    showsPath: false,
    title: 'normal completion',
    expected: ORDER_DONE,
    providerScript: 'answer',
    share: 0,
  },
  {
    id: 'duplicate',
    showsPath: false,
    title: 'duplicate delivery (published twice)',
    expected: ORDER_DONE,
    providerScript: 'duplicate',
    share: 0.05,
  },
  {
    id: 'overtake',
    showsPath: true,
    title: 'completion overtakes its process',
    expected: 'DONE via buffer · COMPLETED · invoiced',
    providerScript: 'silent',
    share: 0.05,
  },
  {
    id: 'conflict',
    showsPath: false,
    title: 'two different completions, one key',
    expected: 'DONE + PARKED KEY_COLLISION · COMPLETED · invoiced',
    providerScript: 'conflict',
    share: 0.03,
  },
  {
    id: 'ambiguous',
    showsPath: false,
    title: 'manual repair left a double token',
    expected: 'PARKED AMBIGUOUS_CORRELATION · INCIDENT · not invoiced',
    providerScript: 'silent',
    share: 0.02,
  },
  {
    id: 'outage',
    showsPath: false,
    title: 'Firestore outage during delivery',
    expected: ORDER_DONE,
    providerScript: 'answer',
    share: 0.2,
  },
  // Two at most: the Pub/Sub emulator (gcloud 528) stops redelivering when three or more messages of one
  // push subscription fail at once. Measured with a bare endpoint answering 503 after 1 s (5 attempts,
  // retry 0-1 s): 1 or 2 messages were dead-lettered in 19 of 19 runs, 3 or 4 in 5 of 8, 6 in 3 of 18;
  // the stalled ones got no push for the next 80 s. The real service has no such limit.
  {
    id: 'deadLetter',
    showsPath: true,
    title: 'dead-lettered, then requeued',
    expected: 'DONE after dead letter · COMPLETED · invoiced',
    providerScript: 'silent',
    share: 0.03,
    maxCount: 2,
  },
  // Seconds instead of the model's 14 days: the timer fires within the run. Nobody publishes their completion;
  // each must be escalated once, keep waiting, and show in `inbox waiting` (a fixed few: the point is visibility, not volume).
  {
    id: 'neverAnswered',
    showsPath: false,
    showsWaiting: true,
    title: 'the provider never answers',
    expected:
      'no inbox document · RUNNING at waitForCompletion · escalated once, 1 reminder · in inbox waiting past its deadline · not invoiced',
    providerScript: 'silent',
    share: 0,
    count: 3,
    variables: { completionDeadline: 'PT5S' },
  },
  // One each: the point is the route of a large report, not volume. The sizes follow from the item counts (the
  // provider's items are of fixed size; test/unit/demo-evaluate.test.ts measures them), the offloaded one far
  // over INBOX_OFFLOAD_BYTES (512 KiB) and under Pub/Sub's 10 MiB.
  {
    id: 'reportByReference',
    showsPath: false,
    title: 'large report by reference (gs://…#generation)',
    expected: `DONE · reference FOUND · COMPLETED · invoiced ${REFERENCE_ITEMS} line items`,
    providerScript: 'reportByReference',
    share: 0,
    count: 1,
    variables: { reportLineItems: String(REFERENCE_ITEMS) },
    report: { route: 'reference', lineItems: REFERENCE_ITEMS },
  },
  {
    id: 'reportOffloaded',
    showsPath: false,
    title: 'large report inline, offloaded on receipt',
    expected: `DONE · offloaded ${OFFLOADED_MIB} · COMPLETED · invoiced ${OFFLOADED_ITEMS} line items`,
    providerScript: 'reportInline',
    share: 0,
    count: 1,
    variables: { reportLineItems: String(OFFLOADED_ITEMS) },
    report: { route: 'offloaded', lineItems: OFFLOADED_ITEMS },
  },
];

/** The deadline of the never-answered orders, in seconds (their `completionDeadline`). */
export const NEVER_ANSWERED_DEADLINE_S = 5;

export const POISON: Scenario = {
  id: 'poison',
  showsPath: false,
  title: 'poison payload',
  expected: 'PARKED INVALID_PAYLOAD',
  providerScript: 'silent',
  share: 0,
};

/** Poison messages the demo publishes: each must be stored and parked with its reason, never retried. */
export const POISON_MESSAGES: ReadonlyArray<{
  readonly what: string;
  readonly data: Buffer;
  readonly attributes: Readonly<Record<string, string>>;
}> = [
  { what: 'not JSON', data: Buffer.from('<xml>not json</xml>'), attributes: { eventType: 'WorkOrderCompleted' } },
  {
    what: 'unknown message type',
    data: Buffer.from(JSON.stringify({ workOrderId: 'WO-x' })),
    attributes: { eventType: 'WorkOrderCancelled' },
  },
  {
    what: 'schema violation',
    data: Buffer.from(JSON.stringify({ workOrderId: 'WO-y', completedItems: -1, completionTimestamp: 'soon' })),
    attributes: { eventType: 'WorkOrderCompleted' },
  },
  { what: 'no message type', data: Buffer.from(JSON.stringify({ hello: 'world' })), attributes: {} },
];

export interface PlannedOrder {
  readonly workOrderId: string;
  readonly scenario: ScenarioId;
}

/** The smallest run that gives every scenario a work order and leaves some normal ones. */
export const MIN_ORDERS = 15;

/** Splits `orders` work orders of run `run` over the scenarios: each gets its share (at least one), the rest are normal. */
export function planOrders(run: string, orders: number): PlannedOrder[] {
  if (!Number.isInteger(orders) || orders < MIN_ORDERS)
    throw new RangeError(`orders: an integer of at least ${MIN_ORDERS}`);
  const plan: PlannedOrder[] = [];
  let n = 0;
  const next = (scenario: ScenarioId): PlannedOrder => ({
    workOrderId: `WO-${run}-${String(++n).padStart(4, '0')}`,
    scenario,
  });
  for (const s of SCENARIOS) {
    if (s.id === 'normal') continue;
    const count = s.count ?? Math.min(s.maxCount ?? Infinity, Math.max(1, Math.round(orders * s.share)));
    for (let i = 0; i < count; i++) plan.push(next(s.id));
  }
  while (plan.length < orders) plan.push(next('normal'));
  return plan;
}

export function scenarioOf(id: ScenarioId): Scenario {
  const found = id === 'poison' ? POISON : SCENARIOS.find((s) => s.id === id);
  if (found === undefined) throw new Error(`unknown scenario ${id}`);
  return found;
}
