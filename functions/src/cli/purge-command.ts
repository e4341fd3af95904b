import type {
  BulkWriterError,
  DocumentSnapshot,
  Firestore,
  GrpcStatus,
  QueryDocumentSnapshot,
} from '@google-cloud/firestore';
import { isTimestamp } from '../core/timestamp';
import { offloadedObject } from '../inbox/claim-check';
import { deleteWithChunks } from '../inbox/delete-document';
import { type InstanceHold, readInstanceHolds } from '../inbox/instance-hold';
import { QUERIES } from '../queries';
import type { PayloadStore } from '../storage/payload-store';
import { type BulkOptions, confirmBulk } from './bulk';
import type { CliContext } from './context';
import { RefusedError } from '../operations/refused';
import { print } from './output';
import { parseTime, UsageError } from './parse';
import { pageProgress } from './progress';

/** DONE documents read per page: what purge holds in memory at a time. */
export const PURGE_PAGE_SIZE = 500;

/** gRPC FAILED_PRECONDITION: the document changed after its page was read (its update time no longer matches). */
const FAILED_PRECONDITION: GrpcStatus = 9;

export interface PurgeOptions {
  readonly dryRun: boolean;
  readonly pageSize?: number;
  /** Called with each page as read, before its deletes (progress; tests change a document here). */
  readonly onPage?: (page: readonly QueryDocumentSnapshot[], totals: PurgeResult) => void | Promise<void>;
  /**
   * Cloud Storage: a DONE document whose payload was offloaded has its
   * object deleted first (as the payload sweep does). Without it, purge
   * refuses to delete such a document (its object would be left behind).
   */
  readonly payloadStore?: () => PayloadStore;
}

export interface PurgeResult {
  /** DONE documents looked at. */
  readonly scanned: number;
  /** Of those, processed before the bound. */
  readonly matched: number;
  readonly deleted: number;
  /** Matched but changed between the read and the delete, so kept (a later purge looks again). */
  readonly changedSinceRead: number;
  /** Of the matched, documents with an offloaded payload (`offloaded`): their object is deleted before them. */
  readonly offloaded: number;
  /** Objects of offloaded payloads deleted (an object found gone already is not counted). */
  readonly objectsDeleted: number;
  /** Of the matched, documents with raw bytes in `rawChunks`: the chunks go in the same batch as the document. */
  readonly chunked: number;
  /** Of the matched, offloaded documents kept with their object: the instance they went into may still read it (inbox/instance-hold.ts). */
  readonly keptForInstance: number;
  /** Those documents, with the instance and its status. */
  readonly kept: ReadonlyArray<InstanceHold & { readonly inboxId: string }>;
}

const processedBefore = (snap: DocumentSnapshot, before: Date): boolean => {
  const at: unknown = snap.get('processedAt');
  return isTimestamp(at) && at.toDate() < before;
};

const hasChunks = (d: DocumentSnapshot): boolean => Number(d.get('rawDataChunks') ?? 0) > 0;

/**
 * Deletes the DONE inbox documents processed before `before`, page by page in
 * id order (a page at a time in memory, whatever the inbox holds). Each
 * delete carries the update time it was read with, so a document that
 * changed since (a dead-letter event recorded on it, say) is kept, not
 * deleted unseen. Touches the `inbox` collection, the `rawChunks` of the
 * documents it deletes (in the same batch as each document: a document
 * deleted alone leaves them behind) and, for a document whose payload was
 * offloaded, its object in the payload bucket (deleted first, as the payload
 * sweep does); nothing else is ever deleted here (records with their own TTL
 * keep their own horizon). An offloaded document is kept, with its object,
 * while the instance it went into may still read it (exists, not COMPLETED:
 * inbox/instance-hold.ts), as the payload sweep keeps it.
 */
