/**
 * What the console's changes (a repair, a migration, a task completed)
 * share: the request id they may send, and how the operation runs for
 * the caller who asked.
 */
import { z } from 'zod';
import type { Actor } from '../operations/types';
import type { Caller } from './access';

/** A request id the page sends with a change: the same id again is the same change. */
export const REQUEST_ID = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'letters, digits, - and _, at most 100');

/** The run options of a change the caller asked for: preview or real, by them through the console, with the request id and `expect` they sent (absent: left out). */
export function consoleRun<E>(
  caller: Caller,
  sent: { readonly preview: boolean; readonly requestId?: string | undefined; readonly expect?: E | undefined },
): { readonly preview: boolean; readonly actor: Actor; readonly requestId?: string; readonly expect?: E } {
  return {
    preview: sent.preview,
    actor: { id: caller.id, via: 'console' },
    ...(sent.requestId === undefined ? {} : { requestId: sent.requestId }),
    ...(sent.expect === undefined ? {} : { expect: sent.expect }),
  };
}
