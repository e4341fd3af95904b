import { documentId, query } from './queries-shape';

/** The queries on process instances, their stored versions and their token documents of before 0.6.0 (part of the registry, queries.ts). */
export const INSTANCE_QUERIES = {
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
  /** CLI `instances`: the token documents of an instance stored before 0.6.0 (newer ones hold their tokens). */
  executionsOfInstance: query(
    { collection: 'executions', equality: ['processInstanceId'], range: null, orderBy: [] },
    (db, processInstanceId: string) => db.collection('executions').where('processInstanceId', '==', processInstanceId),
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
} as const;
