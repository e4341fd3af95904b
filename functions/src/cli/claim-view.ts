/** The pure parts of `inbox show` and `inbox repair orphan-payloads`: how a large payload is previewed, how old an object is. */

/** Items of each list an offloaded payload over SHOW_WHOLE_BYTES is shown with. */
export const PREVIEW_ITEMS = 3;

/** The first `items` of each top-level list, with how many were left out: a look at a payload too large to print. */
export function preview(payload: unknown, items: number = PREVIEW_ITEMS): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  return Object.fromEntries(
    Object.entries(payload as Record<string, unknown>).map(([key, value]) =>
      Array.isArray(value) && value.length > items ? [key, [...(value as unknown[]).slice(0, items), `… ${value.length - items} more of ${value.length}`]] : [key, value],
    ),
  );
}

/**
 * When an object was created, from its generation: Cloud Storage's
 * generation is the creation time in microseconds since the epoch (a new
 * generation per write), which the listing already carries; null if it is
 * not a plausible one.
 */
export function createdAtOfGeneration(generation: string): Date | null {
  if (!/^[1-9][0-9]{0,18}$/.test(generation)) return null;
  const ms = Number(BigInt(generation) / 1000n);
  return Number.isSafeInteger(ms) ? new Date(ms) : null;
}
