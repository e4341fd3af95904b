import type { Firestore } from '@google-cloud/firestore';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';

/**
 * The waiting points of one instance as stored: in the correlation key
 * documents' `waiting`, the only place since eventSubscriptions is no longer
 * written. With the correlation key, one read by id; without it, a scan of
 * the (small, per-test) collection.
 */
export async function waitingPointsOf(
  db: Firestore,
  instanceId: string,
  correlationKey?: string,
): Promise<Array<Record<string, unknown>>> {
  const docs =
    correlationKey === undefined
      ? (await db.collection(COLLECTIONS.correlationKeys).get()).docs
      : [await refs.correlationKey(db, correlationKey).get()];
  return docs.flatMap((d) =>
    ((d.get('waiting') ?? []) as Array<Record<string, unknown>>).filter((w) => w.processInstanceId === instanceId),
  );
}

/** Documents in the collection an earlier version kept one per waiting point: this version writes none. */
export const eventSubscriptionCount = async (db: Firestore): Promise<number> =>
  (await db.collection('eventSubscriptions').count().get()).data().count;
