import type { QueryDocumentSnapshot } from '@google-cloud/firestore';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { type Doc, view } from '../operations/documents';
import { print } from './output';
import { formatAge, parsePageSize, UsageError } from './parse';
import { comparePositions, TIMERS_ORDER } from '../operations/shard-page';
import { pageAcrossShards, positionOf } from '../operations/shard-page-query';
import { cursorOf } from './shard-page-query';

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

/** The flags of `inbox timers`. */
export interface TimersOptions {
  instance?: string;
  pageSize?: string;
  /** The older name of --page-size (before timers were paged), still accepted for scripts that pass it. */
  limit?: string;
  after?: string;
}

const DEFAULT_PAGE_SIZE = '50';

/**
 * `inbox timers [--instance ID] [--page-size N] [--after CURSOR]`: PENDING
 * timers, soonest due first across the shards (overdue ones on top: a task
 * that was lost), a page at a time: one query per shard (16), each for at
 * most a page after the cursor, merged. With --instance one query for that
 * instance's timers (a handful: one per timer its tokens wait with), all on
 * one page, so no paging flag goes with it.
 */
export async function timersCommand(ctx: CliContext, options: TimersOptions): Promise<void> {
  if (options.pageSize !== undefined && options.limit !== undefined)
    throw new UsageError('--limit is the older name of --page-size: give one of them');
  const sizeFlag = options.limit === undefined ? '--page-size' : '--limit';
  const sizeText = options.pageSize ?? options.limit;
  if (options.instance !== undefined && (sizeText !== undefined || options.after !== undefined)) {
    throw new UsageError(
      `--instance lists all of one instance's PENDING timers on one page: leave out ${options.after === undefined ? sizeFlag : '--after'}`,
    );
  }
  const pageSize = parsePageSize(sizeText ?? DEFAULT_PAGE_SIZE, 1_000, sizeFlag);
  const cursor = cursorOf(TIMERS_ORDER, options.after);
  const db = ctx.db();
  const now = ctx.now();
  const page =
    options.instance === undefined
      ? await pageAcrossShards(TIMERS_ORDER, pageSize, (shard) =>
          QUERIES.pendingTimers.build(db, shard, cursor, pageSize),
        )
      : {
          items: sortedByDue((await QUERIES.pendingTimersOfInstance.build(db, options.instance).get()).docs),
          next: null,
        };
  const rows = page.items.map((snap) => row(view(snap), now));
  const dueIn = (s: number | null): string =>
    s === null ? '' : s < 0 ? `overdue ${formatAge(-s * 1000)}` : `in ${formatAge(s * 1000)}`;
  print(
    ctx,
    { timers: rows, next: page.next },
    ['timer', 'due at', 'due', 'activity', 'waiting at', 'instance', 'horizon'],
    rows.map((r) => [r.id, r.dueAt, dueIn(r.dueInSeconds), r.activityId, r.waitingAt, r.processInstanceId, r.horizon]),
  );
  if (!ctx.json && page.next !== null) ctx.io.out(`more: add --after ${page.next}`);
}

/** One instance's timers in the order of the paged list. */
const sortedByDue = (docs: readonly QueryDocumentSnapshot[]): QueryDocumentSnapshot[] =>
  docs
    .map((snap) => ({ snap, at: positionOf(TIMERS_ORDER, snap) }))
    .sort((a, b) => comparePositions(a.at, b.at))
    .map(({ snap }) => snap);
