/**
 * Pure evaluation of a demo run: what each work order and message ended as,
 * per scenario against the expectation, totals, and the invariants of the
 * promise (nothing lost, nothing billed twice, nothing completed unbilled,
 * nothing waiting silently, no timer left behind).
 */
import {
  type BilledView,
  type ClaimDoc,
  describeBilled,
  describeClaim,
  largeReports,
  type LargeReportSummary,
  reportsAccounted,
  type ReportState,
} from './large-reports';
import { type LargeReport, type PlannedOrder, POISON, SCENARIOS, scenarioOf, type ScenarioId } from './plan';

/** The inbox document fields the demo reads (with its claims: see large-reports.ts). */
export interface InboxView extends ClaimDoc {
  readonly reason: string | null;
  readonly correlatedVia: string | null;
  readonly deadLettered: boolean;
}

/** What the demo read back from Firestore and the storage emulator (this run's data only). */
export interface Snapshot extends ReportState {
  readonly inbox: readonly InboxView[];
  readonly instances: ReadonlyArray<{ readonly id: string; readonly businessKey: string; readonly status: string }>;
  readonly invoices: ReadonlyArray<BilledView & { readonly processInstanceId: string }>;
  /** createInvoice jobs: which instance each belongs to. */
  readonly invoiceJobs: ReadonlyArray<{ readonly processInstanceId: string }>;
  /** Tokens of this run's instances that wait for a message (WAITING_MESSAGE), and where. */
  readonly waitingTokens: ReadonlyArray<{ readonly processInstanceId: string; readonly activityId: string }>;
  /** Timer documents of this run's instances (cancelled ones are deleted, so they are not here). */
  readonly timers: ReadonlyArray<{
    readonly processInstanceId: string;
    readonly activityId: string;
    readonly status: string;
  }>;
  /** `escalations/` records of this run's work orders. */
  readonly escalations: ReadonlyArray<{ readonly workOrderId: string; readonly processInstanceId: string }>;
  /** Distinct reminders (WorkOrderOverdue) the simulated provider received, per work order. */
  readonly reminders: Readonly<Record<string, number>>;
  /**
   * What `inbox waiting` listed for this run's work orders: business key,
   * activity, seconds waited. Null until the run has asked it.
   */
  readonly waitingListed: ReadonlyArray<{
    readonly businessKey: string;
    readonly activityId: string;
    readonly waitingSeconds: number;
  }> | null;
}

/** Messages the run published: where each must end up. */
export interface Published {
  /** Inbox id each work order's completion maps to (duplicates map to the same id). */
  readonly completionIds: ReadonlyMap<string, string>;
  /** Inbox ids of the poison messages. */
  readonly poisonIds: readonly string[];
}

export interface ScenarioRow {
  readonly scenario: ScenarioId;
  readonly title: string;
  readonly count: number;
  readonly expected: string;
  /** Observed outcomes with how often each occurred, most frequent first. */
  readonly observed: ReadonlyArray<{ readonly outcome: string; readonly count: number }>;
  readonly ok: boolean;
}

export interface Invariant {
  readonly name: string;
  readonly violations: readonly string[];
}

export interface Evaluation {
  readonly scenarios: readonly ScenarioRow[];
  /** The large reports of the run (by reference, offloaded), for the line after the table. */
  readonly largeReports: readonly LargeReportSummary[];
  readonly totals: ReadonlyArray<{ readonly status: string; readonly reason: string | null; readonly count: number }>;
  readonly invariants: readonly Invariant[];
  readonly ok: boolean;
}

const describeDoc = (d: InboxView, showsPath = false): string => {
  if (d.status === 'DONE' && showsPath)
    return d.deadLettered ? 'DONE after dead letter' : d.correlatedVia === 'BUFFER' ? 'DONE via buffer' : 'DONE';
  if (d.status === 'DONE') return 'DONE';
  return d.reason === null ? d.status : `${d.status} ${d.reason}`;
};

