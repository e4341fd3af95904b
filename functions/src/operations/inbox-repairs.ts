import type { Firestore } from '@google-cloud/firestore';
import { asCorrelationKey, refs, saveCorrelationKey } from '../engine/store/collections';
import { checkBasis, documentBasis, type RepairBasis } from '../engine/repair-basis';
import {
  appliedRepair,
  newRequestId,
  type RepairBinding,
  type RepairOptions,
  repairRecord,
  runRepair,
  withRepair,
} from '../engine/store/repair-request';
import { adoptedFields, type OffloadedPayload } from '../inbox/claim-check';
import { INBOX } from '../inbox/document';
import { type InboxView, laneEntryOf } from '../relay/inbox-writes';
import { withoutEntry } from '../relay/lane';
import { RefusedError } from './refused';

const REQUEUE: RepairBinding = { kind: 'requeue', target: '' };
const PARK: RepairBinding = { kind: 'park', target: '' };

export type RequeueCheck =
  | { readonly ok: true; readonly doc: InboxView; readonly correlationKey: string }
  | { readonly ok: false; readonly why: string };

/** What a requeue did: `misfit` set when the document stayed PARKED as INVALID_PAYLOAD, its payload no longer fitting today's schema. */
export interface RequeueResult {
  readonly previousReason: string | null;
  readonly alreadyApplied: boolean;
  readonly basis: RepairBasis | null;
  readonly misfit: string | null;
}

/**
 * Whether `requeue` can requeue a document as read (undefined: no such
 * document). The one check of the real run (inside its transaction) and of
 * --dry-run (a plain read), so the dry run lists what the real run refuses.
 */
export function checkRequeue(id: string, doc: InboxView | undefined): RequeueCheck {
  if (doc === undefined) return { ok: false, why: `no inbox document ${id}: check the id (\`inbox list\` shows them)` };
  if (doc.status !== 'PARKED')
    return { ok: false, why: `${id} is ${doc.status}, only PARKED documents can be requeued` };
  if (doc.correlationKey === null || doc.messageName === null || doc.payload === null) {
    return {
      ok: false,
      why: `${id} is unreadable (${doc.reason ?? 'no reason'}): nothing to correlate; fix the sender and publish it again`,
    };
  }
  // A second payload under an event id the inbox already holds: correlating it would count that business event twice.
  if (typeof doc.collidesWith === 'string') {
    return {
      ok: false,
      why: `${id} is a second payload of the event in ${doc.collidesWith} (KEY_COLLISION): requeueing it would count that event twice; if it is an event of its own, \`inbox repair admit-collision ${id} --dry-run\` shows both payloads, then run it without --dry-run`,
    };
  }
  return { ok: true, doc, correlationKey: doc.correlationKey };
}

/**
 * PARKED back to OPEN: attempts 0, due now, back in its key's lane (so per-key
 * order and the waiting point's buffer see it again). The article's
 * `UPDATE ... SET status = 'OPEN', attempts = 0, next_attempt = now()`, as one
 * transaction. Unreadable messages (no correlation key) cannot be requeued:
 * there is nothing to correlate; fix the sender and publish again. Nor can a
 * key collision (also when it was dead-lettered): its event is in the inbox
 * already. Idempotent per request id (one per command run, see
 * repair-request.ts): a re-run that finds it recorded reports it requeued.
 * `options`: who, whether it only previews, and the basis of its preview
 * (repair-request.ts): refused if the document's status or reason changed since.
 * `misfit`: why its payload no longer fits the app's message schema as
 * deployed now (requeue-fit.ts), or null when it fits. Such a document is
 * not reopened: it stays PARKED, now as INVALID_PAYLOAD with that text as
 * its lastError and validationError, recorded as this requeue (a re-run
 * reports it the same way); once the app accepts it again, a requeue reopens it.
 */
