import { parkRepair } from '../operations/repairs';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { ALREADY_APPLIED, print } from './output';
import { printPreview, repairRunOptions } from './repair-preview';

/** `inbox park ID --reason TEXT`: an OPEN document to PARKED (reason MANUAL), or with --dry-run its preview. */
export async function parkCommand(
  ctx: CliContext,
  id: string,
  text: string,
  options: { dryRun?: boolean; expect?: string } = {},
): Promise<void> {
  const { outcome, result } = await parkRepair(
    operationsDeps(ctx),
    { kind: 'park', id, text },
    repairRunOptions(ctx, options),
  );
  if (outcome.preview) return printPreview(ctx, outcome);
  const { alreadyApplied } = result;
  print(ctx, { parked: id, reason: 'MANUAL', alreadyApplied }, ['parked', 'reason'], [[id, 'MANUAL']]);
  if (alreadyApplied && !ctx.json) ctx.io.out(ALREADY_APPLIED);
}
