import type { DocumentData, Firestore, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { classifyFailure, errorMessage, GRPC_FAILED_PRECONDITION } from '../core/errors';
import type { GsObject } from '../core/gs-uri';
import type { Logger } from '../log';
import { QUERIES } from '../queries';
import type { PayloadStore } from '../storage/payload-store';

/**
 * The payload sweep: the retention of offloaded payloads (the purge path of
 * issue 17, decision 5). A DONE document whose payload the receiver offloaded
 * carries `payloadExpireAt` instead of `expireAt` (inbox/claim-check.ts,
 * doneRetention), so the TTL policy never deletes it before its object. This
 * sweep, run inside sweepJobs every minute, takes the oldest page of those
 * past `payloadExpireAt`, deletes each one's object (already gone is fine),
 * then the document, on the condition that it is unchanged since it was
 * read. The object goes first: a document without its object is what a
 * crash in between leaves, and the next sweep finds it and finishes; an
 * object without its document would be an orphan nobody lists.
 *
 * PARKED documents never carry payloadExpireAt, so their objects stay as
 * long as they do. The processed record keeps its own expireAt (TTL), as for
 * every DONE document.
 */

/** How much one sweep call does. */
export interface PayloadSweepOptions {
  /** Documents read per call, oldest payloadExpireAt first (default 100); what is left is the next call's. */
  readonly pageSize?: number;
  /** Objects deleted at once (default 8). */
  readonly parallelism?: number;
}

/** What one payload sweep did; logged as one line, and part of sweepJobs' answer. */
export interface PayloadSweepSummary {
  /** Documents deleted, each after its object. */
  deleted: number;
  /** Of those, documents whose object was gone already (a sweep that crashed after the object, a manual delete). */
  objectAbsent: number;
  /** Documents left as they are: changed since read (the delete's precondition failed), or not a DONE offloaded document. */
  kept: number;
  /** Documents the sweep could not finish (storage or Firestore failed): the next call tries again. */
  failures: number;
  /** Document reads billed for the query (one per document listed, at least one). */
  queryReads: number;
}

/** What the sweep needs of the function it runs in (sweepJobs). */
export interface PayloadSweepDeps {
  readonly db: Firestore;
  readonly store: () => PayloadStore;
  readonly log: Logger;
  readonly now: Date;
}

/** The object a stored `offloaded` field names, or null when the field is absent or not a claim this code wrote. */
export function offloadedObject(value: unknown): GsObject | null {
  if (typeof value !== 'object' || value === null) return null;
  const { bucket, object, generation } = value as DocumentData;
  return typeof bucket === 'string' && typeof object === 'string' && typeof generation === 'string' ? { bucket, object, generation } : null;
}

/** Deletes the document only if nothing changed it since `snap` was read: 'CHANGED' otherwise (kept for a later look). */
export async function deleteIfUnchanged(snap: QueryDocumentSnapshot): Promise<'DELETED' | 'CHANGED'> {
  try {
    await snap.ref.delete({ lastUpdateTime: snap.updateTime });
    return 'DELETED';
  } catch (err) {
    if ((err as { code?: unknown }).code === GRPC_FAILED_PRECONDITION) return 'CHANGED';
    throw err;
  }
}

/** One document of the page: object, then document. */
async function sweepOne(deps: PayloadSweepDeps, snap: QueryDocumentSnapshot, summary: PayloadSweepSummary): Promise<void> {
  const object = offloadedObject(snap.get('offloaded'));
  if (snap.get('status') !== 'DONE' || object === null) {
    // Not written by the relay's DONE of an offloaded payload (a hand edit): never deleted on a guess.
    summary.kept += 1;
    deps.log.warn('payloadExpireAt on a document that is not a DONE offloaded one: kept, not deleted', { inboxId: snap.id, status: String(snap.get('status')) });
    return;
  }
  try {
    const gone = await deps.store().delete(object);
    if ((await deleteIfUnchanged(snap)) === 'CHANGED') {
      summary.kept += 1;
      return;
    }
    summary.deleted += 1;
    if (gone === 'ABSENT') summary.objectAbsent += 1;
  } catch (err) {
    summary.failures += 1;
    const failure = classifyFailure(err);
    deps.log.log(failure.kind === 'retryable' ? 'WARNING' : 'ERROR', 'offloaded payload not swept; the next sweep tries again', { inboxId: snap.id, object: object.object, code: failure.code, error: errorMessage(err) });
  }
}

/**
 * One call of the payload sweep. The query failing throws (sweepJobs
 * answers 503/500 and logs it); a single document's failure is counted and
 * logged, never thrown: the rest of the page still goes.
 */
export async function sweepPayloads(deps: PayloadSweepDeps, options: PayloadSweepOptions = {}): Promise<PayloadSweepSummary> {
  const { pageSize = 100, parallelism = 8 } = options;
  const page = await QUERIES.expiredPayloads.build(deps.db, deps.now, pageSize).get();
  const summary: PayloadSweepSummary = { deleted: 0, objectAbsent: 0, kept: 0, failures: 0, queryReads: Math.max(1, page.size) };
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let snap = page.docs[next++]; snap !== undefined; snap = page.docs[next++]) await sweepOne(deps, snap, summary);
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, page.size) }, worker));
  if (page.size > 0) deps.log.info('payload sweep', { payloadSweep: { ...summary } });
  return summary;
}