export async function requeue(
  db: Firestore,
  id: string,
  now: Date,
  requestId: string = newRequestId(),
  offloaded: OffloadedPayload | null = null,
  options: RepairOptions = {},
  misfit: string | null = null,
): Promise<RequeueResult> {
  return runRepair(
    db,
    async (uow) => {
      const ref = db.collection(INBOX).doc(id);
      const stored = (await uow.get(ref)) as InboxView | undefined;
      const applied = appliedRepair(stored, requestId, REQUEUE);
      if (applied !== null)
        return {
          previousReason: typeof applied.details.previousReason === 'string' ? applied.details.previousReason : null,
          alreadyApplied: true,
          basis: null,
          misfit: typeof applied.details.misfit === 'string' ? applied.details.misfit : null,
        };
      const basis = documentBasis(stored);
      checkBasis(options.expect, basis, `document ${id}`);
      const check = checkRequeue(id, stored);
      if (!check.ok) throw new RefusedError(check.why);
      const { doc } = check;
      if (misfit !== null) {
        // Stays out of its key's lane (a PARKED document is in none): only its reason and text change.
        uow.set(
          ref,
          withRepair(
            {
              ...doc,
              reason: 'INVALID_PAYLOAD',
              lastError: misfit,
              validationError: misfit,
              parkedAt: now,
              requeuedAt: now,
              previousReason: doc.reason,
            },
            repairRecord(REQUEUE, requestId, now, { previousReason: doc.reason, misfit }, options.actor),
          ),
        );
        return { previousReason: doc.reason, alreadyApplied: false, basis, misfit };
      }
      const key = asCorrelationKey(await uow.get(refs.correlationKey(db, check.correlationKey)), check.correlationKey);
      // `offloaded`: the payload of a dead letter kept in chunks, written to the bucket just before (offload-chunked.ts).
      const reopened: InboxView = {
        ...doc,
        ...adoptedFields(offloaded),
        status: 'OPEN',
        reason: null,
        attempts: 0,
        nextAttemptAt: now,
        parkedAt: null,
      };
      saveCorrelationKey(uow, { ...key, open: [...withoutEntry(key.open, id), laneEntryOf(id, reopened)] }, now);
      uow.set(
        ref,
        withRepair(
          { ...reopened, requeuedAt: now, previousReason: doc.reason },
          repairRecord(REQUEUE, requestId, now, { previousReason: doc.reason }, options.actor),
        ),
      );
      return { previousReason: doc.reason, alreadyApplied: false, basis, misfit: null };
    },
    options.sink === undefined ? {} : { sink: options.sink },
  );
}

/** OPEN to PARKED (reason MANUAL) with the operator's text; out of its key's lane. Idempotent per request id and held to its preview, as {@link requeue}. */
export async function park(
  db: Firestore,
  id: string,
  text: string,
  now: Date,
  requestId: string = newRequestId(),
  options: RepairOptions = {},
): Promise<{ alreadyApplied: boolean; basis: RepairBasis | null }> {
  return runRepair(
    db,
    async (uow) => {
      const ref = db.collection(INBOX).doc(id);
      const doc = (await uow.get(ref)) as InboxView | undefined;
      if (doc === undefined)
        throw new RefusedError(`no inbox document ${id}: check the id (\`inbox list\` shows them)`);
      if (appliedRepair(doc, requestId, PARK) !== null) return { alreadyApplied: true, basis: null };
      const basis = documentBasis(doc);
      checkBasis(options.expect, basis, `document ${id}`);
      if (doc.status !== 'OPEN') throw new RefusedError(`${id} is ${doc.status}, only OPEN documents can be parked`);
      if (doc.correlationKey !== null) {
        const key = asCorrelationKey(await uow.get(refs.correlationKey(db, doc.correlationKey)), doc.correlationKey);
        saveCorrelationKey(uow, { ...key, open: withoutEntry(key.open, id) }, now);
      }
      uow.set(
        ref,
        withRepair(
          { ...doc, status: 'PARKED', reason: 'MANUAL', lastError: text, parkedAt: now, nextAttemptAt: null },
          repairRecord(PARK, requestId, now, {}, options.actor),
        ),
      );
      return { alreadyApplied: false, basis };
    },
    options.sink === undefined ? {} : { sink: options.sink },
  );
}
