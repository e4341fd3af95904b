/**
 * The state of a claim check's object (an offloaded payload, a sender's
 * reference) when an operator looks: `inbox show` and the console's
 * document page. A storage failure is a state, never a failed read.
 */
import { errorMessage } from '../core/errors';
import type { GsObject } from '../core/gs-uri';
import type { PayloadStore } from '../storage/payload-store';
import { preview } from './claim-view';

/** What became of a claim's object when it was looked at. */
export type ObjectState =
  | { readonly state: 'FOUND'; readonly bytes: number }
  | { readonly state: 'MISSING' }
  | { readonly state: 'CHANGED'; readonly liveGeneration: string }
  | { readonly state: 'NOT_CHECKED'; readonly error: string };

export const stateText = (s: ObjectState): string =>
  s.state === 'FOUND'
    ? `FOUND (${s.bytes} bytes)`
    : s.state === 'CHANGED'
      ? `CHANGED: the name holds generation ${s.liveGeneration} now`
      : s.state === 'MISSING'
        ? 'MISSING: no object of that name'
        : `NOT CHECKED: ${s.error}`;

/** Reads an offloaded payload (pinned); its state and, when found, its bytes. A storage failure is a state, not a failed show. */
export async function readObject(
  store: () => PayloadStore,
  ref: GsObject,
): Promise<{ readonly state: ObjectState; readonly data: Buffer | null }> {
  try {
    const read = await store().read(ref);
    if (read.kind === 'FOUND') return { state: { state: 'FOUND', bytes: read.data.length }, data: read.data };
    return {
      state: read.kind === 'MISSING' ? { state: 'MISSING' } : { state: 'CHANGED', liveGeneration: read.liveGeneration },
      data: null,
    };
  } catch (err) {
    return { state: { state: 'NOT_CHECKED', error: errorMessage(err) }, data: null };
  }
}

/** Stats a sender's reference (never fetched: it may be large). */
export async function statObject(store: () => PayloadStore, ref: GsObject): Promise<ObjectState> {
  try {
    const stat = await store().stat(ref);
    if (stat.kind === 'FOUND') return { state: 'FOUND', bytes: stat.bytes };
    return stat.kind === 'MISSING' ? { state: 'MISSING' } : { state: 'CHANGED', liveGeneration: stat.liveGeneration };
  } catch (err) {
    return { state: 'NOT_CHECKED', error: errorMessage(err) };
  }
}

/** An offloaded payload up to this size is shown whole. */
export const SHOW_WHOLE_BYTES = 64 * 1024;

/** An offloaded payload as shown: parsed, a large one as a preview (claim-view.ts), one that is not JSON as a note saying so. */
export function shownPayload(data: Buffer): unknown {
  try {
    const parsed: unknown = JSON.parse(data.toString('utf8'));
    return data.length <= SHOW_WHOLE_BYTES ? parsed : preview(parsed);
  } catch (err) {
    return `(not JSON: ${errorMessage(err)})`;
  }
}
