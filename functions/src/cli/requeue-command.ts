import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { newRequestId } from '../engine/store/repair-request';
import { INBOX } from '../inbox/document';
import { QUERIES } from '../queries';
import type { InboxView } from '../relay/inbox-writes';
import { type BulkOptions, confirmBulk } from './bulk';
import type { CliContext } from './context';
import { view } from '../operations/documents';
import { requeueRepair } from '../operations/repairs';
import { checkRequeue } from '../operations/inbox-repairs';
import { requeueFit } from '../operations/requeue-fit';
import { RefusedError } from '../operations/refused';
import { cliActor, operationsDeps } from './operations-deps';
import { ALREADY_APPLIED, print } from './output';
import { parseChoice, parseTime, UsageError } from './parse';
import { REASONS } from '../operations/vocabulary';
import { withProgress } from './progress';

interface Target {
  readonly id: string;
  /** As read; undefined when there is no such document. */
  readonly doc: InboxView | undefined;
}

const targetOf = (snap: DocumentSnapshot): Target => ({
  id: snap.id,
  doc: snap.exists ? (snap.data() as InboxView) : undefined,
});

/** Named ids or --reason [--since]; never both, since a filter next to ids would be silently ignored. */
function checkUsage(ids: readonly string[], options: BulkOptions): void {
  if (ids.length > 0) {
    const filters = (['reason', 'since'] as const).filter((f) => options[f] !== undefined).map((f) => `--${f}`);
    if (filters.length > 0)
      throw new UsageError(
        `requeue takes either IDs or --reason [--since], not both: drop ${filters.join(' and ')} or the IDs`,
      );
  } else if (options.reason === undefined) {
    throw new UsageError(
      options.since === undefined
        ? 'requeue needs IDs or --reason REASON'
        : '--since filters a bulk requeue: it needs --reason REASON',
    );
  }
}

/** The PARKED documents of --reason, parked at or after --since. */
async function byReason(db: Firestore, options: BulkOptions, now: Date): Promise<Target[]> {
  const reason = parseChoice('--reason', options.reason ?? '', REASONS);
  const since = options.since === undefined ? null : parseTime('--since', options.since, now);
  const snaps = (await QUERIES.byStatusAndReason.build(db, 'PARKED', reason).get()).docs;
  const parkedSince = (s: DocumentSnapshot): boolean => {
    const parkedAt = view(s).parkedAt;
    return since === null || (parkedAt instanceof Date && parkedAt >= since);
  };
  return snaps.filter(parkedSince).map(targetOf);
}

/**
 * Reads every target (by id) and applies the real run's checks: what it would
 * requeue, what it would park again as INVALID_PAYLOAD (its payload no longer
 * fits today's schema) and what it would refuse.
 */
async function dryRun(ctx: CliContext, targets: readonly Target[]): Promise<void> {
  const deps = operationsDeps(ctx, {});
  const checks = [];
  for (const t of targets) {
    const check = checkRequeue(t.id, t.doc);
    const fit = check.ok ? await requeueFit(deps, t.id, t.doc) : null;
    checks.push({ id: t.id, check, misfit: fit?.fits === false ? fit.error : null });
    if (fit?.fits === 'unchecked') ctx.io.err(`${t.id}: ${fit.why}`);
  }
  const wouldRequeue = checks.filter((c) => c.check.ok && c.misfit === null).map((c) => c.id);
  const wouldPark = checks.flatMap((c) => (c.misfit === null ? [] : [{ id: c.id, why: c.misfit }]));
  const wouldRefuse = checks.flatMap((c) => (c.check.ok ? [] : [{ id: c.id, why: c.check.why }]));
  print(
    ctx,
    { wouldRequeue, wouldPark, wouldRefuse },
    ['id', 'would', 'because'],
    [
      ...wouldRequeue.map((id) => [id, 'requeue', '']),
      ...wouldPark.map((r) => [r.id, 'park INVALID_PAYLOAD', r.why]),
      ...wouldRefuse.map((r) => [r.id, 'refuse', r.why]),
    ],
  );
  for (const r of wouldPark) ctx.io.err(`${r.id}: would stay PARKED as INVALID_PAYLOAD: ${r.why}`);
  for (const r of wouldRefuse) ctx.io.err(`${r.id}: ${r.why}`);
  // Exits as the real run would: 1 when any target would not go back OPEN (an unknown id included).
  if (wouldRefuse.length + wouldPark.length > 0)
    throw new RefusedError(
      `dry run: ${wouldRefuse.length} of ${targets.length} documents would be refused and ${wouldPark.length} parked again, nothing changed`,
    );
}

