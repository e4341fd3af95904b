/**
 * The tokens waiting for a message, a page at a time: `inbox waiting` and
 * the console's list of tokens waiting too long.
 */
import { type Firestore, type QueryDocumentSnapshot, Timestamp } from '@google-cloud/firestore';
import type { WaitingPoint } from '../engine/state';
import { refs } from '../engine/store/collections';
import { type PageCursor, QUERIES } from '../queries';
import { RefusedError } from './refused';
import { WAITING_ORDER } from './shard-page';
import { pageAcrossShards } from './shard-page-query';
import type { OperationsDeps, WaitingFilters, WaitingPage, WaitingRow } from './types';

/** Where a page starts and how many key documents it holds. */
export interface WaitingPageRequest {
  readonly size: number;
  /** The `next` of the previous page (pageCursorOf(WAITING_ORDER, text)), null for the first. */
  readonly after: PageCursor | null;
}

/**
 * One page of waiting points, read from the key documents (the only place a
 * waiting point is stored): the keys oldest point first across the shards,
 * each key's points that match the filters oldest first. The size counts
 * keys, so a key's points are never split over two pages; a key with several
 * (the branches of an event-based gateway) shows them all. Each page is one
 * query per shard (16), each for at most a page, merged; then one read per
 * instance on the page for its business key. So a page of N keys costs at
 * most 16 × N + N reads (usually far less: shards hold few old keys).
 */
export async function listWaiting(
  deps: OperationsDeps,
  filters: WaitingFilters,
  page: WaitingPageRequest,
): Promise<WaitingPage> {
  const db = deps.db();
  const now = deps.now();
  const bounds = {
    messageName: filters.messageName,
    createdBefore: filters.olderThanMs === null ? null : new Date(now.getTime() - filters.olderThanMs),
  };
  const keys = await pageAcrossShards(WAITING_ORDER, page.size, (shard) =>
    QUERIES.waitingPage.build(db, shard, bounds, page.after, page.size),
  );
  const points = keys.items.flatMap((key) => pointsOf(key, bounds));
  return { waitingPoints: await withBusinessKeys(db, points, now), next: keys.next };
}

/** A waiting point as read from its key document, with the document's id. */
interface StoredPoint {
  readonly keyDocumentId: string;
  readonly point: Partial<Record<keyof WaitingPoint, unknown>>;
  readonly createdAt: Date;
}

/**
 * The points of one key document that match the filters, oldest first. The
 * query matched the key by its oldest point; with a message name its point
 * for that name may be younger than the age bound, and then it is left out.
 * Refused, naming the document, for a point whose createdAt is no timestamp (edited by hand).
 */
function pointsOf(
  key: QueryDocumentSnapshot,
  filters: { readonly messageName: string | null; readonly createdBefore: Date | null },
): StoredPoint[] {
  const waitingValue: unknown = key.get('waiting');
  const stored = Array.isArray(waitingValue)
    ? (waitingValue as Array<Partial<Record<keyof WaitingPoint, unknown>>>)
    : [];
  return stored
    .map((point): StoredPoint => {
      if (!(point.createdAt instanceof Timestamp)) {
        throw new RefusedError(
          `correlationKeys/${key.id} holds a waiting point whose createdAt is not a timestamp (${JSON.stringify(point.createdAt)}): it was edited by hand; set it to a timestamp`,
        );
      }
      return { keyDocumentId: key.id, point, createdAt: point.createdAt.toDate() };
    })
    .filter(
      (p) =>
        // A standby point (a message boundary event, an event subprocess's start) waits beside a wait listed anyway.
        p.point.standby !== true &&
        (filters.messageName === null || p.point.messageName === filters.messageName) &&
        (filters.createdBefore === null || p.createdAt <= filters.createdBefore),
    )
    .sort(
      (a, b) =>
        a.createdAt.getTime() - b.createdAt.getTime() ||
        String(a.point.executionId).localeCompare(String(b.point.executionId)) ||
        String(a.point.messageName).localeCompare(String(b.point.messageName)),
    );
}

async function withBusinessKeys(db: Firestore, points: readonly StoredPoint[], now: Date): Promise<WaitingRow[]> {
  const instanceIds = [...new Set(points.map((p) => String(p.point.processInstanceId)))];
  const instances = instanceIds.length === 0 ? [] : await db.getAll(...instanceIds.map((id) => refs.instance(db, id)));
  const keys = new Map(instances.map((s) => [s.id, s.exists ? String(s.get('businessKey')) : null]));
  return points.map(({ point, createdAt, keyDocumentId }): WaitingRow => {
    const instanceId = String(point.processInstanceId);
    return {
      instanceId,
      businessKey: keys.get(instanceId) ?? null,
      executionId: String(point.executionId),
      activityId: String(point.activityId),
      gatewayId: typeof point.gatewayId === 'string' ? point.gatewayId : null,
      messageName: String(point.messageName),
      correlationKey: String(point.correlationKey),
      createdAt: createdAt.toISOString(),
      waitingSeconds: Math.max(0, Math.round((now.getTime() - createdAt.getTime()) / 1000)),
      keyDocumentId,
    };
  });
}
