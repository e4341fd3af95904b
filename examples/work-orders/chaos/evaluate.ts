/**
 * Pure evaluation of a chaos run: where every planned message ended, against
 * the promise. Lost: a message without its document, left OPEN, or DONE
 * without having moved its process. Double correlation: an inbox id twice in
 * the instances' audit trails. Double invoice: a work order billed by more
 * than one instance or job. A race (a last tranche against its timer): the
 * instance took exactly one path, invoiced or recorded overdue, never both
 * or neither; the timer FIRED exactly when it won, and is gone (cancelled)
 * when the completion won; the completion that lost is correlated nowhere.
 * An operator's repairs: an order whose token was cancelled on purpose (a
 * cancel-token record on its instance) ends COMPLETED without an invoice,
 * its later completions waiting in the buffer (OPEN, or PARKED
 * NO_WAITING_INSTANCE), and the token it cancelled stays CANCELLED (never
 * revived by a job or a repair); no instance is left in INCIDENT.
 */
import { RACE, type ChaosPlan, type PlannedRace } from './plan';

export interface ChaosInboxDoc {
  readonly id: string;
  readonly status: string;
  readonly reason: string | null;
  readonly processInstanceId: string | null;
  readonly deadLettered: boolean;
  readonly requeued: boolean;
}

export interface ChaosSnapshot {
  readonly inbox: readonly ChaosInboxDoc[];
  readonly instances: ReadonlyArray<{
    readonly id: string;
    readonly businessKey: string;
    readonly status: string;
    readonly correlatedMessages: readonly string[];
    /** Its tokens (live and the last ended ones) and their status. */
    readonly tokens: ReadonlyArray<{ readonly id: string; readonly status: string }>;
    /** Its repair records: which repair, on which token. */
    readonly repairs: ReadonlyArray<{ readonly kind: string; readonly executionId: string | null }>;
  }>;
  /** Jobs of the "Create invoice" step that billed or may bill (not those ended stale when a repair moved their token). */
  readonly invoiceJobs: ReadonlyArray<{ readonly processInstanceId: string }>;
  readonly invoices: ReadonlyArray<{ readonly workOrderId: string; readonly processInstanceId: string }>;
  /** Timer documents (cancelled timers are deleted, so they are not here). */
  readonly timers: ReadonlyArray<{
    readonly processInstanceId: string;
    readonly activityId: string;
    readonly status: string;
  }>;
  /** Overdue records (`escalations/`), one per escalateOverdueWorkOrder job. */
  readonly escalations: ReadonlyArray<{ readonly workOrderId: string; readonly processInstanceId: string }>;
}

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
  /** Everything that breaks the promise, one line each (the first few are printed). */
  readonly violations: readonly string[];
}

/**
 * Where the completion that lost its race may be: in the buffer (OPEN: the
 * window is 24 hours, the run is shorter) or parked after the window. It must
 * not be DONE, nor in any audit trail: nothing waited for it any more.
 */
const RACE_LOSER_STATES: ReadonlySet<string> = new Set(['OPEN', 'PARKED NO_WAITING_INSTANCE']);

/** Reasons an unreadable message may end with: its own, or DEAD_LETTERED when Pub/Sub gave up on it before it was stored. */
const UNREADABLE_REASONS: ReadonlySet<string> = new Set(['INVALID_PAYLOAD', 'DEAD_LETTERED']);

