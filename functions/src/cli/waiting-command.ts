import { type Firestore, type QueryDocumentSnapshot, Timestamp } from '@google-cloud/firestore';
import type { WaitingPoint } from '../engine/state';
import { refs } from '../engine/store/collections';
import { QUERIES } from '../queries';
import { waitedMessageNames } from '../relay/gauges';
import type { CliContext } from './context';
import { print } from './output';
import { formatAge, parseDuration, parseKnownName, parsePageSize } from './parse';
import { WAITING_ORDER } from './shard-page';
import { RefusedError } from './inbox-ops';
import { cursorOf, pageAcrossShards } from './shard-page-query';

export interface WaitingOptions {
  message?: string;
  olderThan?: string;
  pageSize?: string;
  after?: string;
}

/** One waiting point as `inbox waiting` shows it. */
export interface WaitingRow {
  readonly instanceId: string;
  /** Null when the instance document is gone (the point outlived it: repair by hand). */
  readonly businessKey: string | null;
  readonly executionId: string;
  readonly activityId: string;
  readonly gatewayId: string | null;
  readonly messageName: string;
  readonly correlationKey: string;
  readonly createdAt: Date;
  readonly waitingSeconds: number;
  /** The correlationKeys document that holds the point (the only place it is stored). */
  readonly keyDocumentId: string;
}

const DEFAULT_PAGE_SIZE = '50';

/**
 * `inbox waiting`: the tokens waiting for a message, a page at a time, from
 * the key documents (the only place a waiting point is stored): the keys
 * oldest point first across the shards, each key's points (those that match
 * the filters) oldest first. `--page-size` counts keys, so a key's points
 * are never split over two pages; a key with several (the branches of an
 * event-based gateway) shows them all. Each page is one query per shard
 * (16), each for at most a page, merged here; then one read per instance on
 * the page for its business key. So a page of N keys costs at most
 * 16 × N + N reads (usually far less: shards hold few old keys).
 */
export async function waiting(ctx: CliContext, options: WaitingOptions): Promise<void> {
  const pageSize = parsePageSize(options.pageSize ?? DEFAULT_PAGE_SIZE);
  const olderThanMs = options.olderThan === undefined ? null : parseDuration('--older-than', options.olderThan);
  const cursor = cursorOf(WAITING_ORDER, options.after);
  const engine = await ctx.runtime.engine();
  const messageName = options.message === undefined ? null : parseKnownName('--message', options.message, waitedMessageNames(engine), 'the message names the deployed models wait for');
  const db = ctx.db();
  const now = ctx.now();
  const filters = { messageName, createdBefore: olderThanMs === null ? null : new Date(now.getTime() - olderThanMs) };
  const page = await pageAcrossShards(WAITING_ORDER, pageSize, (shard) => QUERIES.waitingPage.build(db, shard, filters, cursor, pageSize));
  const points = page.items.flatMap((key) => pointsOf(key, filters));
  const rows = await withBusinessKeys(db, points, now);
  const next = page.next;
  print(ctx, { waitingPoints: rows, next }, ['instance', 'business key', 'activity', 'message', 'correlation key', 'waiting since', 'waited'], rows.map((r) => [r.instanceId, r.businessKey ?? '(no instance)', r.activityId, r.messageName, r.correlationKey, r.createdAt, formatAge(r.waitingSeconds * 1000)]));
  if (ctx.json) return;
  if (next !== null) ctx.io.out(`more: add --after ${next}`);
}

/** A waiting point as read from its key document, with the document's id. */
interface StoredPoint {
  readonly keyDocumentId: string;
  readonly point: Record<string, unknown>;
  readonly createdAt: Date;
}

/**
 * The points of one key document that match the filters, oldest first. The
 * query matched the key by its oldest point; with --message its point for
 * that name may be younger than --older-than, and then it is left out.
 * Refused, naming the document, for a point whose createdAt is no timestamp (edited by hand).
 */
function pointsOf(key: QueryDocumentSnapshot, filters: { readonly messageName: string | null; readonly createdBefore: Date | null }): StoredPoint[] {
  const waitingValue: unknown = key.get('waiting');
  const stored = Array.isArray(waitingValue) ? (waitingValue as Array<Partial<Record<keyof WaitingPoint, unknown>>>) : [];
  return stored
    .map((point): StoredPoint => {
      if (!(point.createdAt instanceof Timestamp)) {
        throw new RefusedError(`correlationKeys/${key.id} holds a waiting point whose createdAt is not a timestamp (${JSON.stringify(point.createdAt)}): it was edited by hand; set it to a timestamp`);
      }
      return { keyDocumentId: key.id, point, createdAt: point.createdAt.toDate() };
    })
    .filter((p) => (filters.messageName === null || p.point.messageName === filters.messageName) && (filters.createdBefore === null || p.createdAt <= filters.createdBefore))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || String(a.point.executionId).localeCompare(String(b.point.executionId)) || String(a.point.messageName).localeCompare(String(b.point.messageName)));
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
      createdAt,
      waitingSeconds: Math.max(0, Math.round((now.getTime() - createdAt.getTime()) / 1000)),
      keyDocumentId,
    };
  });
}
