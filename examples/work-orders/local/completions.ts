/**
 * The completions the simulated provider (tools/local/provider.ts) publishes, as pure builders:
 * the demo's plan and its unit tests compute the expected sizes from the same code.
 */

/** The completion a provider publishes for a work order (`eventId` is the inbox's dedup key). */
export function completionOf(workOrderId: string, completedItems = 12): Record<string, unknown> {
  return { workOrderId, completedItems, completionTimestamp: new Date().toISOString(), eventId: `done-${workOrderId}` };
}

export const COMPLETION_ATTRIBUTES = { eventType: 'WorkOrderCompleted' } as const;

/** Characters of each line item's description: fixed, so a report's size follows from its item count alone. */
const DESCRIPTION_CHARS = 540;

/**
 * The line items of a large report: `count` items of fixed size (about
 * 595 bytes of JSON each), the same for every work order, so the demo's
 * expected sizes hold on every run.
 */
export function lineItemsOf(count: number): Array<{ itemId: string; quantity: number; description: string }> {
  return Array.from({ length: count }, (_, i) => {
    const n = String(i + 1).padStart(6, '0');
    const text = `Line ${n}: replaced fitting, tested, signed off by the site supervisor. `;
    return {
      itemId: `item-${n}`,
      quantity: (i % 9) + 1,
      description: text.repeat(Math.ceil(DESCRIPTION_CHARS / text.length)).slice(0, DESCRIPTION_CHARS),
    };
  });
}

/** The completion of a work order whose report travels inline: `count` line items, `completedItems` the same count. */
export function inlineReportCompletionOf(workOrderId: string, count: number): Record<string, unknown> {
  return { ...completionOf(workOrderId, count), lineItems: lineItemsOf(count) };
}
