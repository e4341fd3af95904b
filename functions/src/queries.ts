import type * as FirestoreModule from '@google-cloud/firestore';
import type { DocumentSnapshot, Firestore, Query, Timestamp } from '@google-cloud/firestore';

/**
 * The document id as a field to order by. Required when a query runs, not
 * when this module loads: the functions import the registry at start-up and
 * load the Firestore client with their first request (test/e2e/lazy-start.test.ts).
 */
const documentId = (): FirestoreModule.FieldPath =>
  (require('@google-cloud/firestore') as typeof FirestoreModule).FieldPath.documentId();

/**
 * Every Firestore query the project issues, in one registry, each with the
 * shape the index check reads (test/indexes): the emulator runs any query
 * without an index, production refuses one that no index serves.
 * Transactions never query (they read by id); these run outside them.
 */
export interface QueryShape {
  readonly collection: string;
  /**
   * COLLECTION_GROUP for a query over every collection of that name
   * (`collectionGroup()`): it is served only by indexes of that scope, which
   * Firestore does not keep for single fields by default. Absent: COLLECTION.
   */
  readonly scope?: 'COLLECTION_GROUP';
  /** Fields compared with ==, in any order. */
  readonly equality: readonly string[];
  /** The array field compared with array-contains (at most one per query), if any: a composite index lists it with `arrayConfig: CONTAINS`. */
  readonly arrayContains?: string;
  /** The field compared with <, <=, >, >= (at most one), if any. */
  readonly range: string | null;
  /** orderBy fields with direction. */
  readonly orderBy: ReadonlyArray<{ readonly field: string; readonly direction: 'asc' | 'desc' }>;
}

interface Registered<Args extends unknown[]> {
  /** Every shape the builder can produce (one per filter combination when filters are optional). */
  readonly shapes: readonly QueryShape[];
  readonly build: (db: Firestore, ...args: Args) => Query;
}

function query<Args extends unknown[]>(
  shapes: QueryShape | readonly QueryShape[],
  build: (db: Firestore, ...args: Args) => Query,
): Registered<Args> {
  return { shapes: 'collection' in shapes ? [shapes] : shapes, build };
}

/** The optional equality filters of `inbox list`, by field. */
export const LIST_FILTER_FIELDS = ['status', 'reason', 'messageName', 'correlationKey'] as const;
export type ListFilters = Partial<Record<(typeof LIST_FILTER_FIELDS)[number], string>>;

/** Where a page of a list ordered by a timestamp and the document id starts (`inbox waiting`, `inbox timers`): after this timestamp, then this id. */
export interface PageCursor {
  readonly at: Timestamp;
  readonly id: string;
}

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

/** All subsets of the fields, so the registry holds the shape of every filter combination the CLI can send. */
const subsets = <T>(items: readonly T[]): T[][] =>
  items.reduce<T[][]>((all, item) => [...all, ...all.map((s) => [...s, item])], [[]]);