/** `inbox requeue`: PARKED documents back to OPEN, by id or all of a --reason (a bulk one asks first unless --yes); --dry-run shows what would be requeued. */
export async function requeueCommand(ctx: CliContext, ids: readonly string[], options: BulkOptions): Promise<void> {
  checkUsage(ids, options);
  const db = ctx.db();
  const named = [...new Set(ids)];
  if (options.dryRun === true) {
    await dryRun(
      ctx,
      named.length > 0
        ? (await db.getAll(...named.map((id) => db.collection(INBOX).doc(id)))).map(targetOf)
        : await byReason(db, options, ctx.now()),
    );
    return;
  }
  const targets = named.length > 0 ? named : (await byReason(db, options, ctx.now())).map((t) => t.id);
  // Naming the ids is the confirmation; a bulk requeue by reason asks.
  if (named.length === 0 && !(await confirmBulk(ctx, 'Requeue', targets.length, options)))
    throw new RefusedError('not confirmed');
  const failures: Array<[string, string]> = [];
  // Stayed PARKED, now INVALID_PAYLOAD: the payload no longer fits the app's schema as deployed now.
  const misfits: Array<[string, string]> = [];
  // One request id for the whole run: each document records it, so a transaction re-run finds its own requeue.
  const requestId = newRequestId();
  let alreadyApplied = 0;
  // The offload's log lines (a dead letter kept in chunks) on stderr as they always were: without the CLI's function field.
  const deps = operationsDeps(ctx, {});
  const actor = cliActor(ctx.config);
  await withProgress(ctx, targets, async (id) => {
    try {
      // One document's requeue as the console's (operations/repairs.ts): a payload kept in chunks is offloaded first.
      const run = await requeueRepair(deps, { kind: 'requeue', id }, { preview: false, actor, requestId });
      if (run.outcome.alreadyApplied) alreadyApplied += 1;
      if (run.result.misfit !== null) misfits.push([id, run.result.misfit]);
      if (run.result.unchecked !== null) ctx.io.err(`${id}: ${run.result.unchecked}`);
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      failures.push([id, err.message]);
    }
  });
  const requeued = targets.length - failures.length - misfits.length;
  print(
    ctx,
    {
      requeued,
      alreadyApplied,
      parked: misfits.map(([id, why]) => ({ id, reason: 'INVALID_PAYLOAD', why })),
      refused: failures.map(([id, why]) => ({ id, why })),
    },
    ['id', 'not requeued because'],
    [...misfits.map(([id, why]) => [id, `parked INVALID_PAYLOAD: ${why}`]), ...failures],
  );
  if (!ctx.json)
    ctx.io.out(
      `requeued ${requeued} of ${targets.length}${alreadyApplied > 0 ? ` (${alreadyApplied} ${ALREADY_APPLIED})` : ''}`,
    );
  for (const [id, why] of misfits) ctx.io.err(`${id}: stays PARKED as INVALID_PAYLOAD: ${why}`);
  for (const [id, why] of failures) ctx.io.err(`${id}: ${why}`);
  if (failures.length + misfits.length > 0)
    throw new RefusedError(
      `${failures.length + misfits.length} of ${targets.length} documents could not be requeued${misfits.length > 0 ? ` (${misfits.length} no longer fit the app's message schema: parked INVALID_PAYLOAD)` : ''}`,
    );
}
