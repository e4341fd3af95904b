import type { Repaired } from '../engine/store/token-repair';
import { cancelTokenRepair } from '../operations/repairs';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { printPreview, repairRunOptions } from './repair-preview';
import { reportTokenRepair } from './token-repair-report';

/** `inbox repair cancel-token`: removes a token from its instance, or with --dry-run its preview. */
export async function cancelTokenCommand(
  ctx: CliContext,
  options: { instance: string; execution: string; dryRun?: boolean; expect?: string },
): Promise<void> {
  const { outcome, result } = await cancelTokenRepair(
    operationsDeps(ctx),
    { kind: 'cancel-token', instanceId: options.instance, executionId: options.execution },
    repairRunOptions(ctx, options),
  );
  if (outcome.preview) return printPreview(ctx, outcome);
  const changed: Repaired & { activityId?: string } = { ...result };
  delete changed.activityId;
  reportTokenRepair(ctx, `token ${options.execution} cancelled`, changed, outcome);
}
