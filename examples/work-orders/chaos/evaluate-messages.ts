/**
 * Where every planned message of a chaos run ended, against the promise.
 * Lost: a message without its document, left OPEN, or DONE without having
 * moved its process. Double correlation: an inbox id twice in the
 * instances' audit trails. The completion that lost its race, and those
 * that came after their order was cancelled, wait in the buffer.
 */
import type { OrderFacts } from './facts';
import type { ChaosPlan, PlannedRace } from './plan';
import type { ChaosSnapshot } from './snapshot';

/**
 * Where the completion that lost its race may be: in the buffer (OPEN: the
 * window is 24 hours, the run is shorter) or parked after the window. It must
 * not be DONE, nor in any audit trail: nothing waited for it any more.
 */
const RACE_LOSER_STATES: ReadonlySet<string> = new Set(['OPEN', 'PARKED NO_WAITING_INSTANCE']);

/** Reasons an unreadable message may end with: its own, or DEAD_LETTERED when Pub/Sub gave up on it before it was stored. */
const UNREADABLE_REASONS: ReadonlySet<string> = new Set(['INVALID_PAYLOAD', 'DEAD_LETTERED']);

export interface MessageVerdict {
  readonly lost: number;
  readonly doubleCorrelations: number;
  readonly violations: readonly string[];
}

/** `poisonIds[i]`: the inbox id of the i-th poison message of the plan (from its Pub/Sub messageId). */
export function judgeMessages(
  plan: ChaosPlan,
  poisonIds: readonly string[],
  snapshot: ChaosSnapshot,
  { cancelled, timerWon }: Pick<OrderFacts, 'cancelled' | 'timerWon'>,
): MessageVerdict {
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

  const racesByMessage = new Map<number, PlannedRace>(plan.races.map((r) => [r.message, r]));
  const heldByCancel = new Set<string>();
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
  let doubleCorrelations = 0;
  for (const [id, n] of trailCount) {
    if (n > 1) {
      doubleCorrelations += n - 1;
      violations.push(`double correlation: ${id.slice(0, 12)} moved processes ${n} times`);
    }
  }
  return { lost: lostCount, doubleCorrelations, violations };
}