/** What a line shows beyond inbox, process and invoice (a scenario's `showsPath` / `showsWaiting`). */
export interface Shows {
  readonly path?: boolean;
  /** Where the tokens wait, the escalations, and `inbox waiting` (with the deadline the listing must exceed, seconds). */
  readonly waiting?: { readonly deadlineSeconds: number };
  /** The claim of a large report (its route) and the invoice's line-item count. */
  readonly report?: LargeReport['route'];
}

const times = (n: number): string => (n === 0 ? 'never' : n === 1 ? 'once' : `${n}×`);

/**
 * One work order as a line: its inbox documents (with the path they took, if
 * `shows.path`), its process (and where it waits, if `shows.waiting`), its
 * escalations (always when there are any), whether `inbox waiting` lists it
 * past its deadline (if `shows.waiting` and the run asked), its invoice.
 */
export function observeOrder(snapshot: Snapshot, workOrderId: string, shows: Shows = {}): string {
  const docs = snapshot.inbox
    .filter((d) => d.correlationKey === workOrderId)
    .map((d) => describeDoc(d, shows.path === true))
    .sort();
  const instances = snapshot.instances.filter((i) => i.businessKey === workOrderId);
  const invoiced = snapshot.invoices.some((i) => i.workOrderId === workOrderId);
  const inbox = docs.length === 0 ? 'no inbox document' : docs.join(' + ');
  const waitingAt = (id: string): string => {
    const at = snapshot.waitingTokens
      .filter((t) => t.processInstanceId === id)
      .map((t) => t.activityId)
      .sort();
    return at.length === 0 ? ' (no token waits)' : ` at ${at.join(' + ')}`;
  };
  const process =
    instances.length === 0
      ? 'no process'
      : instances.map((i) => `${i.status}${shows.waiting === undefined ? '' : waitingAt(i.id)}`).join(' + ');
  const parts =
    shows.report === undefined
      ? [inbox, process]
      : [inbox, describeClaim(snapshot, workOrderId, shows.report), process];
  const escalations = snapshot.escalations.filter((e) => e.workOrderId === workOrderId).length;
  const reminders = snapshot.reminders[workOrderId] ?? 0;
  if (shows.waiting !== undefined || escalations > 0 || reminders > 0)
    parts.push(`escalated ${times(escalations)}, ${reminders} reminder${reminders === 1 ? '' : 's'}`);
  if (shows.waiting !== undefined && snapshot.waitingListed !== null) {
    const listed = snapshot.waitingListed.filter((w) => w.businessKey === workOrderId);
    const longest = Math.max(-1, ...listed.map((w) => w.waitingSeconds));
    parts.push(
      listed.length === 0
        ? 'not in inbox waiting'
        : longest >= shows.waiting.deadlineSeconds
          ? 'in inbox waiting past its deadline'
          : `in inbox waiting only ${longest} s`,
    );
  }
  parts.push(
    shows.report !== undefined ? describeBilled(snapshot, workOrderId) : invoiced ? 'invoiced' : 'not invoiced',
  );
  return parts.join(' · ');
}

/** What the line of a work order of scenario `id` shows. */
export function showsOf(id: ScenarioId): Shows {
  const s = scenarioOf(id);
  const deadline = s.variables?.['completionDeadline'];
  return {
    path: s.showsPath,
    ...(s.showsWaiting === true
      ? { waiting: { deadlineSeconds: deadline === undefined ? 0 : isoSeconds(deadline) } }
      : {}),
    ...(s.report === undefined ? {} : { report: s.report.route }),
  };
}

/** Seconds of the plain `PT<n>S` durations the demo sets (the engine parses the model's; the demo only needs its own). */
function isoSeconds(text: string): number {
  const match = /^PT(\d+)S$/.exec(text);
  if (match === null) throw new Error(`demo deadline ${text}: expected PT<n>S`);
  return Number(match[1]);
}

