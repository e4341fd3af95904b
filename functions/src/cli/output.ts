import Table from 'cli-table3';
import type { CliContext } from './context';
import { cell } from './context';

/** Rows as a table for people, or the raw value as JSON for scripts (--json). */
export function print(
  ctx: CliContext,
  value: unknown,
  headers: readonly string[],
  rows: ReadonlyArray<readonly unknown[]>,
): void {
  if (ctx.json) {
    ctx.io.out(JSON.stringify(value, null, 2));
    return;
  }
  const table = new Table({ head: [...headers], style: { head: [], border: [] } });
  for (const row of rows) table.push(row.map(cell));
  ctx.io.out(rows.length === 0 ? '(none)' : table.toString());
}

/**
 * Said when a repair's transaction found its own request id recorded: the
 * first attempt had committed and Firestore reported an error after it
 * (the SDK then runs the transaction again). The repair is done, once.
 */
export const ALREADY_APPLIED =
  'already applied: an earlier attempt of this command committed it (Firestore reported an error after the commit); nothing was done twice';
