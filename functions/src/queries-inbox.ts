import type { DocumentSnapshot, Query } from '@google-cloud/firestore';
import { documentId, query, type QueryShape, subsets } from './queries-shape';

/** The optional equality filters of `inbox list`, by field. */
export const LIST_FILTER_FIELDS = ['status', 'reason', 'messageName', 'correlationKey'] as const;
export type ListFilters = Partial<Record<(typeof LIST_FILTER_FIELDS)[number], string>>;

/** The queries on inbox documents and their raw chunks (part of the registry, queries.ts). */
export const INBOX_QUERIES = {
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
} as const;
