import { asCorrelationKey, refs } from '../engine/store/collections';
import { STORED } from '../engine/store/converters';
import { newRequestId } from '../engine/store/repair-request';
import { INBOX } from '../inbox/document';
import { QUERIES } from '../queries';
import { readGauges, readWaitingGauges, waitedMessageNames } from '../relay/gauges';
import type { CliContext } from './context';
import { view } from './documents';
import { park, RefusedError } from './inbox-ops';
import { ALREADY_APPLIED, print } from './output';
import { formatAge, REASONS, STATUSES } from './parse';

// main.ts loads this module for every inbox command.
export { list, type ListOptions } from './list-command';
export { requeueCommand } from './requeue-command';
export { purge } from './purge-command';
export type { BulkOptions } from './bulk';

export async function stats(ctx: CliContext): Promise<void> {
  const db = ctx.db();
  const [open, done, parked, ...byReason] = await Promise.all([
    ...STATUSES.map((s) => QUERIES.byStatus.build(db, s).count().get()),
    ...REASONS.map((r) => QUERIES.byStatusAndReason.build(db, 'PARKED', r).count().get()),
  ]);
  const names = waitedMessageNames(await ctx.runtime.engine());
  const days = ctx.config.relay.waitingAlertDays;
  const [gauges, waiting] = await Promise.all([readGauges(db, ctx.config.shards, ctx.now()), readWaitingGauges(db, names, days, ctx.now())]);
  const counts = { OPEN: open?.data().count ?? 0, DONE: done?.data().count ?? 0, PARKED: parked?.data().count ?? 0 };
  const reasons = Object.fromEntries(REASONS.map((r, i) => [r, byReason[i]?.data().count ?? 0]));
  print(ctx, { counts, parkedByReason: reasons, oldestOpenAgeSeconds: gauges.oldestOpenAgeSeconds, openIncidents: gauges.openIncidents, failedJobs: gauges.failedJobs, waiting }, ['status / reason', 'documents'], [
    ...Object.entries(counts),
    ...Object.entries(reasons).filter(([, n]) => n > 0).map(([r, n]) => [`  PARKED ${r}`, n]),
    ['oldest OPEN (age)', gauges.oldestOpenAgeSeconds === null ? 'none' : `${gauges.oldestOpenAgeSeconds} s`],
    // The levels the alert policies watch besides PARKED (details: `inbox incidents`).
    ['instances in INCIDENT', gauges.openIncidents],
    ['FAILED jobs', gauges.failedJobs],
    // The waiting-too-long level, per message name (details: `inbox waiting --message NAME --older-than ${days}d`).
    ...waiting.flatMap((w) => [
      [`tokens waiting for ${w.messageName} ${days} d or longer`, w.waitingOverThreshold],
      [`oldest waiting for ${w.messageName} (age)`, w.oldestWaitingAgeSeconds === null ? 'none' : formatAge(w.oldestWaitingAgeSeconds * 1000)],
    ]),
  ]);
}

export async function show(ctx: CliContext, id: string): Promise<void> {
  const db = ctx.db();
  const snap = await db.collection(INBOX).doc(id).get();
  if (!snap.exists) throw new RefusedError(`no inbox document ${id}: check the id (\`inbox list\` shows them)`);
  const doc = view(snap);
  const chunks = Number(doc.rawDataChunks ?? 0) > 0 ? (await QUERIES.rawChunksOf.build(db, id).count().get()).data().count : 0;
  const key = typeof doc.correlationKey === 'string' ? asCorrelationKey((await refs.correlationKey(db, doc.correlationKey).withConverter(STORED).get()).data(), doc.correlationKey) : null;
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

export async function parkCommand(ctx: CliContext, id: string, text: string): Promise<void> {
  const { alreadyApplied } = await park(ctx.db(), id, text, ctx.now(), newRequestId());
  print(ctx, { parked: id, reason: 'MANUAL', alreadyApplied }, ['parked', 'reason'], [[id, 'MANUAL']]);
  if (alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
