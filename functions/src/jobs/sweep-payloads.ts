import type { DocumentData, Firestore, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { deleteRawChunks } from '../inbox/store-message';
import { classifyFailure, errorMessage, GRPC_FAILED_PRECONDITION } from '../core/errors';
import { gsUri, type GsObject } from '../core/gs-uri';
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
 * A document whose object cannot be deleted (an outage, a 403, a bucket
 * that is gone) is moved back by an hour, so a few that fail every time
 * never hold up the queue behind them.
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
  /** How far a document whose sweep failed is moved back (default 1 h): see {@link postpone}. */
  readonly retryDelayMs?: number;
}

/** The default of {@link PayloadSweepOptions.retryDelayMs}. */
export const PAYLOAD_SWEEP_RETRY_DELAY_MS = 3_600_000;

/** What one payload sweep did; logged as one line, and part of sweepJobs' answer. */
export interface PayloadSweepSummary {
  /** Documents deleted, each after its object. */
  deleted: number;
  /** Of those, documents whose object was gone already (a sweep that crashed after the object, a manual delete). */
  objectAbsent: number;
  /** Documents left as they are: changed since read (the delete's precondition failed), or not a DONE offloaded document. */
  kept: number;
  /** Documents the sweep could not finish (storage or Firestore failed): moved back by retryDelayMs, tried again then. */
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

/**
 * Moves a document whose sweep failed to `payloadExpireAt = now + delay`,
 * if nothing changed it since it was read. The sweep takes the oldest page
 * every time: documents that fail every time (a 403 on an old bucket after
 * INBOX_PAYLOAD_BUCKET changed, a bucket that is gone) would otherwise fill
 * that page for good and nothing behind them would ever be swept. Moved
 * back, they are tried again later and the rest proceed. Returns the new
 * time, or null when the document changed meanwhile or the update failed
 * (then it is simply tried again next call).
 */
async function postpone(snap: QueryDocumentSnapshot, now: Date, delayMs: number): Promise<Date | null> {
  const until = new Date(now.getTime() + delayMs);
  try {
    await snap.ref.update({ payloadExpireAt: until }, { lastUpdateTime: snap.updateTime });
    return until;
  } catch {
    return null;
  }
}

/** One document of the page: object, then document. */
async function sweepOne(deps: PayloadSweepDeps, snap: QueryDocumentSnapshot, summary: PayloadSweepSummary, retryDelayMs: number): Promise<void> {
  const object = offloadedObject(snap.get('offloaded'));
  if (snap.get('status') !== 'DONE' || object === null) {
    // Not written by the relay's DONE of an offloaded payload (a hand edit): never deleted on a guess.
    summary.kept += 1;
    deps.log.warn('payloadExpireAt on a document that is not a DONE offloaded one: kept, not deleted', { inboxId: snap.id, status: String(snap.get('status')) });
    return;
  }
  try {
    const gone = await deps.store().delete(object);
    // Chunks a requeue left (it offloaded a dead letter's chunks, then crashed before deleting them): a deleted
    // document leaves its subcollection behind, and nothing of a DONE offloaded document reads them.
    await deleteRawChunks(deps.db, snap.id);
    if ((await deleteIfUnchanged(snap)) === 'CHANGED') {
      summary.kept += 1;
      return;
    }
    summary.deleted += 1;
    if (gone === 'ABSENT') summary.objectAbsent += 1;
  } catch (err) {
    summary.failures += 1;
    const failure = classifyFailure(err);
    const until = await postpone(snap, deps.now, retryDelayMs);
    // WARNING for a passing failure; a refusal (403, a bucket that is gone) is a deployment fault: ERROR, so it alerts.
    deps.log.log(failure.kind === 'retryable' ? 'WARNING' : 'ERROR', 'offloaded payload not swept; postponed so the rest of the queue proceeds', {
      inboxId: snap.id,
      object: gsUri(object),
      code: failure.code,
      error: errorMessage(err),
      payloadExpireAt: until === null ? null : until.toISOString(),
    });
  }
}

/**
 * One call of the payload sweep. The query failing throws (sweepJobs
 * answers 503/500 and logs it); a single document's failure is counted,
 * logged and the document moved back (postpone), never thrown: the rest of
 * the page still goes, and the next pages are not held behind it.
 */
export async function sweepPayloads(deps: PayloadSweepDeps, options: PayloadSweepOptions = {}): Promise<PayloadSweepSummary> {
  const { pageSize = 100, parallelism = 8, retryDelayMs = PAYLOAD_SWEEP_RETRY_DELAY_MS } = options;
  const page = await QUERIES.expiredPayloads.build(deps.db, deps.now, pageSize).get();
  const summary: PayloadSweepSummary = { deleted: 0, objectAbsent: 0, kept: 0, failures: 0, queryReads: Math.max(1, page.size) };
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let snap = page.docs[next++]; snap !== undefined; snap = page.docs[next++]) await sweepOne(deps, snap, summary, retryDelayMs);
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, page.size) }, worker));
  if (page.size > 0) deps.log.info('payload sweep', { payloadSweep: { ...summary } });
  return summary;
}
