import { readOverview } from '../operations/overview';
import { parkRepair } from '../operations/repairs';
import type { CliContext } from './context';
import { cliActor, operationsDeps } from './operations-deps';
import { ALREADY_APPLIED, print } from './output';
import { formatAge } from './parse';
import { expectOption, printPreview } from './repair-preview';

// main.ts loads this module for every inbox command.
export { list, type ListOptions } from './list-command';
export { requeueCommand } from './requeue-command';
export { purge } from './purge-command';
export { show } from './show-command';
export { orphanPayloadsCommand } from './orphan-payloads-command';
export { orphanChunksCommand } from './orphan-chunks-command';
export type { BulkOptions } from './bulk';

export async function stats(ctx: CliContext): Promise<void> {
  const o = await readOverview(operationsDeps(ctx));
  const days = o.waitingAlertDays;
  // The JSON keeps the shape it had before the overview moved to operations/ (the gauge's fields, its threshold).
  const waiting = o.waiting.map((w) => ({ messageName: w.messageName, oldestWaitingAgeSeconds: w.oldestWaitingAgeSeconds, waitingOverThreshold: w.waitingOverThreshold, thresholdDays: days }));
  const { counts, parkedByReason: reasons } = o;
  print(ctx, { counts, parkedByReason: reasons, oldestOpenAgeSeconds: o.oldestOpenAgeSeconds, openIncidents: o.openIncidents, failedJobs: o.failedJobs, waiting }, ['status / reason', 'documents'], [
    ...Object.entries(counts),
    ...Object.entries(reasons).filter(([, n]) => n > 0).map(([r, n]) => [`  PARKED ${r}`, n]),
    ['oldest OPEN (age)', o.oldestOpenAgeSeconds === null ? 'none' : `${o.oldestOpenAgeSeconds} s`],
    // The levels the alert policies watch besides PARKED (details: `inbox incidents`).
    ['instances in INCIDENT', o.openIncidents],
    ['FAILED jobs', o.failedJobs],
    // The waiting-too-long level, per message name (details: `inbox waiting --message NAME --older-than ${days}d`).
    ...waiting.flatMap((w) => [
      [`tokens waiting for ${w.messageName} ${days} d or longer`, w.waitingOverThreshold],
      [`oldest waiting for ${w.messageName} (age)`, w.oldestWaitingAgeSeconds === null ? 'none' : formatAge(w.oldestWaitingAgeSeconds * 1000)],
    ]),
  ]);
}

export async function parkCommand(ctx: CliContext, id: string, text: string, options: { dryRun?: boolean; expect?: string } = {}): Promise<void> {
  const { outcome, result } = await parkRepair(operationsDeps(ctx), { kind: 'park', id, text }, { preview: options.dryRun === true, actor: cliActor(ctx.config), ...expectOption(options.expect) });
  if (outcome.preview) return printPreview(ctx, outcome);
  const { alreadyApplied } = result;
  print(ctx, { parked: id, reason: 'MANUAL', alreadyApplied }, ['parked', 'reason'], [[id, 'MANUAL']]);
  if (alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
