import type { DocumentSnapshot } from '@google-cloud/firestore';
import { asCorrelationKey, refs } from '../engine/store/collections';
import { toDates } from '../engine/store/unit-of-work';
import { INBOX, RAW_CHUNKS } from '../inbox/document';
import { QUERIES } from '../queries';
import { readGauges } from '../relay/gauges';
import type { CliContext } from './context';
import { park, RefusedError, requeue } from './inbox-ops';
import { print } from './output';
import { parseChoice, parseDuration, parseLimit, parseTime, REASONS, STATUSES, UsageError } from './parse';
import { withProgress } from './progress';

type Doc = Record<string, unknown> & { id: string };
const view = (snap: DocumentSnapshot): Doc => ({ ...(toDates(snap.data() ?? {}) as Record<string, unknown>), id: snap.id });
const ageOf = (doc: Doc, now: Date): string => (doc.receivedAt instanceof Date ? `${Math.round((now.getTime() - doc.receivedAt.getTime()) / 60_000)} min` : '');

export async function stats(ctx: CliContext): Promise<void> {
  const db = ctx.db();
  const [open, done, parked, ...byReason] = await Promise.all([
    ...STATUSES.map((s) => QUERIES.byStatus.build(db, s).count().get()),
    ...REASONS.map((r) => QUERIES.byStatusAndReason.build(db, 'PARKED', r).count().get()),
  ]);
  const gauges = await readGauges(db, ctx.config.shards, ctx.now());
  const counts = { OPEN: open?.data().count ?? 0, DONE: done?.data().count ?? 0, PARKED: parked?.data().count ?? 0 };
  const reasons = Object.fromEntries(REASONS.map((r, i) => [r, byReason[i]?.data().count ?? 0]));
  print(ctx, { counts, parkedByReason: reasons, oldestOpenAgeSeconds: gauges.oldestOpenAgeSeconds }, ['status / reason', 'documents'], [
    ...Object.entries(counts),
    ...Object.entries(reasons).filter(([, n]) => n > 0).map(([r, n]) => [`  PARKED ${r}`, n]),
    ['oldest OPEN (age)', gauges.oldestOpenAgeSeconds === null ? 'none' : `${gauges.oldestOpenAgeSeconds} s`],
  ]);
}

export interface ListOptions {
  status?: string;
  reason?: string;
  messageName?: string;
  key?: string;
  olderThan?: string;
  limit?: string;
}

/** Equality filters in the query (single-field indexes), the age filter on what it returns. */
export async function list(ctx: CliContext, options: ListOptions): Promise<void> {
  const limit = parseLimit(options.limit ?? '100');
  const olderThan = options.olderThan === undefined ? null : parseDuration('--older-than', options.olderThan);
  let query: FirebaseFirestore.Query = ctx.db().collection(INBOX);
  if (options.status !== undefined) query = query.where('status', '==', parseChoice('--status', options.status, STATUSES));
  if (options.reason !== undefined) query = query.where('reason', '==', parseChoice('--reason', options.reason, REASONS));
  if (options.messageName !== undefined) query = query.where('messageName', '==', options.messageName);
  if (options.key !== undefined) query = query.where('correlationKey', '==', options.key);
  const now = ctx.now();
  const docs = (await query.limit(olderThan === null ? limit : 10_000).get()).docs
    .map(view)
    .filter((d) => olderThan === null || (d.receivedAt instanceof Date && now.getTime() - d.receivedAt.getTime() >= olderThan))
    .slice(0, limit);
  print(ctx, docs, ['id', 'status', 'reason', 'message', 'key', 'attempts', 'age', 'last error'], docs.map((d) => [d.id, d.status, d.reason, d.messageName, d.correlationKey, d.attempts, ageOf(d, now), String(d.lastError ?? d.validationError ?? '').slice(0, 60)]));
}

