import { parseBasis, type RepairBasis } from '../engine/repair-basis';
import type { RepairRunOptions } from '../operations/repairs';
import type { RepairOutcome } from '../operations/types';
import type { CliContext } from './context';
import { cliActor } from './operations-deps';
import { print } from './output';
import { UsageError } from './parse';

/**
 * What `--dry-run` of a repair prints: the preview's summary, the writes
 * the real run would make (the same transaction, rolled back) and the basis
 * it read, as the `--expect` line that holds the real run to it; with
 * --json, the whole outcome.
 */
export function printPreview(ctx: CliContext, outcome: RepairOutcome): void {
  if (!ctx.json) ctx.io.out(`would ${outcome.summary}`);
  print(
    ctx,
    outcome,
    ['document', 'write', 'fields'],
    outcome.writes.map((w) => [w.path, w.op, w.fields.join(', ')]),
  );
  if (ctx.json) return;
  ctx.io.out('dry run: nothing changed');
  if (outcome.expect !== null)
    ctx.io.out(
      `to do exactly this, run it again without --dry-run and with --expect '${outcome.expect}' (refused if this changed meanwhile)`,
    );
}

/** `--expect LINE` read back: the basis a --dry-run printed; a UsageError for anything else. */
export function expectOption(text: string | undefined): { expect?: RepairBasis } {
  if (text === undefined) return {};
  const basis = parseBasis(text);
  if (basis === null)
    throw new UsageError(
      `--expect takes the line a --dry-run of the same repair printed (e.g. 'token:at=Task_1;step=3;status=WAITING_MESSAGE'), not ${JSON.stringify(text.slice(0, 200))}`,
    );
  return { expect: basis };
}

/** How a CLI repair runs: as the operator (cliActor), for real or with --dry-run as a preview; held to --expect when given. */
export function repairRunOptions(
  ctx: CliContext,
  options: { readonly dryRun?: boolean; readonly expect?: string },
): RepairRunOptions {
  return { preview: options.dryRun === true, actor: cliActor(ctx.config), ...expectOption(options.expect) };
}