function tally(outcomes: readonly string[]): Array<{ outcome: string; count: number }> {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
  return [...counts]
    .map(([outcome, count]) => ({ outcome, count }))
    .sort((a, b) => b.count - a.count || a.outcome.localeCompare(b.outcome));
}

export function evaluate(plan: readonly PlannedOrder[], published: Published, snapshot: Snapshot): Evaluation {
  const scenarios: ScenarioRow[] = SCENARIOS.map((s) => {
    const orders = plan.filter((o) => o.scenario === s.id);
    const observed = tally(orders.map((o) => observeOrder(snapshot, o.workOrderId, showsOf(s.id))));
    return {
      scenario: s.id,
      title: s.title,
      count: orders.length,
      expected: s.expected,
      observed,
      ok: observed.length === 1 && observed[0]?.outcome === s.expected,
    };
  });
  const byId = new Map(snapshot.inbox.map((d) => [d.id, d]));
  const poison = tally(
    published.poisonIds.map((id) => {
      const d = byId.get(id);
      return d === undefined ? 'no inbox document' : describeDoc(d);
    }),
  );
  scenarios.push({
    scenario: 'poison',
    title: POISON.title,
    count: published.poisonIds.length,
    expected: POISON.expected,
    observed: poison,
    ok: poison.length === 1 && poison[0]?.outcome === POISON.expected,
  });

  const totals = tally(snapshot.inbox.map((d) => `${d.status}\u0000${d.reason ?? ''}`))
    .map(({ outcome, count }) => {
      const [status = '', reason = ''] = outcome.split('\u0000');
      return { status, reason: reason === '' ? null : reason, count };
    })
    .sort((a, b) => a.status.localeCompare(b.status) || (a.reason ?? '').localeCompare(b.reason ?? ''));

  const invariants = [
    accountedFor(published, snapshot),
    invoicedOnce(plan, snapshot),
    completedInvoiced(snapshot),
    noSilentWait(plan, snapshot),
    escalatedOnlyWhenDue(plan, snapshot),
    noTimerLeft(snapshot),
    reportsAccounted(plan, snapshot),
  ];
  const reports = largeReports(
    plan,
    snapshot,
    (o) => observeOrder(snapshot, o.workOrderId, showsOf(o.scenario)) === scenarioOf(o.scenario).expected,
  );
  return {
    scenarios,
    largeReports: reports,
    totals,
    invariants,
    ok: scenarios.every((s) => s.ok) && invariants.every((i) => i.violations.length === 0),
  };
}

/** Every published message is DONE or PARKED with a reason: none missing, none left OPEN. */
function accountedFor(published: Published, snapshot: Snapshot): Invariant {
  const byId = new Map(snapshot.inbox.map((d) => [d.id, d]));
  const violations: string[] = [];
  const expected = [
    ...[...published.completionIds].map(([wo, id]) => [`completion of ${wo}`, id] as const),
    ...published.poisonIds.map((id) => [`poison message ${id.slice(0, 12)}`, id] as const),
  ];
  for (const [what, id] of expected) {
    const d = byId.get(id);
    if (d === undefined) violations.push(`${what}: no inbox document`);
  }
  for (const d of snapshot.inbox) {
    const terminal = d.status === 'DONE' || (d.status === 'PARKED' && d.reason !== null);
    if (!terminal)
      violations.push(
        `${d.id.slice(0, 12)} (${d.correlationKey ?? 'no key'}): ${d.status}${d.reason === null ? '' : ` ${d.reason}`}`,
      );
  }
  return { name: 'every published message is DONE or PARKED with a reason', violations };
}

