import type { Firestore } from '@google-cloud/firestore';

/** The Firestore client's one funnel for unary RPCs (commit, beginTransaction, rollback, …); not public API. */
type RequestFn = (methodName: string, request: unknown, requestTag: string, retryCodes?: unknown) => Promise<unknown>;

/** A commit request as the client sends it: the documents its writes name. */
interface CommitRequest {
  readonly writes?: ReadonlyArray<{ readonly update?: { readonly name?: string }; readonly delete?: string }>;
}

/** Whether a commit writes the document whose path ends with `suffix` (e.g. `inbox/ID`). */
export const writes = (request: unknown, suffix: string): boolean =>
  ((request as CommitRequest).writes ?? []).some((w) => (w.update?.name ?? w.delete ?? '').endsWith(`/${suffix}`));

/** What the wrapper does with one matching commit after it reached the backend (and landed). */
export type AfterLanding =
  /** Report UNAVAILABLE, as a connection that broke before the answer: the client runs the transaction again. */
  | { readonly kind: 'UNAVAILABLE' }
  /** Hold the answer until `release` resolves (a slow answer past the caller's deadline), then give it. */
  | { readonly kind: 'HOLD'; readonly release: Promise<void> };

export interface CommitFaults {
  /** The next commit whose request matches lands, and then `after` happens to its answer. Once. */
  afterLanding(match: (request: unknown) => boolean, after: AfterLanding): void;
  /** How many injected faults have happened so far. */
  readonly fired: () => number;
  /** Every request the client sent through the funnel since the wrap, in order (method name and request). */
  readonly calls: Array<{ readonly method: string; readonly request: unknown }>;
  /** Puts the client back as it was. */
  restore(): void;
}

/**
 * Wraps a Firestore client's request funnel so a chosen commit really lands
 * and then reports a failure (or answers late): what a connection that
 * breaks after the backend committed looks like to the client, which then
 * runs the transaction's callback again. The honest way to force the
 * "commit landed but reported an error" re-run: the backend is the real
 * emulator, only the answer is lost. Every call is recorded in `calls`.
 */
export function commitFaults(db: Firestore): CommitFaults {
  const client = db as unknown as { request: RequestFn };
  const original = client.request;
  const pending: Array<{ match: (request: unknown) => boolean; after: AfterLanding }> = [];
  const calls: Array<{ method: string; request: unknown }> = [];
  let fired = 0;
  client.request = async (methodName, request, requestTag, retryCodes) => {
    calls.push({ method: methodName, request });
    const result = await original.call(client, methodName, request, requestTag, retryCodes);
    const index = methodName === 'commit' ? pending.findIndex((p) => p.match(request)) : -1;
    if (index < 0) return result;
    const [fault] = pending.splice(index, 1);
    fired += 1;
    if (fault?.after.kind === 'HOLD') {
      await fault.after.release;
      return result;
    }
    throw Object.assign(new Error('14 UNAVAILABLE: injected after the commit landed'), { code: 14 });
  };
  return {
    afterLanding: (match, after) => pending.push({ match, after }),
    fired: () => fired,
    calls,
    restore: () => {
      client.request = original;
    },
  };
}
