import type { Repaired } from '../engine/store/token-repair';
import { moveTokenRepair } from '../operations/repairs';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { printPreview, repairRunOptions } from './repair-preview';
import { reportTokenRepair } from './token-repair-report';

/** `inbox repair move-token`: a token (or, without --execution, a new one) onto an activity, or with --dry-run its preview. */
export async function moveTokenCommand(
  ctx: CliContext,
  options: {
    instance: string;
    activity: string;
    execution?: string;
    force?: boolean;
    dryRun?: boolean;
    expect?: string;
  },
): Promise<void> {
  const request = {
    kind: 'move-token',
    instanceId: options.instance,
    activityId: options.activity,
    executionId: options.execution ?? null,
    force: options.force === true,
  } as const;
  const { outcome, result } = await moveTokenRepair(operationsDeps(ctx), request, repairRunOptions(ctx, options));
  if (outcome.preview) return printPreview(ctx, outcome);
  // Where the token came from is for the summary; the CLI's output stays as it was.
  const changed: Repaired & { executionId: string; fromActivityId?: string | null } = { ...result };
  delete changed.fromActivityId;
  reportTokenRepair(ctx, `token ${changed.executionId} to ${options.activity}`, changed, outcome);
}