/** No work order invoiced twice: at most one instance per work order, and at most one instance reached "Create invoice". */
function invoicedOnce(plan: readonly PlannedOrder[], snapshot: Snapshot): Invariant {
  const violations: string[] = [];
  const instanceKey = new Map(snapshot.instances.map((i) => [i.id, i.businessKey]));
  for (const { workOrderId } of plan) {
    const instances = snapshot.instances.filter((i) => i.businessKey === workOrderId).length;
    if (instances > 1) violations.push(`${workOrderId}: ${instances} process instances`);
    const billing = new Set(
      snapshot.invoiceJobs
        .filter((j) => instanceKey.get(j.processInstanceId) === workOrderId)
        .map((j) => j.processInstanceId),
    );
    if (billing.size > 1) violations.push(`${workOrderId}: ${billing.size} instances reached "Create invoice"`);
    const invoices = snapshot.invoices.filter((i) => i.workOrderId === workOrderId).length;
    if (invoices > 1) violations.push(`${workOrderId}: ${invoices} invoices`);
  }
  return { name: 'no work order invoiced twice', violations };
}

/** No completed work order without its invoice (made by that very instance). */
function completedInvoiced(snapshot: Snapshot): Invariant {
  const violations: string[] = [];
  for (const i of snapshot.instances.filter((x) => x.status === 'COMPLETED')) {
    const invoice = snapshot.invoices.find((v) => v.workOrderId === i.businessKey);
    if (invoice === undefined) violations.push(`${i.businessKey}: COMPLETED without an invoice`);
    else if (invoice.processInstanceId !== i.id)
      violations.push(`${i.businessKey}: invoiced by another instance (${invoice.processInstanceId.slice(0, 12)})`);
  }
  return { name: 'no completed work order without its invoice', violations };
}

/**
 * No work order waits silently: each is invoiced, or shows as an incident
 * (an operator's list), or was escalated and still waits for its completion
 * (the provider never answered: not invoiced, legitimately).
 */
function noSilentWait(plan: readonly PlannedOrder[], snapshot: Snapshot): Invariant {
  const violations: string[] = [];
  for (const { workOrderId } of plan) {
    if (snapshot.invoices.some((v) => v.workOrderId === workOrderId)) continue;
    const instances = snapshot.instances.filter((i) => i.businessKey === workOrderId);
    if (instances.some((i) => i.status === 'INCIDENT')) continue;
    const escalated = snapshot.escalations.some((e) => e.workOrderId === workOrderId);
    const waiting = instances.some((i) => snapshot.waitingTokens.some((t) => t.processInstanceId === i.id));
    if (!(escalated && waiting))
      violations.push(
        `${workOrderId}: not invoiced, no incident, ${escalated ? 'escalated but no token waits' : 'not escalated'} (${instances.map((i) => i.status).join(' + ') || 'no process'})`,
      );
  }
  return { name: 'no work order waits silently (invoiced, incident, or escalated and waiting)', violations };
}

/** Escalations only where the deadline was seconds (the never-answered orders), at most one per work order. */
function escalatedOnlyWhenDue(plan: readonly PlannedOrder[], snapshot: Snapshot): Invariant {
  const violations: string[] = [];
  for (const { workOrderId, scenario } of plan) {
    const n = snapshot.escalations.filter((e) => e.workOrderId === workOrderId).length;
    const due = scenarioOf(scenario).variables?.['completionDeadline'] !== undefined;
    if (n > 1) violations.push(`${workOrderId}: escalated ${n} times`);
    else if (n === 1 && !due) violations.push(`${workOrderId}: escalated before its 14-day deadline`);
  }
  return { name: 'no work order escalated twice or before its deadline', violations };
}

/** An invoiced order left its wait: the boundary timer went with it (deleted), none PENDING behind. */
function noTimerLeft(snapshot: Snapshot): Invariant {
  const violations: string[] = [];
  for (const invoice of snapshot.invoices) {
    const left = snapshot.timers.filter(
      (t) => t.processInstanceId === invoice.processInstanceId && t.status === 'PENDING',
    );
    if (left.length > 0)
      violations.push(
        `${invoice.workOrderId}: ${left.length} PENDING timer(s) (${left.map((t) => t.activityId).join(', ')})`,
      );
  }
  return { name: 'no PENDING timer left for an invoiced work order', violations };
}
