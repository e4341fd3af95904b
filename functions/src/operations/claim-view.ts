/** The pure parts of `inbox show`: how a large payload is previewed. */

/** Items of each list an offloaded payload over SHOW_WHOLE_BYTES is shown with. */
export const PREVIEW_ITEMS = 3;

/** The first `items` of each top-level list, with how many were left out: a look at a payload too large to print. */
export function preview(payload: unknown, items: number = PREVIEW_ITEMS): unknown {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload;
  return Object.fromEntries(
    Object.entries(payload as Record<string, unknown>).map(([key, value]) =>
      Array.isArray(value) && value.length > items
        ? [key, [...(value as unknown[]).slice(0, items), `… ${value.length - items} more of ${value.length}`]]
        : [key, value],
    ),
  );
}