export const QUERIES = {
  /** The relay's candidates of one shard: OPEN and due, oldest due first. */
  relayCandidates: query(
    {
      collection: 'inbox',
      equality: ['shard', 'status'],
      range: 'nextAttemptAt',
      orderBy: [{ field: 'nextAttemptAt', direction: 'asc' }],
    },
    (db, shard: number, now: Date, limit: number) =>
      db
        .collection('inbox')
        .where('shard', '==', shard)
        .where('status', '==', 'OPEN')
        .where('nextAttemptAt', '<=', now)
        .orderBy('nextAttemptAt')
        .limit(limit),
  ),
  /**
   * The relay's stray documents: OPEN with a shard outside `0..shards-1`
   * (stored under another INBOX_SHARDS), to be moved into range (relay/reshard.ts).
   */
  strayShards: query(
    { collection: 'inbox', equality: ['status'], range: 'shard', orderBy: [{ field: 'shard', direction: 'asc' }] },
    (db, shards: number, limit: number) =>
      db.collection('inbox').where('status', '==', 'OPEN').where('shard', '>=', shards).orderBy('shard').limit(limit),
  ),
  /** Gauge: the oldest OPEN document of one shard. */
  oldestOpen: query(
    {
      collection: 'inbox',
      equality: ['shard', 'status'],
      range: null,
      orderBy: [{ field: 'receivedAt', direction: 'asc' }],
    },
    (db, shard: number) =>
      db.collection('inbox').where('shard', '==', shard).where('status', '==', 'OPEN').orderBy('receivedAt').limit(1),
  ),
  /** Gauges and stats: documents of a status (count() aggregation). */
  byStatus: query({ collection: 'inbox', equality: ['status'], range: null, orderBy: [] }, (db, status: string) =>
    db.collection('inbox').where('status', '==', status),
  ),
  /** Stats and bulk requeue: PARKED documents of a reason. */
  byStatusAndReason: query(
    { collection: 'inbox', equality: ['status', 'reason'], range: null, orderBy: [] },
    (db, status: string, reason: string) =>
      db.collection('inbox').where('status', '==', status).where('reason', '==', reason),
  ),
  /**
   * sweepJobs: the instances of one shard with a PENDING job created at or
   * before a time (`jobsPendingSince`, the oldest PENDING job's createdAt;
   * null when none, which a range filter never matches). Per shard, so the
   * growing timestamp is only indexed behind the shard, never alone.
   */
  instancesWithPendingJobs: query(
    {
      collection: 'processInstances',
      equality: ['shard'],
      range: 'jobsPendingSince',
      orderBy: [{ field: 'jobsPendingSince', direction: 'asc' }],
    },
    (db, shard: number, before: Date, limit: number) =>
      db
        .collection('processInstances')
        .where('shard', '==', shard)
        .where('jobsPendingSince', '<=', before)
        .orderBy('jobsPendingSince')
        .limit(limit),
  ),
  /** `inbox incidents` and the FAILED-jobs gauge: instances whose document holds a FAILED job (`failedJobs`, their number). */
  instancesWithFailedJobs: query(
    { collection: 'processInstances', equality: [], range: 'failedJobs', orderBy: [] },
    (db) => db.collection('processInstances').where('failedJobs', '>', 0),
  ),
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
  /**
   * sweepJobs' payload sweep: DONE documents of offloaded payloads past
   * their payloadExpireAt, oldest first (jobs/sweep-payloads.ts). Only those
   * documents carry the field, so its single-field index holds offloaded
   * DONE documents alone: far below the write rate at which an index on a
   * growing time field gets a hot end (the other inbox times have theirs
   * switched off in firestore.indexes.json).
   */
  expiredPayloads: query(
    {
      collection: 'inbox',
      equality: [],
      range: 'payloadExpireAt',
      orderBy: [{ field: 'payloadExpireAt', direction: 'asc' }],
    },
    (db, now: Date, limit: number) =>
      db.collection('inbox').where('payloadExpireAt', '<=', now).orderBy('payloadExpireAt').limit(limit),
  ),
  /**
   * `inbox repair orphan-payloads`: the inbox documents whose offloaded
   * payload is a given object (equality on a map field: its automatic
   * single-field index). Usually the one whose id the object's name holds;
   * a KEY_COLLISION's second payload lives in an object named after the
   * first id, so the name alone does not say.
   */
  inboxByOffloadedObject: query(
    { collection: 'inbox', equality: ['offloaded.object'], range: null, orderBy: [] },
    (db, object: string, limit: number) => db.collection('inbox').where('offloaded.object', '==', object).limit(limit),
  ),
  /** CLI `instances`: the instances of a business key. */
  instancesByBusinessKey: query(
    { collection: 'processInstances', equality: ['businessKey'], range: null, orderBy: [] },
    (db, businessKey: string) => db.collection('processInstances').where('businessKey', '==', businessKey),
  ),
  /**
   * The console's instances of one process version (`processVersion`, the
   * model's content hash), optionally of one status, a page at a time in
   * document-id order after an id. Equality filters only: they merge the
   * single-field indexes, and their results come in id order, which the
   * cursor states (orderBy the document id, the implicit order: no other
   * index; createdAt's index is switched off, so it cannot order them).
   */
  instancesOfVersion: query(
    [
      { collection: 'processInstances', equality: ['processKey', 'processVersion'], range: null, orderBy: [] },
      {
        collection: 'processInstances',
        equality: ['processKey', 'processVersion', 'status'],
        range: null,
        orderBy: [],
      },
    ],
    (
      db,
      filter: { readonly processKey: string; readonly version: string; readonly status?: string },
      after: string | null,
      limit: number,
    ) => {
      let q = db
        .collection('processInstances')
        .where('processKey', '==', filter.processKey)
        .where('processVersion', '==', filter.version);
      if (filter.status !== undefined) q = q.where('status', '==', filter.status);
      q = q.orderBy(documentId());
      return (after === null ? q : q.startAfter(after)).limit(limit);
    },
  ),
  /** CLI `incidents` and the relay's gauge of open incidents (count() of INCIDENT): instances that need a human. */
  instancesByStatus: query(
    { collection: 'processInstances', equality: ['status'], range: null, orderBy: [] },
    (db, status: string) => db.collection('processInstances').where('status', '==', status),
  ),
  /** CLI `incidents --all`: instances with resolved incidents (those with open ones are INCIDENT). */
  instancesWithResolvedIncidents: query(
    { collection: 'processInstances', equality: [], range: 'resolvedIncidents', orderBy: [] },
    (db) => db.collection('processInstances').where('resolvedIncidents', '>', 0),
  ),
  /** CLI `incidents` and the relay's gauge of FAILED jobs (count()): job documents of the layout before 0.6.0, by status. */
  jobsByStatus: query({ collection: 'jobs', equality: ['status'], range: null, orderBy: [] }, (db, status: string) =>
    db.collection('jobs').where('status', '==', status),
  ),
  /**
   * CLI `list` and the console's document list: inbox documents by any
   * combination of equality filters, one page after a cursor (a snapshot, or
   * the id of the last document of the page before). Equality filters merge
   * the single-field indexes, and their results come in document-id order,
   * which is what startAfter pages on; an id cursor states that order
   * (orderBy the document id, the implicit order: no other index).
   */
  inboxList: query(
    subsets(LIST_FILTER_FIELDS).map((equality): QueryShape => ({
      collection: 'inbox',
      equality,
      range: null,
      orderBy: [],
    })),
    (db, filters: ListFilters, after: DocumentSnapshot | string | null, pageSize: number) => {
      let q: Query = db.collection('inbox');
      for (const field of LIST_FILTER_FIELDS) {
        const value = filters[field];
        if (value !== undefined) q = q.where(field, '==', value);
      }
      if (typeof after === 'string') return q.orderBy(documentId()).startAfter(after).limit(pageSize);
      return (after === null ? q : q.startAfter(after)).limit(pageSize);
    },
  ),
  /** CLI `show`: the raw chunks of one inbox document (a count() of its subcollection). */
  rawChunksOf: query({ collection: 'rawChunks', equality: [], range: null, orderBy: [] }, (db, inboxId: string) =>
    db.collection('inbox').doc(inboxId).collection('rawChunks'),
  ),
  /**
   * `inbox repair orphan-chunks`: every `rawChunks` document under any inbox
   * document, a page at a time in document-path order (which keeps each
   * document's chunks together), without their bytes (no fields: the
   * snapshot's update time is what the repair reads). No field is filtered
   * or ordered on: the document-name order needs no collection-group index.
   */
  allRawChunks: query(
    { collection: 'rawChunks', scope: 'COLLECTION_GROUP', equality: [], range: null, orderBy: [] },
    (db, after: DocumentSnapshot | null, limit: number) => {
      const q = db.collectionGroup('rawChunks').select().orderBy(documentId());
      return (after === null ? q : q.startAfter(after)).limit(limit);
    },
  ),
  /** CLI `instances`: the token documents of an instance stored before 0.6.0 (newer ones hold their tokens). */
  executionsOfInstance: query(
    { collection: 'executions', equality: ['processInstanceId'], range: null, orderBy: [] },
    (db, processInstanceId: string) => db.collection('executions').where('processInstanceId', '==', processInstanceId),
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
  /**
   * `inbox versions`: the stored versions (of one process, or all), without
   * their XML. One document per version ever deployed: a small collection.
   */
  storedVersionsOf: query(
    [
      { collection: 'processVersions', equality: [], range: null, orderBy: [] },
      { collection: 'processVersions', equality: ['processKey'], range: null, orderBy: [] },
    ],
    (db, processKey: string | null) => {
      const q = db.collection('processVersions');
      return (processKey === null ? q : q.where('processKey', '==', processKey)).select(
        'processKey',
        'version',
        'name',
        'firstDeployedAt',
      );
    },
  ),
  /**
   * `inbox versions`: the instances of a process (not its items) in one
   * status, a page at a time in document-id order (equality only: merged
   * single-field indexes; the id order is the implicit one). `inbox model
   * diff --live` and `inbox model impact` read it for a process and for each
   * of its items' keys (`PROCESS#ACTIVITY`), with a projection.
   */
  instancesOfProcess: query(
    { collection: 'processInstances', equality: ['processKey', 'status'], range: null, orderBy: [] },
    (db, processKey: string, status: string, afterId: string | null, limit: number) => {
      const q = db
        .collection('processInstances')
        .where('processKey', '==', processKey)
        .where('status', '==', status)
        .orderBy(documentId());
      return (afterId === null ? q : q.startAfter(afterId)).limit(limit);
    },
  ),
  /**
   * `inbox versions` and its `--retire`: the instances of one version of a
   * process in one status (count() with no limit, or a page in document-id order).
   */
  instancesOfVersionByStatus: query(
    { collection: 'processInstances', equality: ['processKey', 'processVersion', 'status'], range: null, orderBy: [] },
    (db, processKey: string, version: string, status: string, afterId: string | null, limit: number | null) => {
      const q = db
        .collection('processInstances')
        .where('processKey', '==', processKey)
        .where('processVersion', '==', version)
        .where('status', '==', status);
      if (limit === null) return q;
      const paged = q.orderBy(documentId());
      return (afterId === null ? paged : paged.startAfter(afterId)).limit(limit);
    },
  ),
  /**
   * `inbox versions` and its `--retire`: the item instances of a process's
   * multi-instance activities (processKey `PROCESS#ACTIVITY`: the range
   * from `PROCESS#` up to `PROCESS$`, `$` being the character after `#`) of
   * one version in one status: count(), or a page ordered by processKey and
   * the document id. The composite index (processVersion, status, processKey).
   */
  itemsOfVersion: query(
    {
      collection: 'processInstances',
      equality: ['processVersion', 'status'],
      range: 'processKey',
      orderBy: [{ field: 'processKey', direction: 'asc' }],
    },
    (
      db,
      processKey: string,
      version: string,
      status: string,
      after: { readonly processKey: string; readonly id: string } | null,
      limit: number | null,
    ) => {
      const q = db
        .collection('processInstances')
        .where('processVersion', '==', version)
        .where('status', '==', status)
        .where('processKey', '>=', `${processKey}#`)
        .where('processKey', '<', `${processKey}$`)
        .orderBy('processKey');
      if (limit === null) return q;
      const paged = q.orderBy(documentId());
      return (after === null ? paged : paged.startAfter(after.processKey, after.id)).limit(limit);
    },
  ),
  /** The user-task waiting gauge: how many OPEN user tasks were created at or before the threshold (a count()). */
  openUserTasksBefore: query(
    { collection: 'userTasks', equality: ['status'], range: 'createdAt', orderBy: [] },
    (db, cutoff: Date) => db.collection('userTasks').where('status', '==', 'OPEN').where('createdAt', '<=', cutoff),
  ),
} as const;

/** Which user tasks a list shows: of one status, and of at most one assignee, candidate group or instance. */
export interface UserTaskFilter {
  readonly status: 'OPEN' | 'COMPLETED' | 'CANCELLED';
  readonly assignee?: string;
  readonly group?: string;
  readonly instance?: string;
}

export type QueryName = keyof typeof QUERIES;
