import { z } from 'zod';
import type { MessageRegistry } from './registry';

/**
 * Whether a payload the inbox stored under an earlier message schema fits
 * the app's message types as deployed now: what `inbox requeue` asks before
 * a PARKED document goes back OPEN. Pure; the same wording as the receiver's
 * (interpret.ts), so a document parked by either reads alike.
 */
export type SchemaFit = { readonly fits: true } | { readonly fits: false; readonly error: string };

/** Longest validation message kept on a document (as interpret.ts keeps). */
const MAX_ERROR_CHARS = 2_000;

const clip = (text: string): string =>
  text.length <= MAX_ERROR_CHARS ? text : `${text.slice(0, MAX_ERROR_CHARS)}… (truncated)`;

/**
 * `payload` (the schema output stored then, or the whole payload read back
 * from its offloaded object or chunks) against today's type of `messageName`.
 * Validation only: the stored payload is never rewritten with today's output.
 */
export function schemaFit(registry: MessageRegistry, messageName: string, payload: unknown): SchemaFit {
  const type = registry.find((t) => t.name === messageName);
  if (type === undefined) {
    const known = registry.map((t) => t.name).join(', ');
    return {
      fits: false,
      error: clip(`the app no longer declares the message ${JSON.stringify(messageName)}; known: ${known}`),
    };
  }
  const parsed = type.schema.safeParse(payload);
  return parsed.success
    ? { fits: true }
    : { fits: false, error: clip(`${type.name} does not match its schema: ${z.prettifyError(parsed.error)}`) };
}
