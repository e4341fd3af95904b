import { canonicalJson } from '../../functions/src/core/hash';

/** Builders of claim-check payloads: completions with a given number of bytes of line items. */

/** Characters of each filler item's description: small enough that the last item can take up any remainder (at most MAX_LINE_ITEM_TEXT_CHARS). */
const FILLER_DESCRIPTION_CHARS = 500;

/**
 * A WorkOrderCompleted payload whose canonical JSON (what the receiver
 * measures against INBOX_OFFLOAD_BYTES, and the offloaded object's bytes) is
 * exactly `bytes` long, made of line items; its JSON.stringify has the same
 * length (ASCII, no whitespace). At least ~1 KiB.
 */
export function completionOfBytes(workOrderId: string, bytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const head = { workOrderId, completedItems: 0, completionTimestamp: '2026-11-29T10:00:00Z', ...extra };
  const item = (i: number, description: string): Record<string, unknown> => ({ itemId: `item-${String(i).padStart(6, '0')}`, quantity: 1, description });
  const size = (lineItems: ReadonlyArray<Record<string, unknown>>): number => Buffer.byteLength(canonicalJson({ ...head, completedItems: lineItems.length, lineItems }), 'utf8');
  const full = size([item(0, 'x'.repeat(FILLER_DESCRIPTION_CHARS))]) - size([]);
  const count = Math.max(0, Math.floor((bytes - size([]) - 200) / (full + 1)));
  const items = Array.from({ length: count }, (_, i) => item(i, 'x'.repeat(FILLER_DESCRIPTION_CHARS)));
  // The last item's description takes up the remainder; completedItems counts it (its digits are part of the size).
  const last = (description: string): Array<Record<string, unknown>> => [...items, item(count, description)];
  const remainder = bytes - size(last(''));
  if (remainder < 0 || remainder > 1_024) throw new Error(`completionOfBytes(${bytes}): remainder ${remainder} out of range`);
  const lineItems = last('y'.repeat(remainder));
  const payload = { ...head, completedItems: lineItems.length, lineItems };
  const got = Buffer.byteLength(canonicalJson(payload), 'utf8');
  if (got !== bytes) throw new Error(`completionOfBytes(${bytes}) made ${got} bytes`);
  return payload;
}