export async function purgeDone(db: Firestore, before: Date, options: PurgeOptions): Promise<PurgeResult> {
  const pageSize = options.pageSize ?? PURGE_PAGE_SIZE;
  let totals: PurgeResult = {
    scanned: 0,
    matched: 0,
    deleted: 0,
    changedSinceRead: 0,
    offloaded: 0,
    objectsDeleted: 0,
    chunked: 0,
    keptForInstance: 0,
    kept: [],
  };
  let after: DocumentSnapshot | null = null;
  for (;;) {
    const page = await QUERIES.inboxList.build(db, { status: 'DONE' }, after, pageSize).get();
    if (page.empty) break;
    const matches = page.docs.filter((d) => processedBefore(d, before));
    const holds = await readInstanceHolds(
      db,
      matches.map((d) => ({ id: d.id, data: d.data() })),
    );
    const kept = [...holds].map(([inboxId, h]) => ({ inboxId, ...h }));
    const deletable = matches.filter((d) => !holds.has(d.id));
    const offloaded = deletable.filter((d) => offloadedObject(d.get('offloaded')) !== null);
    totals = {
      ...totals,
      scanned: totals.scanned + page.size,
      matched: totals.matched + matches.length,
      offloaded: totals.offloaded + matches.filter((d) => offloadedObject(d.get('offloaded')) !== null).length,
      chunked: totals.chunked + matches.filter(hasChunks).length,
      keptForInstance: totals.keptForInstance + kept.length,
      kept: [...totals.kept, ...kept],
    };
    await options.onPage?.(page.docs, totals);
    if (!options.dryRun && deletable.length > 0) {
      // Objects first, as the payload sweep does: a failure here stops before their documents go, so nothing is orphaned.
      const objectsDeleted = await deleteObjects(offloaded, options.payloadStore);
      totals = { ...totals, objectsDeleted: totals.objectsDeleted + objectsDeleted };
      // Offloaded ones too: a requeue that crashed after offloading a dead letter's chunks left them.
      const withChunks = deletable.filter((d) => hasChunks(d) || offloadedObject(d.get('offloaded')) !== null);
      const outcomes = [
        await deleteWithTheirChunks(db, withChunks),
        await deleteUnchanged(
          db,
          deletable.filter((d) => !withChunks.includes(d)),
        ),
      ];
      for (const o of outcomes)
        totals = {
          ...totals,
          deleted: totals.deleted + o.deleted,
          changedSinceRead: totals.changedSinceRead + o.changed,
        };
    }
    if (page.size < pageSize) break;
    after = page.docs[page.docs.length - 1] ?? null;
  }
  return totals;
}

/** Deletes each of `docs` with its rawChunks (deleteWithChunks: one batch, on the update time it was read with), 8 at a time. */
async function deleteWithTheirChunks(
  db: Firestore,
  docs: readonly QueryDocumentSnapshot[],
): Promise<{ deleted: number; changed: number }> {
  let deleted = 0;
  let changed = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let doc = docs[next++]; doc !== undefined; doc = docs[next++]) {
      if ((await deleteWithChunks(db, doc)) === 'DELETED') deleted += 1;
      else changed += 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(OBJECT_DELETES_AT_ONCE, docs.length) }, worker));
  return { deleted, changed };
}

/** Objects deleted at once by purge. */
const OBJECT_DELETES_AT_ONCE = 8;

/** Deletes the offloaded payloads' objects of `docs` (ABSENT is fine); throws the first failure after the others are done. */
async function deleteObjects(
  docs: readonly QueryDocumentSnapshot[],
  store: (() => PayloadStore) | undefined,
): Promise<number> {
  if (docs.length === 0) return 0;
  if (store === undefined)
    throw new RefusedError(
      `${docs.length} DONE document(s) have an offloaded payload, and this purge has no payload store to delete their objects with`,
    );
  let deleted = 0;
  let next = 0;
  const failures: unknown[] = [];
  const worker = async (): Promise<void> => {
    for (let doc = docs[next++]; doc !== undefined; doc = docs[next++]) {
      const object = offloadedObject(doc.get('offloaded'));
      if (object === null) continue;
      try {
        if ((await store().delete(object)) === 'DELETED') deleted += 1;
      } catch (err) {
        failures.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OBJECT_DELETES_AT_ONCE, docs.length) }, worker));
  if (failures.length > 0) throw failures[0];
  return deleted;
}

/** Deletes through the SDK's BulkWriter (batched, throttled), each delete guarded by the update time it was read with. */
async function deleteUnchanged(
  db: Firestore,
  docs: readonly QueryDocumentSnapshot[],
): Promise<{ deleted: number; changed: number }> {
  if (docs.length === 0) return { deleted: 0, changed: 0 };
  const writer = db.bulkWriter();
  // A failed precondition is an answer, not a hiccup: no retry. Anything else: the writer's own retries.
  writer.onWriteError((err) => err.code !== FAILED_PRECONDITION && err.failedAttempts < 5);
  let deleted = 0;
  let changed = 0;
  const failures: BulkWriterError[] = [];
  const ops = docs.map((d) =>
    writer.delete(d.ref, { lastUpdateTime: d.updateTime }).then(
      () => {
        deleted += 1;
      },
      // The SDK rejects a write of the BulkWriter with a BulkWriterError.
      (err: BulkWriterError) => {
        if (err.code === FAILED_PRECONDITION) changed += 1;
        else failures.push(err);
      },
    ),
  );
  await writer.close();
  await Promise.all(ops);
  if (failures[0] !== undefined) throw failures[0];
  return { deleted, changed };
}

