/** Parsing of the CLI's filter values; every error names the flag and what it takes. */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "15m", "2h", "7d" → ms. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (match === null)
    throw new UsageError(`${flag}: expected a duration like 90s, 15m, 2h or 7d, got ${JSON.stringify(text)}`);
  return Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1_000);
}

/** An ISO-8601 time, or a duration meaning "that long ago". */
export function parseTime(flag: string, text: string, now: Date): Date {
  if (/^\d+[smhd]$/.test(text.trim())) return new Date(now.getTime() - parseDuration(flag, text));
  const ms = Date.parse(text);
  if (Number.isNaN(ms))
    throw new UsageError(
      `${flag}: expected an ISO-8601 time (2026-11-29T10:00:00Z) or a duration ago (2h), got ${JSON.stringify(text)}`,
    );
  return new Date(ms);
}

export function parseChoice<T extends string>(flag: string, text: string, choices: readonly T[]): T {
  const upper = text.trim().toUpperCase();
  const found = choices.find((c) => c === upper);
  if (found === undefined)
    throw new UsageError(`${flag}: expected one of ${choices.join(', ')}, got ${JSON.stringify(text)}`);
  return found;
}

export function parseLimit(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 10_000)
    throw new UsageError(`--limit: expected a whole number from 1 to 10000, got ${JSON.stringify(text)}`);
  return n;
}

/** A page size: a whole number from 1 to `max`; `flag` is the flag it came with (a command's older name for it too). */
export function parsePageSize(text: string, max = 1_000, flag = '--page-size'): number {
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || !Number.isInteger(n) || n < 1 || n > max)
    throw new UsageError(`${flag}: expected a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * One of `names` in any case, as the models spell it: a name nobody waits
 * for would match nothing, which would look like "nothing there".
 */
export function parseKnownName(flag: string, text: string, names: readonly string[], what: string): string {
  const found = names.find((n) => n.toLowerCase() === text.trim().toLowerCase());
  if (found === undefined)
    throw new UsageError(
      `${flag}: expected one of ${names.length === 0 ? '(none)' : names.join(', ')} (${what}), got ${JSON.stringify(text)}`,
    );
  return found;
}

/** A TIMER_ID: the 40 hex digits of a timer's hashed id. */
export function parseTimerId(text: string): string {
  const id = text.trim().toLowerCase();
  if (!/^[0-9a-f]{40}$/.test(id))
    throw new UsageError(
      `TIMER_ID: expected a timer id, 40 hex digits (\`inbox timers\` lists them), got ${JSON.stringify(text)}`,
    );
  return id;
}

/** How long, for people: "16 d 3 h", "5 h 12 min", "42 min", "30 s". Negative (not yet) as "in …". */
export function formatAge(ms: number): string {
  if (ms < 0) return `in ${formatAge(-ms)}`;
  const s = Math.floor(ms / 1000);
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor((s % 86_400) / 3_600), Math.floor((s % 3_600) / 60)];
  if (d > 0) return h > 0 ? `${d} d ${h} h` : `${d} d`;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  if (m > 0) return `${m} min`;
  return `${s} s`;
}
