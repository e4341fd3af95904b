/**
 * What holds a migration to its preview: per instance, the basis the
 * preview read (its version, status and live tokens, engine/repair-basis.ts)
 * as a short fingerprint; for a run, one line listing them
 * (`migration:ID=FINGERPRINT,…`), which the dry run prints and `--expect`
 * takes back. An instance whose basis differs from its fingerprint, or that
 * the line does not name, is refused and left as it is. Pure.
 */
import { sha256Hex } from '../../core/hash';
import { formatBasis, type RepairBasis, tokensBasis } from '../repair-basis';
import type { ExecutionState, InstanceState } from '../state';

/** An instance a migration acts on, as read: its version, its status and its live tokens (`id@activity#step`). */
export function migrationBasis(instance: InstanceState, tokens: Readonly<Record<string, ExecutionState>>): RepairBasis {
  const { facts } = tokensBasis(instance, tokens);
  return { subject: 'tokens', facts: { version: instance.processVersion, ...facts } };
}

/** A basis in 16 hex digits: what the expect line carries per instance. */
export const fingerprint = (basis: RepairBasis): string => sha256Hex(formatBasis(basis)).slice(0, 16);

const PREFIX = 'migration:';

/** The expect line of a preview: each instance previewed with its fingerprint, in id order. */
export function formatMigrationExpect(entries: ReadonlyMap<string, string>): string {
  return `${PREFIX}${[...entries.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, fp]) => `${id}=${fp}`)
    .join(',')}`;
}

/** An expect line read back (instance id → fingerprint); null for text no preview printed. */
export function parseMigrationExpect(text: string): Map<string, string> | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith(PREFIX)) return null;
  const entries = new Map<string, string>();
  const body = trimmed.slice(PREFIX.length);
  if (body === '') return entries;
  for (const pair of body.split(',')) {
    const eq = pair.indexOf('=');
    const id = pair.slice(0, eq);
    const fp = pair.slice(eq + 1);
    if (eq <= 0 || !/^[0-9a-f]{16}$/.test(fp) || entries.has(id)) return null;
    entries.set(id, fp);
  }
  return entries;
}
