/**
 * What `inbox explain` reads about one inbox document (by id, with one
 * query), for the pure explain.ts: shared by the CLI and the console.
 */
import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine/engine';
import { instanceId } from '../engine/ids';
import { asCorrelationKey, type CorrelationKeyDoc, refs } from '../engine/store/collections';
import { isOpenIncident, type Incident } from '../engine/state';
import { STORED } from '../engine/store/converters';
import { versionRef } from '../engine/store/versions';
import { modelKeyOf } from '../bpmn/item-body';
import { INBOX } from '../inbox/document';
import { readInstanceHolds } from '../inbox/instance-hold';
import { QUERIES } from '../queries';
import { laneEntryOf, type InboxView } from '../relay/inbox-writes';
import { awaitedNames, holdsBack, olderThan, type StartFacts, withoutEntry } from '../relay/lane';
import type { ExplainedDoc, ExplainFacts, InstanceFact, TokenFact, VersionFact } from './explain-model';
import { readStoredInstance, type StoredInstance } from './stored-instance';
import { stringOrNull } from './stored-values';

type Data = Record<string, unknown>;
const date = (v: unknown): Date | null => (v instanceof Date ? v : null);
const data = async (ref: DocumentReference): Promise<Data | undefined> =>
  (await ref.withConverter(STORED).get()).data();

function explainedDoc(d: Data): ExplainedDoc {
  const deadLetter = (d.deadLetter ?? null) as Data | null;
  return {
    status: String(d.status),
    reason: stringOrNull(d.reason),
    messageName: stringOrNull(d.messageName),
    correlationKey: stringOrNull(d.correlationKey),
    attempts: typeof d.attempts === 'number' ? d.attempts : 0,
    nextAttemptAt: date(d.nextAttemptAt),
    receivedAt: date(d.receivedAt),
    requeuedAt: date(d.requeuedAt),
    parkedAt: date(d.parkedAt),
    lastError: stringOrNull(d.lastError),
    validationError: stringOrNull(d.validationError),
    collidesWith: stringOrNull(d.collidesWith),
    deliveryCount: typeof deadLetter?.deliveryCount === 'number' ? deadLetter.deliveryCount : null,
    sourceSubscription: stringOrNull(deadLetter?.sourceSubscription),
    processInstanceId: stringOrNull(d.processInstanceId),
    processedAt: date(d.processedAt),
    correlatedVia: stringOrNull(d.correlatedVia),
    expireAt: date(d.expireAt),
    payloadExpireAt: date(d.payloadExpireAt),
    rawDataChunks: typeof d.rawDataChunks === 'number' ? d.rawDataChunks : 0,
    referenceUri: claimUri(d.reference),
    offloadedUri: claimUri(d.offloaded),
    parkDetails: typeof d.parkDetails === 'object' && d.parkDetails !== null ? (d.parkDetails as Data) : null,
    dismissed: dismissedOf(d.dismissed),
  };
}

/** The `uri` of a stored claim (reference, offloaded), or null. */
const claimUri = (v: unknown): string | null =>
  typeof v === 'object' && v !== null ? stringOrNull((v as Data).uri) : null;

function dismissedOf(v: unknown): NonNullable<ExplainedDoc['dismissed']> | null {
  if (typeof v !== 'object' || v === null) return null;
  const d = v as Data;
  return { by: String(d.by), at: date(d.at), note: String(d.note), previousReason: stringOrNull(d.previousReason) };
}

/**
 * The oldest OPEN document of the lane older than this one that holds it
 * back, as the relay would find it (lane.ts, holdsBack; stale entries
 * skipped, nothing written).
 */
async function heldBehind(
  db: Firestore,
  id: string,
  doc: Data,
  key: CorrelationKeyDoc,
  start: StartFacts | null,
): Promise<ExplainFacts['heldBehind']> {
  const self = laneEntryOf(id, doc as unknown as InboxView);
  const awaited = awaitedNames(key.waiting);
  let lane = key.open.filter((e) => holdsBack(e, self, start, awaited));
  for (let older = olderThan(lane, self); older !== null; older = olderThan(lane, self)) {
    const other = await data(db.collection(INBOX).doc(older.inboxId));
    if (other?.status === 'OPEN') return { id: older.inboxId, nextAttemptAt: date(other.nextAttemptAt) };
    lane = withoutEntry(lane, older.inboxId);
  }
  return null;
}

/** `KEY@VERSION` of a stored instance's process version; null when it names none. */
const versionKeyOf = (data: Data): { processKey: string; version: string } | null =>
  typeof data.processKey === 'string' && typeof data.processVersion === 'string'
    ? { processKey: data.processKey, version: data.processVersion }
    : null;

/**
 * The versions these instances run on: whether each is stored (one batched
 * read by id) and which version of its process is deployed (the app's
 * models; null when they cannot be loaded).
 */
