import { parkRepair } from '../operations/repairs';
import { QUERIES } from '../queries';
import { readGauges, readWaitingGauges, waitedMessageNames } from '../relay/gauges';
import type { CliContext } from './context';
import { cliActor, operationsDeps } from './operations-deps';
import { ALREADY_APPLIED, print } from './output';
import { formatAge, REASONS, STATUSES } from './parse';
import { printPreview } from './repair-preview';

// main.ts loads this module for every inbox command.
export { list, type ListOptions } from './list-command';
export { requeueCommand } from './requeue-command';
export { purge } from './purge-command';
export { show } from './show-command';
export { orphanPayloadsCommand } from './orphan-payloads';
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

export async function parkCommand(ctx: CliContext, id: string, text: string, options: { dryRun?: boolean } = {}): Promise<void> {
  const { outcome, result } = await parkRepair(operationsDeps(ctx), { kind: 'park', id, text }, { preview: options.dryRun === true, actor: cliActor(ctx.config) });
  if (outcome.preview) return printPreview(ctx, outcome);
  const { alreadyApplied } = result;
  print(ctx, { parked: id, reason: 'MANUAL', alreadyApplied }, ['parked', 'reason'], [[id, 'MANUAL']]);
  if (alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