/**
 * The youngest bound purge accepts without --force: now minus the DONE
 * retention. A DONE document younger than that is the dedup record of a
 * message Pub/Sub may still redeliver (the subscription keeps messages for
 * the same 7 days); deleting it would let the redelivery in as a new message.
 */
export function checkBound(before: Date, now: Date, retentionMs: number, force: boolean, text: string): void {
  if (force || before.getTime() <= now.getTime() - retentionMs) return;
  const days = Math.round(retentionMs / 86_400_000);
  throw new UsageError(
    `--done-before ${text} would delete DONE documents processed within the last ${days} d (INBOX_DONE_RETENTION_DAYS): they are the dedup records of messages Pub/Sub may still redeliver; use --done-before ${days}d or earlier, or add --force if you mean it`,
  );
}

/** `inbox purge`: for the emulator, where TTL deletion does not run, and for a manual clean-up. */
export async function purgeCommand(
  ctx: CliContext,
  options: BulkOptions & { doneBefore?: string; force?: boolean },
): Promise<void> {
  if (options.doneBefore === undefined) throw new UsageError('purge needs --done-before TIME');
  const now = ctx.now();
  const before = parseTime('--done-before', options.doneBefore, now);
  checkBound(before, now, ctx.config.relay.retentionMs, options.force === true, options.doneBefore);
  const db = ctx.db();
  const dryRun = options.dryRun === true;
  const total = (await QUERIES.byStatus.build(db, 'DONE').count().get()).data().count;
  // Asked once, up front, with what is known then: how many DONE documents will be looked at.
  if (
    !dryRun &&
    !(await confirmBulk(
      ctx,
      `Delete the DONE documents processed before ${before.toISOString()}, out of`,
      total,
      options,
    ))
  )
    throw new RefusedError('not confirmed');
  const bar = pageProgress(ctx, total, '{bar} {value}/{total} DONE documents read, {deleted} deleted', { deleted: 0 });
  let result: PurgeResult;
  try {
    result = await purgeDone(db, before, {
      dryRun,
      payloadStore: ctx.runtime.payloadStore,
      onPage: (page, totals) => bar.advance(page.length, { deleted: totals.deleted }),
    });
  } finally {
    bar.stop();
  }
  if (dryRun) {
    const would = {
      wouldDelete: result.matched - result.keptForInstance,
      offloaded: result.offloaded,
      chunked: result.chunked,
      keptForInstance: result.keptForInstance,
      kept: result.kept,
      scanned: result.scanned,
    };
    print(
      ctx,
      would,
      [
        'would delete',
        'of them with an offloaded payload',
        'with rawChunks',
        'kept for their instance',
        'DONE documents read',
      ],
      [[would.wouldDelete, result.offloaded, result.chunked, result.keptForInstance, result.scanned]],
    );
    printKept(ctx, result.kept);
    return;
  }
  print(
    ctx,
    result,
    [
      'deleted',
      'payload objects deleted',
      'kept (changed since read)',
      'kept for their instance',
      'DONE documents read',
    ],
    [[result.deleted, result.objectsDeleted, result.changedSinceRead, result.keptForInstance, result.scanned]],
  );
  printKept(ctx, result.kept);
  if (!ctx.json)
    ctx.io.out(
      `deleted ${result.deleted} of ${result.matched} DONE documents processed before ${before.toISOString()}`,
    );
}

/** For people: each document kept for its instance, and why (the JSON has them as `kept`). */
function printKept(ctx: CliContext, kept: PurgeResult['kept']): void {
  if (ctx.json) return;
  for (const k of kept) {
    ctx.io.out(
      `kept ${k.inboxId} and its payload object: instance ${k.processInstanceId} is ${k.instanceStatus} and may still read it (a purge after it completes deletes them)`,
    );
  }
}