export async function show(ctx: CliContext, id: string): Promise<void> {
  const db = ctx.db();
  const snap = await db.collection(INBOX).doc(id).get();
  if (!snap.exists) throw new RefusedError(`no inbox document ${id}`);
  const doc = view(snap);
  const chunks = Number(doc.rawDataChunks ?? 0) > 0 ? (await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).count().get()).data().count : 0;
  const key = typeof doc.correlationKey === 'string' ? asCorrelationKey(toDates((await refs.correlationKey(db, doc.correlationKey).get()).data()) as Record<string, unknown> | undefined, doc.correlationKey) : null;
  const instanceIds = new Set<string>([...(key?.waiting.map((w) => w.processInstanceId) ?? []), ...(typeof doc.processInstanceId === 'string' ? [doc.processInstanceId] : [])]);
  const instances = await Promise.all([...instanceIds].map(async (i) => view(await refs.instance(db, i).get())));
  const rawData = doc.rawData instanceof Uint8Array ? Buffer.from(doc.rawData).toString('base64') : null;
  const result = { document: { ...doc, rawData }, rawChunksStored: chunks, waitingPoints: key?.waiting ?? [], lane: key?.open ?? [], processInstances: instances };
  if (ctx.json) {
    ctx.io.out(JSON.stringify(result, null, 2));
    return;
  }
  print(ctx, result, ['field', 'value'], [
    ['id', id], ['status', doc.status], ['reason', doc.reason], ['message', doc.messageName], ['correlation key', doc.correlationKey],
    ['attempts', doc.attempts], ['received', doc.receivedAt], ['next attempt', doc.nextAttemptAt], ['last error', doc.lastError ?? doc.validationError],
    ['payload', doc.payload ?? (rawData === null ? `(${String(doc.rawDataBytes)} bytes in ${chunks} chunks)` : `(raw, base64) ${rawData.slice(0, 200)}`)],
    ['park details', doc.parkDetails], ['dead letter', doc.deadLetter],
    ...instances.map((i) => [`instance ${i.id}`, `${String(i.status)}; incidents: ${JSON.stringify(i.incidents ?? [])}`]),
    ...(key?.waiting ?? []).map((w) => [`waiting ${w.executionId}`, `${w.messageName} at ${w.activityId} (instance ${w.processInstanceId})`]),
  ]);
}

export interface BulkOptions {
  reason?: string;
  since?: string;
  dryRun?: boolean;
  yes?: boolean;
}

/** Asks before a bulk change unless --yes; without a terminal that can answer, refuses. */
async function confirmBulk(ctx: CliContext, what: string, count: number, options: BulkOptions): Promise<boolean> {
  if (options.dryRun === true || options.yes === true || count === 0) return true;
  if (await ctx.io.confirm(`${what} ${count} documents? [y/N] `)) return true;
  ctx.io.err('aborted: nothing changed (pass --yes to skip the question)');
  return false;
}

export async function requeueCommand(ctx: CliContext, ids: readonly string[], options: BulkOptions): Promise<void> {
  let targets = [...ids];
  if (options.reason !== undefined) {
    if (targets.length > 0) throw new UsageError('requeue takes either IDs or --reason, not both');
    const reason = parseChoice('--reason', options.reason, REASONS);
    const since = options.since === undefined ? null : parseTime('--since', options.since, ctx.now());
    const docs = (await QUERIES.byStatusAndReason.build(ctx.db(), 'PARKED', reason).get()).docs.map(view);
    targets = docs.filter((d) => since === null || (d.parkedAt instanceof Date && d.parkedAt >= since)).map((d) => d.id);
  } else if (targets.length === 0) {
    throw new UsageError('requeue needs IDs or --reason REASON');
  }
  if (options.dryRun === true) {
    print(ctx, { wouldRequeue: targets }, ['would requeue'], targets.map((t) => [t]));
    return;
  }
  // Naming the ids is the confirmation; a bulk requeue by reason asks.
  if (options.reason !== undefined && !(await confirmBulk(ctx, 'Requeue', targets.length, options))) throw new RefusedError('not confirmed');
  const failures: Array<[string, string]> = [];
  await withProgress(ctx, targets, async (id) => {
    try {
      await requeue(ctx.db(), id, ctx.now());
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      failures.push([id, err.message]);
    }
  });
  print(ctx, { requeued: targets.length - failures.length, refused: failures.map(([id, why]) => ({ id, why })) }, ['id', 'refused because'], failures);
  if (!ctx.json) ctx.io.out(`requeued ${targets.length - failures.length} of ${targets.length}`);
  for (const [id, why] of failures) ctx.io.err(`${id}: ${why}`);
  if (failures.length > 0) throw new RefusedError(`${failures.length} of ${targets.length} documents could not be requeued`);
}

export async function parkCommand(ctx: CliContext, id: string, text: string): Promise<void> {
  await park(ctx.db(), id, text, ctx.now());
  print(ctx, { parked: id, reason: 'MANUAL' }, ['parked', 'reason'], [[id, 'MANUAL']]);
}

/** Deletes DONE documents processed before a time: for the emulator, where TTL deletion does not run. */
export async function purge(ctx: CliContext, options: BulkOptions & { doneBefore?: string }): Promise<void> {
  if (options.doneBefore === undefined) throw new UsageError('purge needs --done-before TIME');
  const before = parseTime('--done-before', options.doneBefore, ctx.now());
  const docs = (await QUERIES.byStatus.build(ctx.db(), 'DONE').get()).docs.map(view).filter((d) => d.processedAt instanceof Date && d.processedAt < before);
  if (options.dryRun === true) {
    print(ctx, { wouldDelete: docs.length }, ['would delete'], [[docs.length]]);
    return;
  }
  if (!(await confirmBulk(ctx, 'Delete', docs.length, options))) throw new RefusedError('not confirmed');
  await withProgress(ctx, docs, async (d) => {
    await ctx.db().collection(INBOX).doc(d.id).delete();
  });
  print(ctx, { deleted: docs.length }, ['deleted'], [[docs.length]]);
}
