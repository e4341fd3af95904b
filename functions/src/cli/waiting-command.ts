import { type Firestore, type QueryDocumentSnapshot, Timestamp } from '@google-cloud/firestore';
import { refs } from '../engine/store/collections';
import { QUERIES } from '../queries';
import { waitedMessageNames } from '../relay/gauges';
import type { CliContext } from './context';
import { print } from './output';
import { formatAge, parseDuration, parseKnownName, parsePageSize } from './parse';
import { WAITING_ORDER } from './shard-page';
import { cursorOf, pageAcrossShards, positionOf } from './shard-page-query';

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
  /** The eventSubscriptions document. */
  readonly subscriptionId: string;
}

const DEFAULT_PAGE_SIZE = '50';

/**
 * `inbox waiting`: the tokens waiting for a message, oldest first across
 * the shards, a page at a time. Each page is one query per shard (16), each
 * for at most a page, merged here; then one read per instance on the page
 * for its business key. So a page of N costs at most 16 × N + N reads
 * (usually far less: shards hold few old points).
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
  const [page, unsharded] = await Promise.all([
    pageAcrossShards(WAITING_ORDER, pageSize, (shard) => QUERIES.waitingPage.build(db, shard, filters, cursor, pageSize)),
    // Asked on the first page only: the points such a count finds are on no page.
    cursor === null ? unshardedCount(db) : Promise.resolve(0),
  ]);
  const rows = await withBusinessKeys(db, page.items, now);
  const next = page.next;
  const result = { waitingPoints: rows, next, ...(unsharded > 0 ? { unshardedWaitingPoints: unsharded } : {}) };
  print(ctx, result, ['instance', 'business key', 'activity', 'message', 'correlation key', 'waiting since', 'waited'], rows.map((r) => [r.instanceId, r.businessKey ?? '(no instance)', r.activityId, r.messageName, r.correlationKey, r.createdAt, formatAge(r.waitingSeconds * 1000)]));
  if (ctx.json) return;
  if (next !== null) ctx.io.out(`more: add --after ${next}`);
  if (unsharded > 0) ctx.io.out(unshardedNote(unsharded));
}

/** Said while waiting points stored before `shard` existed are left: they are on no page and in no gauge. */
export const unshardedNote = (n: number): string =>
  `${n} waiting point(s) carry no shard (stored before this version): they are missing from this list and from the waiting gauge; \`inbox repair shard-subscriptions\` gives them one (once, after the deploy)`;

/** Waiting points without a shard: all of them minus those with one (two count() aggregations, one read per 1,000 points each). */
async function unshardedCount(db: Firestore): Promise<number> {
  const [all, sharded] = await Promise.all([QUERIES.subscriptionCount.build(db).count().get(), QUERIES.shardedSubscriptions.build(db).count().get()]);
  return Math.max(0, all.data().count - sharded.data().count);
}

async function withBusinessKeys(db: Firestore, points: readonly QueryDocumentSnapshot[], now: Date): Promise<WaitingRow[]> {
  const instanceIds = [...new Set(points.map((p) => String(p.get('processInstanceId'))))];
  const instances = instanceIds.length === 0 ? [] : await db.getAll(...instanceIds.map((id) => refs.instance(db, id)));
  const keys = new Map(instances.map((s) => [s.id, s.exists ? String(s.get('businessKey')) : null]));
  return points.map((p): WaitingRow => {
    const position = positionOf(WAITING_ORDER, p);
    const createdAt = new Timestamp(position.seconds, position.nanoseconds).toDate();
    const instanceId = String(p.get('processInstanceId'));
    const gatewayId: unknown = p.get('gatewayId');
    return {
      instanceId,
      businessKey: keys.get(instanceId) ?? null,
      executionId: String(p.get('executionId')),
      activityId: String(p.get('activityId')),
      gatewayId: typeof gatewayId === 'string' ? gatewayId : null,
      messageName: String(p.get('messageName')),
      correlationKey: String(p.get('correlationKey')),
      createdAt,
      waitingSeconds: Math.max(0, Math.round((now.getTime() - createdAt.getTime()) / 1000)),
      subscriptionId: p.id,
    };
  });
}
