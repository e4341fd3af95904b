import { type DocumentReference, FieldValue, type Firestore, type QuerySnapshot } from '@google-cloud/firestore';
import { keyIndexFields, STATE_SHARDS } from '../engine/store/collections';
import type { WaitingPoint } from '../engine/state';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { print } from './output';

/** Key documents read per page. */
export const SHARD_PAGE = 500;
/** Transactions at a time: enough to be quick, few enough not to crowd a busy database. */
const PARALLEL = 20;

/** What one run did. */
export interface ShardedSubscriptions {
  /** Key documents read (every one, once). */
  readonly scanned: number;
  /** Given `shard`, `waitingFor` and `waitingSince` now (with --dry-run: would be). */
  readonly sharded: number;
  /** Gone between the read and the update (both lists emptied): nothing left to give. */
  readonly gone: number;
}

const hasShard = (value: unknown): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < STATE_SHARDS;
/** Written by saveCorrelationKey since 0.6.0 (or by this command): the waiting queries see the document. */
const hasIndexFields = (data: Record<string, unknown>): boolean =>
  hasShard(data.shard) && Array.isArray(data.waitingFor);

type Outcome = 'sharded' | 'done' | 'gone';

/** One key document's fields from its `waiting` as it stands in the transaction. */
async function giveFields(db: Firestore, ref: DocumentReference): Promise<Outcome> {
  return db.runTransaction(async (tx) => {
    const data = (await tx.get(ref)).data();
    if (data === undefined) return 'gone';
    if (hasIndexFields(data)) return 'done';
    const { shard, waitingFor, waitingSince } = keyIndexFields(
      ref.id,
      (Array.isArray(data.waiting) ? data.waiting : []) as WaitingPoint[],
    );
    tx.update(ref, { shard, waitingFor, waitingSince: waitingSince ?? FieldValue.delete() });
    return 'sharded';
  });
}

/**
 * Gives every correlation key document written before 0.6.0 (before
 * waiting points lived in the key document alone) the fields the waiting
 * gauges and `inbox waiting` query: `shard`, `waitingFor`, `waitingSince`,
 * derived from its `waiting` as the engine derives them now. Without them a
 * token that waited before the upgrade to 0.6.0 is in no gauge and on no page until
 * its key is next written (a message for it arrives). A one-off after the
 * deploy has finished (older instances still write documents without the
 * fields during a rolling deploy), run by the operator: Firestore indexes
 * only documents that have a field, so no query finds the ones without it,
 * and the only way is to read the whole collection once. Idempotent: a
 * second run finds nothing to do. Each update is its own transaction that
 * reads the document again, so a waiting point added or removed meanwhile
 * is what the fields describe. Old eventSubscriptions documents are not
 * read nor touched: nothing reads them any more.
 */
export async function shardSubscriptions(
  db: Firestore,
  dryRun: boolean,
  pageSize = SHARD_PAGE,
): Promise<ShardedSubscriptions> {
  let scanned = 0;
  let sharded = 0;
  let gone = 0;
  let after: string | null = null;
  for (;;) {
    const page: QuerySnapshot = await QUERIES.allCorrelationKeys.build(db, after, pageSize).get();
    scanned += page.size;
    const missing = page.docs.filter((d) => !hasIndexFields(d.data()));
    if (dryRun) sharded += missing.length;
    else {
      const outcomes: Outcome[] = [];
      for (let i = 0; i < missing.length; i += PARALLEL)
        outcomes.push(...(await Promise.all(missing.slice(i, i + PARALLEL).map(async (d) => giveFields(db, d.ref)))));
      sharded += outcomes.filter((o) => o === 'sharded').length;
      gone += outcomes.filter((o) => o === 'gone').length;
    }
    if (page.size < pageSize) break;
    after = page.docs[page.docs.length - 1]?.id ?? null;
  }
  return { scanned, sharded, gone };
}

/** `inbox repair shard-subscriptions [--dry-run]`. */
export async function shardSubscriptionsCommand(ctx: CliContext, options: { dryRun?: boolean }): Promise<void> {
  const dryRun = options.dryRun === true;
  const done = await shardSubscriptions(ctx.db(), dryRun);
  print(
    ctx,
    { ...done, dryRun },
    ['key documents read', dryRun ? 'would get the waiting fields' : 'given the waiting fields', 'gone meanwhile'],
    [[done.scanned, done.sharded, done.gone]],
  );
}
