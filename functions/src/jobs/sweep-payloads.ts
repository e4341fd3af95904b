import type { Firestore, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { classifyFailure, errorMessage } from '../core/errors';
import { gsUri } from '../core/gs-uri';
import { offloadedObject } from '../inbox/claim-check';
import { deleteWithChunks } from '../inbox/delete-document';
import { type InstanceHold, readInstanceHolds } from '../inbox/instance-hold';
import type { Logger } from '../log';
import { QUERIES } from '../queries';
import type { PayloadStore } from '../storage/payload-store';

/**
 * The payload sweep: the retention of what the TTL policy cannot delete
 * whole (the purge path of issue 17, decision 5). A DONE document whose
 * payload the receiver offloaded, or whose raw bytes are in `rawChunks`,
 * carries `payloadExpireAt` instead of `expireAt` (inbox/claim-check.ts,
 * doneRetention), so the TTL policy never deletes it before its object or
 * its chunks. This sweep, run inside sweepJobs every minute, takes the
 * oldest page of those past `payloadExpireAt`, deletes each one's object
 * (already gone is fine), then its chunks and the document in one batch, on
 * the condition that the document is unchanged since it was read. The
 * object goes first: a document without its object is what a crash in
 * between leaves, and the next sweep finds it and finishes; an object
 * without its document would be an orphan nobody lists.
 *
 * An offloaded document whose instance may still read the object (it
 * exists and is not COMPLETED, or has a PENDING job: inbox/instance-hold.ts)
 * is kept, document and object, and moved on by holdDelayMs: an incident's
 * repair re-runs the step that reads the report. Once the instance
 * completes, the sweep after that deletes it.
 *
 * A document whose object cannot be deleted (an outage, a 403, a bucket
 * that is gone) is moved back by an hour, so a few that fail every time
 * never hold up the queue behind them; the same for the ones kept for
 * their instance.
 *
 * PARKED documents never carry payloadExpireAt, so their objects and chunks
 * stay as long as they do. The processed record keeps its own expireAt
 * (TTL), as for every DONE document.
 */

/** How much one sweep call does. */
export interface PayloadSweepOptions {
  /** Documents read per call, oldest payloadExpireAt first (default 100); what is left is the next call's. */
  readonly pageSize?: number;
  /** Objects deleted at once (default 8). */
  readonly parallelism?: number;
  /** How far a document whose sweep failed is moved back (default 1 h): see {@link postpone}. */
  readonly retryDelayMs?: number;
  /** How far a document kept for its instance is moved on (default 1 h): how soon after the instance completes it goes. */
  readonly holdDelayMs?: number;
}

/** The default of {@link PayloadSweepOptions.retryDelayMs}. */
export const PAYLOAD_SWEEP_RETRY_DELAY_MS = 3_600_000;
/** The default of {@link PayloadSweepOptions.holdDelayMs}. */
export const PAYLOAD_SWEEP_HOLD_DELAY_MS = 3_600_000;

/** What one payload sweep did; logged as one line, and part of sweepJobs' answer. */
export interface PayloadSweepSummary {
  /** Documents deleted, each after its object and with its chunks. */
  deleted: number;
  /** Of those, documents whose object was gone already (a sweep that crashed after the object, a manual delete). */
  objectAbsent: number;
  /** Documents left as they are: changed since read (the delete's precondition failed), or not a DONE document with an object or chunks. */
  kept: number;
  /** Offloaded documents kept with their object because their instance may still read it (not COMPLETED): moved on by holdDelayMs. */
  keptForInstance: number;
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

/** Whether a document is one the sweep deletes: DONE, with an offloaded payload or raw bytes in chunks. */
const sweepable = (snap: QueryDocumentSnapshot): boolean =>
  snap.get('status') === 'DONE' &&
  (offloadedObject(snap.get('offloaded')) !== null || Number(snap.get('rawDataChunks') ?? 0) > 0);

/** One document of the page: object, then chunks and document; or kept, moved on, while its instance holds it. */
async function sweepOne(
  deps: PayloadSweepDeps,
  snap: QueryDocumentSnapshot,
  hold: InstanceHold | undefined,
  summary: PayloadSweepSummary,
  options: Required<Pick<PayloadSweepOptions, 'retryDelayMs' | 'holdDelayMs'>>,
): Promise<void> {
  if (!sweepable(snap)) {
    // Not written by a DONE of an offloaded or chunked payload (a hand edit): never deleted on a guess.
    summary.kept += 1;
    deps.log.warn('payloadExpireAt on a document that is not a DONE offloaded or chunked one: kept, not deleted', {
      inboxId: snap.id,
      status: String(snap.get('status')),
    });
    return;
  }
  if (hold !== undefined) {
    // Its instance may still read the object (an incident's repair re-runs the step that reads it): not yet.
    summary.keptForInstance += 1;
    await postpone(snap, deps.now, options.holdDelayMs);
    return;
  }
  const object = offloadedObject(snap.get('offloaded'));
  try {
    const gone = object === null ? null : await deps.store().delete(object);
    // With the document, its chunks: an unreadable message's raw bytes, or what a requeue left (it offloaded a dead
    // letter's chunks, then crashed before deleting them). A deleted document would leave its subcollection behind.
    if ((await deleteWithChunks(deps.db, snap)) === 'CHANGED') {
      summary.kept += 1;
      return;
    }
    summary.deleted += 1;
    if (gone === 'ABSENT') summary.objectAbsent += 1;
  } catch (err) {
    summary.failures += 1;
    const failure = classifyFailure(err);
    const until = await postpone(snap, deps.now, options.retryDelayMs);
    // WARNING for a passing failure; a refusal (403, a bucket that is gone) is a deployment fault: ERROR, so it alerts.
    deps.log.log(
      failure.kind === 'retryable' ? 'WARNING' : 'ERROR',
      'offloaded payload not swept; postponed so the rest of the queue proceeds',
      {
        inboxId: snap.id,
        object: object === null ? null : gsUri(object),
        code: failure.code,
        error: errorMessage(err),
        payloadExpireAt: until === null ? null : until.toISOString(),
      },
    );
  }
}

/**
 * One call of the payload sweep. The query, or the read of the page's
 * instances, failing throws (sweepJobs answers 503/500 and logs it; nothing
 * was deleted: no document is deleted before its instance is known); a single document's failure is counted,
 * logged and the document moved back (postpone), never thrown: the rest of
 * the page still goes, and the next pages are not held behind it.
 */
export async function sweepPayloads(
  deps: PayloadSweepDeps,
  options: PayloadSweepOptions = {},
): Promise<PayloadSweepSummary> {
  const {
    pageSize = 100,
    parallelism = 8,
    retryDelayMs = PAYLOAD_SWEEP_RETRY_DELAY_MS,
    holdDelayMs = PAYLOAD_SWEEP_HOLD_DELAY_MS,
  } = options;
  const page = await QUERIES.expiredPayloads.build(deps.db, deps.now, pageSize).get();
  // One batched read of the instances the page's offloaded documents went into (two fields each).
  const holds = await readInstanceHolds(
    deps.db,
    page.docs.filter(sweepable).map((d) => ({ id: d.id, data: d.data() })),
  );
  const summary: PayloadSweepSummary = {
    deleted: 0,
    objectAbsent: 0,
    kept: 0,
    keptForInstance: 0,
    failures: 0,
    queryReads: Math.max(1, page.size),
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let snap = page.docs[next++]; snap !== undefined; snap = page.docs[next++])
      await sweepOne(deps, snap, holds.get(snap.id), summary, { retryDelayMs, holdDelayMs });
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, page.size) }, worker));
  // The kept ones by name: `inbox explain ID` says the same of each.
  const keptFor = [...holds].map(([inboxId, h]) => ({
    inboxId,
    processInstanceId: h.processInstanceId,
    instanceStatus: h.instanceStatus,
  }));
  if (page.size > 0)
    deps.log.info('payload sweep', {
      payloadSweep: { ...summary },
      ...(keptFor.length === 0 ? {} : { keptForInstance: keptFor }),
    });
  return summary;
}