async function versionFacts(
  db: Firestore,
  engine: () => Promise<Engine>,
  instances: readonly Data[],
): Promise<Map<string, VersionFact>> {
  const pairs = new Map<string, { processKey: string; version: string }>();
  for (const data of instances) {
    const v = versionKeyOf(data);
    if (v !== null) pairs.set(`${v.processKey}@${v.version}`, v);
  }
  const facts = new Map<string, VersionFact>();
  if (pairs.size === 0) return facts;
  const loaded = await engine().catch(() => null);
  const list = [...pairs.entries()];
  const snaps = await db.getAll(...list.map(([, v]) => versionRef(db, modelKeyOf(v.processKey), v.version)));
  list.forEach(([key, v], n) => {
    facts.set(key, {
      ...v,
      deployedVersion: loaded?.find(modelKeyOf(v.processKey))?.version ?? null,
      stored: snaps[n]?.exists === true,
    });
  });
  return facts;
}

function instanceFact(id: string, stored: StoredInstance, versions: ReadonlyMap<string, VersionFact>): InstanceFact {
  const i = stored.data;
  const own = versionKeyOf(i);
  const active = Array.isArray(i.activeExecutionIds)
    ? i.activeExecutionIds.filter((e): e is string => typeof e === 'string')
    : [];
  const byId = new Map(stored.tokens.map((t) => [t.id, t]));
  const tokens = active.flatMap((e): TokenFact[] => {
    const x = byId.get(e);
    return x === undefined
      ? []
      : [
          {
            executionId: e,
            activityId: x.activityId,
            status: x.status,
            waitingFor: x.waitingFor,
            jobId: stringOrNull(x.jobId),
            waitsOn: stringOrNull(
              x.status === 'WAITING_USER'
                ? x.userTaskId
                : x.status === 'WAITING_CALL'
                  ? x.calledInstanceId
                  : x.arrivedBy,
            ),
          },
        ];
  });
  const incidents = (Array.isArray(i.incidents) ? i.incidents : []) as Incident[];
  return {
    id,
    businessKey: String(i.businessKey),
    status: String(i.status),
    completedAt: date(i.completedAt),
    tokens,
    openIncidents: incidents.filter(isOpenIncident).map((x) => x.reason),
    version: own === null ? null : (versions.get(`${own.processKey}@${own.version}`) ?? null),
  };
}

/**
 * Reads what explaining a document needs, by id and with one query: the
 * document, its key's document (waiting points, lane), the older document
 * it may be held behind, and the instances related to its key: those that
 * wait under it, the one it went to, and those whose business key is the
 * correlation key (the convention `inbox instances KEY` relies on too).
 * Null when there is no such document.
 */
export async function explainFacts(
  db: Firestore,
  id: string,
  bufferWindowMs: number,
  engine: () => Promise<Engine>,
): Promise<ExplainFacts | null> {
  const d = await data(db.collection(INBOX).doc(id));
  if (d === undefined) return null;
  const doc = explainedDoc(d);
  const keyName = doc.correlationKey;
  const key = keyName === null ? null : asCorrelationKey(await data(refs.correlationKey(db, keyName)), keyName);
  const waiting = (key?.waiting ?? [])
    .filter((w) => w.messageName === doc.messageName)
    .map((w) => ({ processInstanceId: w.processInstanceId, executionId: w.executionId, activityId: w.activityId }));
  const byBusinessKey =
    keyName === null ? [] : (await QUERIES.instancesByBusinessKey.build(db, keyName).get()).docs.map((s) => s.id);
  // Only an OPEN document's next attempt depends on the deployed models (whether its name starts a process).
  const messageStart =
    key !== null && doc.status === 'OPEN' && doc.messageName !== null
      ? (await engine()).startsByMessage(doc.messageName)
      : null;
  const start =
    messageStart === null || key === null
      ? null
      : {
          processKey: messageStart.model.key,
          activityId: messageStart.node.id,
          instanceId: instanceId(messageStart.model.key, key.correlationKey),
        };
  const ids = new Set([
    ...(key?.waiting ?? []).map((w) => w.processInstanceId),
    ...(doc.processInstanceId === null ? [] : [doc.processInstanceId]),
    ...byBusinessKey,
    ...(start === null ? [] : [start.instanceId]),
  ]);
  const read = await Promise.all([...ids].map(async (i) => ({ id: i, stored: await readStoredInstance(db, i) })));
  const found = read.filter((r): r is { id: string; stored: StoredInstance } => r.stored !== null);
  const versions = await versionFacts(
    db,
    engine,
    found.map((r) => r.stored.data),
  );
  const instances = found.map((r) => instanceFact(r.id, r.stored, versions));
  const facts =
    start === null
      ? null
      : { awaited: waiting.length > 0, instanceExists: instances.some((i) => i.id === start.instanceId) };
  const behind = key !== null && doc.status === 'OPEN' ? await heldBehind(db, id, d, key, facts) : null;
  // What keeps an offloaded DONE document past payloadExpireAt: its instance, as the payload sweep reads it.
  const keptFor = (await readInstanceHolds(db, [{ id, data: d }])).get(id) ?? null;
  return { id, doc: { ...doc, keptFor }, waiting, heldBehind: behind, instances, bufferWindowMs, start };
}