/** `poisonIds[i]`: the inbox id of the i-th poison message of the plan (from its Pub/Sub messageId). */
export function evaluateChaos(plan: ChaosPlan, poisonIds: readonly string[], snapshot: ChaosSnapshot): ChaosCounts {
  const byId = new Map(snapshot.inbox.map((d) => [d.id, d]));
  const violations: string[] = [];
  const lost = (what: string): void => {
    violations.push(`lost: ${what}`);
    lostCount += 1;
  };
  let lostCount = 0;
  const expected = new Set<string>();
  const trailCount = new Map<string, number>();
  const trailOwner = new Map<string, string>();
  for (const instance of snapshot.instances) {
    for (const id of instance.correlatedMessages) {
      trailCount.set(id, (trailCount.get(id) ?? 0) + 1);
      trailOwner.set(id, instance.id);
    }
  }
  /** A document that must be DONE and have moved exactly the instance it names. */
  const mustBeCorrelated = (id: string, what: string): void => {
    const doc = byId.get(id);
    if (doc === undefined) return lost(`${what}: no inbox document`);
    if (doc.status !== 'DONE') return lost(`${what}: ${doc.status}${doc.reason === null ? '' : ` ${doc.reason}`}`);
    if (trailOwner.get(id) !== doc.processInstanceId)
      lost(`${what}: DONE, but not in the audit trail of instance ${doc.processInstanceId ?? 'none'}`);
  };

  const instancesOf = new Map<string, string[]>();
  for (const i of snapshot.instances) instancesOf.set(i.businessKey, [...(instancesOf.get(i.businessKey) ?? []), i.id]);
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
  // The races the timer won: the order was recorded overdue and billed nowhere (both paths is judged below).
  const racesByMessage = new Map<number, PlannedRace>(plan.races.map((r) => [r.message, r]));
  // Orders an operator cancelled on purpose: the record on the instance says so.
  const cancelled = new Set(
    snapshot.instances.filter((i) => i.repairs.some((r) => r.kind === 'cancel-token')).map((i) => i.businessKey),
  );
  const heldByCancel = new Set<string>();
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
  const lostRaces = new Set<string>();

  let poisonIndex = 0;
  for (const [index, m] of plan.messages.entries()) {
    const what = `message ${index} (${m.kind})`;
    switch (m.kind) {
      case 'completion':
      case 'duplicate':
        expected.add(m.docId);
        if (m.kind !== 'completion') break;
        if (timerWon.has(racesByMessage.get(index)?.workOrderId ?? '')) {
          lostRaces.add(m.docId);
          const doc = byId.get(m.docId);
          const state =
            doc === undefined ? 'no inbox document' : `${doc.status}${doc.reason === null ? '' : ` ${doc.reason}`}`;
          if (!RACE_LOSER_STATES.has(state))
            lost(
              `${what} ${m.workOrderId} tranche ${m.tranche} lost its race: ${state}, expected OPEN or PARKED NO_WAITING_INSTANCE`,
            );
          if (trailCount.has(m.docId))
            violations.push(
              `${m.workOrderId}: the tranche that lost its race was correlated (instance ${trailOwner.get(m.docId)?.slice(0, 12) ?? '?'})`,
            );
        } else if (cancelled.has(m.workOrderId) && byId.get(m.docId)?.status !== 'DONE') {
          // Its token was cancelled before this tranche came: nobody waits for it, and the inbox keeps it, visible.
          heldByCancel.add(m.docId);
          const doc = byId.get(m.docId);
          const state =
            doc === undefined ? 'no inbox document' : `${doc.status}${doc.reason === null ? '' : ` ${doc.reason}`}`;
          if (!RACE_LOSER_STATES.has(state))
            lost(
              `${what} ${m.workOrderId} tranche ${m.tranche}, after its order was cancelled: ${state}, expected OPEN or PARKED NO_WAITING_INSTANCE`,
            );
        } else mustBeCorrelated(m.docId, `${what} ${m.workOrderId} tranche ${m.tranche}`);
        break;
      case 'collision': {
        expected.add(m.docId);
        const parked = m.collisionIds.map((id) => byId.get(id)).filter((d) => d !== undefined);
        for (const id of m.collisionIds) expected.add(id);
        // One of the two payloads owns the event id (DONE, checked with the completion); the other is parked as the collision.
        if (parked.length !== 1) lost(`${what}: ${parked.length} collision documents, expected 1`);
        else if (
          parked[0]?.status !== 'PARKED' ||
          (parked[0].reason !== 'KEY_COLLISION' && parked[0].reason !== 'DEAD_LETTERED')
        )
          lost(`${what}: collision ${parked[0]?.status} ${parked[0]?.reason ?? ''}`);
        break;
      }
      case 'poison': {
        const id = poisonIds[poisonIndex++];
        if (id === undefined) {
          lost(`${what}: never published`);
          break;
        }
        expected.add(id);
        const doc = byId.get(id);
        if (doc === undefined) lost(`${what} (${m.variant}): no inbox document`);
        else if (doc.status !== 'PARKED' || doc.reason === null || !UNREADABLE_REASONS.has(doc.reason))
          lost(`${what} (${m.variant}): ${doc.status} ${doc.reason ?? ''}`);
        break;
      }
    }
  }
  for (const doc of snapshot.inbox) {
    if (!expected.has(doc.id))
      violations.push(`unexpected document ${doc.id.slice(0, 12)}: ${doc.status} ${doc.reason ?? ''}`);
    else if (doc.status === 'OPEN' && !lostRaces.has(doc.id) && !heldByCancel.has(doc.id))
      violations.push(`still OPEN: ${doc.id.slice(0, 12)}`);
  }
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

  let doubleCorrelations = 0;
  for (const [id, n] of trailCount) {
    if (n > 1) {
      doubleCorrelations += n - 1;
      violations.push(`double correlation: ${id.slice(0, 12)} moved processes ${n} times`);
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
    const completed = snapshot.instances.some((i) => i.businessKey === workOrderId && i.status === 'COMPLETED');
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
    lost: lostCount,
    doubleCorrelations,
    doubleInvoices,
    violations,
  };
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
  return `chaos seed ${seed}: messages ${c.messages}, DONE ${c.done}, PARKED ${parked === '' ? 0 : parked}, dead-lettered ${c.deadLettered} (requeued ${c.requeued}), lost ${c.lost}, double correlations ${c.doubleCorrelations}, double invoices ${c.doubleInvoices}, races ${c.races} (timer won ${c.racesWonByTimer}, completion won ${c.racesWonByCompletion}, both paths ${c.bothPaths})${repairs}, work orders invoiced ${c.ordersInvoiced} + overdue ${c.ordersOverdue} + cancelled ${c.ordersCancelled} of ${c.orders} (${seconds} s)`;
}
