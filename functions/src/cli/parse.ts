/** Parsing of the CLI's filter values; every error names the flag and what it takes. */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "15m", "2h", "7d" → ms. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (match === null) throw new UsageError(`${flag}: expected a duration like 90s, 15m, 2h or 7d, got ${JSON.stringify(text)}`);
  return Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1_000);
}

/** An ISO-8601 time, or a duration meaning "that long ago". */
export function parseTime(flag: string, text: string, now: Date): Date {
  if (/^\d+[smhd]$/.test(text.trim())) return new Date(now.getTime() - parseDuration(flag, text));
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new UsageError(`${flag}: expected an ISO-8601 time (2026-11-29T10:00:00Z) or a duration ago (2h), got ${JSON.stringify(text)}`);
  return new Date(ms);
}

export function parseChoice<T extends string>(flag: string, text: string, choices: readonly T[]): T {
  const upper = text.trim().toUpperCase();
  const found = choices.find((c) => c === upper);
  if (found === undefined) throw new UsageError(`${flag}: expected one of ${choices.join(', ')}, got ${JSON.stringify(text)}`);
  return found;
}

export function parseLimit(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new UsageError(`--limit: expected a whole number from 1 to 10000, got ${JSON.stringify(text)}`);
  return n;
}

export const STATUSES = ['OPEN', 'DONE', 'PARKED'] as const;
export const REASONS = ['INVALID_PAYLOAD', 'KEY_COLLISION', 'NO_WAITING_INSTANCE', 'AMBIGUOUS_CORRELATION', 'ALREADY_STARTED', 'START_REFUSED', 'DEAD_LETTERED', 'MANUAL'] as const;
