import { resolveIncidentRepair } from '../operations/repairs';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { ALREADY_APPLIED, print } from './output';
import { printPreview, repairRunOptions } from './repair-preview';

/** `inbox repair resolve-incident ID`: closes an instance's open incidents once their cause is repaired (refused, naming the causes, before). */
export async function resolveIncidentCommand(
  ctx: CliContext,
  instanceId: string,
  options: { note?: string; dryRun?: boolean; expect?: string },
): Promise<void> {
  const { outcome, result: done } = await resolveIncidentRepair(
    operationsDeps(ctx),
    { kind: 'resolve-incident', instanceId, note: options.note ?? null },
    repairRunOptions(ctx, options),
  );
  if (outcome.preview) return printPreview(ctx, outcome);
  print(
    ctx,
    done,
    ['instance', 'status', 'incidents resolved'],
    [[done.instance.id, done.instance.status, done.resolved]],
  );
  if (done.alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
