import type { QueryDocumentSnapshot } from '@google-cloud/firestore';
import { STATE_SHARDS } from '../engine/store/collections';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { type Doc, view } from './documents';
import { print } from './output';
import { formatAge, parseLimit } from './parse';

/** A PENDING timer as `inbox timers` shows it. */
export interface TimerRow {
  readonly id: string;
  readonly dueAt: Date | null;
  /** dueAt - now in seconds: negative when overdue. */
  readonly dueInSeconds: number | null;
  readonly activityId: string;
  readonly waitingAt: string;
  readonly processInstanceId: string;
  readonly executionId: string;
  /** NEAR: its Cloud Task exists (or is being created); FAR: beyond the Cloud Tasks horizon, the sweep creates it later. */
  readonly horizon: string | null;
  readonly occurrence: number | null;
}

const dueMs = (d: Doc): number => (d.dueAt instanceof Date ? d.dueAt.getTime() : Number.POSITIVE_INFINITY);

function row(d: Doc, now: Date): TimerRow {
  const dueAt = d.dueAt instanceof Date ? d.dueAt : null;
  return {
    id: d.id,
    dueAt,
    dueInSeconds: dueAt === null ? null : Math.round((dueAt.getTime() - now.getTime()) / 1000),
    activityId: String(d.activityId),
    waitingAt: String(d.waitingAt),
    processInstanceId: String(d.processInstanceId),
    executionId: String(d.executionId),
    horizon: typeof d.horizon === 'string' ? d.horizon : null,
    occurrence: typeof d.occurrence === 'number' ? d.occurrence : null,
  };
}

/**
 * `inbox timers [--instance ID] [--limit N]`: PENDING timers, soonest due
 * first (overdue ones on top: a task that was lost). Without --instance one
 * query per shard (16), each for at most `limit`, merged; with it, one
 * query for that instance's timers (a handful).
 */
export async function timers(ctx: CliContext, options: { instance?: string; limit?: string }): Promise<void> {
  const limit = parseLimit(options.limit ?? '100');
  const db = ctx.db();
  const now = ctx.now();
  const lists: QueryDocumentSnapshot[][] =
    options.instance === undefined
      ? await Promise.all(Array.from({ length: STATE_SHARDS }, async (_, shard) => (await QUERIES.pendingTimers.build(db, shard, limit).get()).docs))
      : [(await QUERIES.pendingTimersOfInstance.build(db, options.instance).get()).docs];
  const found = lists.flat().map(view).sort((a, b) => dueMs(a) - dueMs(b) || (a.id < b.id ? -1 : 1));
  const rows = found.slice(0, limit).map((d) => row(d, now));
  // A shard that returned `limit` timers may hold more behind them.
  const more = found.length > limit || (options.instance === undefined && lists.some((l) => l.length >= limit));
  const dueIn = (s: number | null): string => (s === null ? '' : s < 0 ? `overdue ${formatAge(-s * 1000)}` : `in ${formatAge(s * 1000)}`);
  print(ctx, { timers: rows, more }, ['timer', 'due at', 'due', 'activity', 'waiting at', 'instance', 'horizon'], rows.map((r) => [r.id, r.dueAt, dueIn(r.dueInSeconds), r.activityId, r.waitingAt, r.processInstanceId, r.horizon]));
  if (!ctx.json && more) ctx.io.out(`more than ${limit} may be PENDING: narrow with --instance, or raise --limit`);
}
