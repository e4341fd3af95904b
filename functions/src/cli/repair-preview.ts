import type { RepairOutcome } from '../operations/types';
import type { CliContext } from './context';
import { print } from './output';

/**
 * What `--dry-run` of a repair prints: the preview's summary and the writes
 * the real run would make (the same transaction, rolled back); with --json,
 * the whole outcome.
 */
export function printPreview(ctx: CliContext, outcome: RepairOutcome): void {
  if (!ctx.json) ctx.io.out(`would ${outcome.summary}`);
  print(ctx, outcome, ['document', 'write', 'fields'], outcome.writes.map((w) => [w.path, w.op, w.fields.join(', ')]));
  if (!ctx.json) ctx.io.out('dry run: nothing changed');
}
