/**
 * Fault injection and the request log. Programmatic only: nothing here is
 * reachable over HTTP, so a client can never switch faults on by accident.
 */

/** What a filter and the request log see of one request. */
export interface RequestInfo {
  readonly method: string;
  /** The URL path as sent (still percent-encoded), e.g. `/b/inbox/o/payloads%2Fa.json`. */
  readonly path: string;
  /** The query parameters (the last value of a repeated one). */
  readonly query: Readonly<Record<string, string>>;
  /** The bucket the request is about, if any. */
  readonly bucket: string | null;
  /** The object name (decoded) for object requests, the `name` parameter for uploads. */
  readonly object: string | null;
  /** What it does: `upload`, `read` (alt=media), `stat` (metadata), `delete`, `list`, or a bucket call. */
  readonly op: RequestOp;
}

export type RequestOp =
  | 'upload'
  | 'read'
  | 'stat'
  | 'delete'
  | 'list'
  | 'bucket.create'
  | 'bucket.get'
  | 'bucket.list'
  | 'bucket.delete'
  | 'unknown';

/** One request as the emulator answered it. */
export interface LoggedRequest extends RequestInfo {
  readonly status: number;
  /** Whether the status was injected by {@link Faults.failNext} (nothing changed). */
  readonly injected: boolean;
  /** Date.now() when the answer was sent. */
  readonly at: number;
}

/** Selects the requests a rule applies to; absent: every request. */
export type RequestFilter = (request: RequestInfo) => boolean;

interface FailRule {
  remaining: number;
  readonly status: number;
  readonly filter: RequestFilter;
}

interface SlowRule {
  readonly ms: number;
  readonly filter: RequestFilter;
}

const ALL: RequestFilter = () => true;

/** Pending faults of one emulator. */
export class Faults {
  private readonly failRules: FailRule[] = [];
  private readonly slowRules: SlowRule[] = [];

  /**
   * The next `count` requests the filter accepts are answered `status`
   * (default 503, in the API's error shape) and change nothing. Rules are
   * taken in the order they were added. Returns a function that drops the
   * rule early.
   */
  failNext(count = 1, status = 503, filter: RequestFilter = ALL): () => void {
    if (!Number.isInteger(count) || count < 1)
      throw new RangeError(`failNext: count must be a positive integer, got ${count}`);
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw new RangeError(`failNext: status must be 4xx or 5xx, got ${status}`);
    const rule: FailRule = { remaining: count, status, filter };
    this.failRules.push(rule);
    return () => remove(this.failRules, rule);
  }

  /**
   * Every request the filter accepts is held `ms` before it is carried out
   * and answered, until the returned function (or {@link clear}) drops the
   * rule. A client that gives up meanwhile does not stop it: the operation
   * still happens, as on the real service.
   */
  slow(ms: number, filter: RequestFilter = ALL): () => void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`slow: ms must be a non-negative number, got ${ms}`);
    const rule: SlowRule = { ms, filter };
    this.slowRules.push(rule);
    return () => remove(this.slowRules, rule);
  }

  /** The injected status for this request, if a rule applies (consumes one use). */
  takeFailure(request: RequestInfo): number | undefined {
    const rule = this.failRules.find((r) => r.filter(request));
    if (rule === undefined) return undefined;
    rule.remaining -= 1;
    if (rule.remaining <= 0) remove(this.failRules, rule);
    return rule.status;
  }

  /** How long to hold this request: the longest delay of the rules that apply. */
  delayFor(request: RequestInfo): number {
    return this.slowRules.reduce((ms, r) => (r.filter(request) ? Math.max(ms, r.ms) : ms), 0);
  }

  /** Drops every pending fault. */
  clear(): void {
    this.failRules.length = 0;
    this.slowRules.length = 0;
  }
}

function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}
