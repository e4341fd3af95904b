import type { CliContext } from './context';

export interface BulkOptions {
  reason?: string;
  since?: string;
  dryRun?: boolean;
  yes?: boolean;
}

/** Asks before a bulk change unless --yes; without a terminal that can answer, refuses. */
export async function confirmBulk(
  ctx: CliContext,
  what: string,
  count: number,
  options: BulkOptions,
): Promise<boolean> {
  if (options.dryRun === true || options.yes === true || count === 0) return true;
  if (await ctx.io.confirm(`${what} ${count} documents? [y/N] `)) return true;
  ctx.io.err('aborted: nothing changed (pass --yes to skip the question)');
  return false;
}
