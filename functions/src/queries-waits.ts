import type { Query } from '@google-cloud/firestore';
import { documentId, type PageCursor, query, type QueryShape } from './queries-shape';

/** The shapes of `inbox waiting`'s page query on key documents: with or without a message name, with or without an age bound. */
const waitingPageShapes = [true, false].flatMap((byMessage) =>
  ['waitingSince', null].map((range): QueryShape => ({
    collection: 'correlationKeys',
    equality: ['shard'],
    ...(byMessage ? { arrayContains: 'waitingFor' } : {}),
    range,
    orderBy: [{ field: 'waitingSince', direction: 'asc' }],
  })),
);

/** Which user tasks a list shows: of one status, and of at most one assignee, candidate group or instance. */
export interface UserTaskFilter {
  readonly status: 'OPEN' | 'COMPLETED' | 'CANCELLED';
  readonly assignee?: string;
  readonly group?: string;
  readonly instance?: string;
}

/** The queries on what waits: correlation keys, timers, jobs and user tasks (part of the registry, queries.ts). */
export const WAIT_QUERIES = {
  /** sweepJobs: PENDING job documents of the layout before 0.6.0 (jobs/{id}), old enough that their task should have run. */
  stalePendingJobs: query(
    {
      collection: 'jobs',
      equality: ['status'],
      range: 'createdAt',
      orderBy: [{ field: 'createdAt', direction: 'asc' }],
    },
    (db, before: Date, limit: number) =>
      db
        .collection('jobs')
        .where('status', '==', 'PENDING')
        .where('createdAt', '<=', before)
        .orderBy('createdAt')
        .limit(limit),
  ),
  /**
   * sweepJobs: PENDING timers of one shard beyond Cloud Tasks' horizon when
   * they were set ('FAR', no task) that are now due within it: their task is
   * created, then they are 'NEAR' (jobs/sweep-timers.ts).
   */
  farTimersDue: query(
    {
      collection: 'timers',
      equality: ['shard', 'status', 'horizon'],
      range: 'dueAt',
      orderBy: [{ field: 'dueAt', direction: 'asc' }],
    },
    (db, shard: number, dueBefore: Date, limit: number) =>
      db
        .collection('timers')
        .where('shard', '==', shard)
        .where('status', '==', 'PENDING')
        .where('horizon', '==', 'FAR')
        .where('dueAt', '<=', dueBefore)
        .orderBy('dueAt')
        .limit(limit),
  ),
  /** sweepJobs: PENDING timers of one shard overdue by more than the grace (their task was lost, or never created): fired inline. */
  overdueTimers: query(
    {
      collection: 'timers',
      equality: ['shard', 'status'],
      range: 'dueAt',
      orderBy: [{ field: 'dueAt', direction: 'asc' }],
    },
    (db, shard: number, dueBefore: Date, limit: number) =>
      db
        .collection('timers')
        .where('shard', '==', shard)
        .where('status', '==', 'PENDING')
        .where('dueAt', '<=', dueBefore)
        .orderBy('dueAt')
        .limit(limit),
  ),
  /** CLI `incidents` and the relay's gauge of FAILED jobs (count()): job documents of the layout before 0.6.0, by status. */
  jobsByStatus: query({ collection: 'jobs', equality: ['status'], range: null, orderBy: [] }, (db, status: string) =>
    db.collection('jobs').where('status', '==', status),
  ),
  /**
   * Waiting gauge: the key documents of one shard that wait for a message,
   * oldest waiting point (of any message) first, after a cursor. A key
   * document carries `shard`, STATE_SHARDS of them, so the growing
   * waitingSince is spread over 16 index ranges; the document id breaks ties.
   */
  oldestWaiting: query(
    {
      collection: 'correlationKeys',
      equality: ['shard'],
      arrayContains: 'waitingFor',
      range: null,
      orderBy: [{ field: 'waitingSince', direction: 'asc' }],
    },
    (db, shard: number, messageName: string, after: PageCursor | null, limit: number) => {
      const q = db
        .collection('correlationKeys')
        .where('shard', '==', shard)
        .where('waitingFor', 'array-contains', messageName)
        .orderBy('waitingSince')
        .orderBy(documentId());
      return (after === null ? q : q.startAfter(after.at, after.id)).limit(limit);
    },
  ),
  /** Waiting gauge: key documents of one shard that wait for a message and hold a point created at or before a time (count() aggregation: it counts keys). */
  waitingSince: query(
    {
      collection: 'correlationKeys',
      equality: ['shard'],
      arrayContains: 'waitingFor',
      range: 'waitingSince',
      orderBy: [{ field: 'waitingSince', direction: 'asc' }],
    },
    (db, shard: number, messageName: string, before: Date) =>
      db
        .collection('correlationKeys')
        .where('shard', '==', shard)
        .where('waitingFor', 'array-contains', messageName)
        .where('waitingSince', '<=', before),
  ),
  /**
   * CLI `inbox waiting`: one shard's key documents with waiting points,
   * oldest point first, after a cursor. The document id breaks ties of
   * waitingSince; Firestore keeps every index in document-id order after its
   * last field, so the index (shard, waitingFor, waitingSince) or
   * (shard, waitingSince) serves it.
   */
  waitingPage: query(
    waitingPageShapes,
    (
      db,
      shard: number,
      filters: { readonly messageName: string | null; readonly createdBefore: Date | null },
      after: PageCursor | null,
      limit: number,
    ) => {
      let q: Query = db.collection('correlationKeys').where('shard', '==', shard);
      if (filters.messageName !== null) q = q.where('waitingFor', 'array-contains', filters.messageName);
      if (filters.createdBefore !== null) q = q.where('waitingSince', '<=', filters.createdBefore);
      q = q.orderBy('waitingSince').orderBy(documentId());
      return (after === null ? q : q.startAfter(after.at, after.id)).limit(limit);
    },
  ),
  /** `inbox repair shard-subscriptions`: every key document, a page at a time in document-id order (the default order: no index). */
  allCorrelationKeys: query(
    { collection: 'correlationKeys', equality: [], range: null, orderBy: [] },
    (db, afterId: string | null, limit: number) => {
      const q = db.collection('correlationKeys').orderBy(documentId());
      return (afterId === null ? q : q.startAfter(afterId)).limit(limit);
    },
  ),
  /**
   * CLI `inbox timers`: one shard's PENDING timers, soonest due first, after
   * a cursor. The document id breaks ties of dueAt, as in `waitingPage`: the
   * index (shard, status, dueAt) keeps document-id order after dueAt.
   */
  pendingTimers: query(
    {
      collection: 'timers',
      equality: ['shard', 'status'],
      range: null,
      orderBy: [{ field: 'dueAt', direction: 'asc' }],
    },
    (db, shard: number, after: PageCursor | null, limit: number) => {
      const q = db
        .collection('timers')
        .where('shard', '==', shard)
        .where('status', '==', 'PENDING')
        .orderBy('dueAt')
        .orderBy(documentId());
      return (after === null ? q : q.startAfter(after.at, after.id)).limit(limit);
    },
  ),
  /** CLI `inbox timers --instance`: the PENDING timers of one instance (equality only: single-field indexes, sorted by the CLI). */
  pendingTimersOfInstance: query(
    { collection: 'timers', equality: ['processInstanceId', 'status'], range: null, orderBy: [] },
    (db, processInstanceId: string) =>
      db.collection('timers').where('processInstanceId', '==', processInstanceId).where('status', '==', 'PENDING'),
  ),
  /**
   * `inbox tasks list` and the console's task list: user tasks of one
   * status, oldest first, after a cursor (createdAt, then the document id),
   * optionally of one assignee, one candidate group or one instance. Human
   * tasks are created far below the 500 writes/s a growing indexed field
   * allows, so the list needs no shard.
   */
  userTasks: query(
    [
      {
        collection: 'userTasks',
        equality: ['status'],
        range: null,
        orderBy: [{ field: 'createdAt', direction: 'asc' }],
      },
      {
        collection: 'userTasks',
        equality: ['status', 'assignee'],
        range: null,
        orderBy: [{ field: 'createdAt', direction: 'asc' }],
      },
      {
        collection: 'userTasks',
        equality: ['status'],
        arrayContains: 'candidateGroups',
        range: null,
        orderBy: [{ field: 'createdAt', direction: 'asc' }],
      },
      {
        collection: 'userTasks',
        equality: ['status', 'processInstanceId'],
        range: null,
        orderBy: [{ field: 'createdAt', direction: 'asc' }],
      },
    ],
    (db, filter: UserTaskFilter, after: PageCursor | null, limit: number) => {
      let q = db.collection('userTasks').where('status', '==', filter.status);
      if (filter.assignee !== undefined) q = q.where('assignee', '==', filter.assignee);
      else if (filter.group !== undefined) q = q.where('candidateGroups', 'array-contains', filter.group);
      else if (filter.instance !== undefined) q = q.where('processInstanceId', '==', filter.instance);
      q = q.orderBy('createdAt').orderBy(documentId());
      return (after === null ? q : q.startAfter(after.at, after.id)).limit(limit);
    },
  ),
  /** The user-task waiting gauge: how many OPEN user tasks were created at or before the threshold (a count()). */
  openUserTasksBefore: query(
    { collection: 'userTasks', equality: ['status'], range: 'createdAt', orderBy: [] },
    (db, cutoff: Date) => db.collection('userTasks').where('status', '==', 'OPEN').where('createdAt', '<=', cutoff),
  ),
} as const;
