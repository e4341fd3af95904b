/**
 * The error vocabulary of the project. Every failure is either
 * - technical: the same call may succeed later (retry, answer 5xx, back off), or
 * - a rejection: retrying changes nothing (park with a reason, answer 4xx).
 * {@link classifyFailure} is the one place that decides which.
 */

/**
 * gRPC status codes that a retry can heal. Firestore surfaces these on
 * outages, overload, contention and timeouts. Everything else (INVALID_ARGUMENT,
 * PERMISSION_DENIED, ...) is a defect or misconfiguration: still never acked,
 * but logged as such.
 */
export const RETRYABLE_GRPC_CODES: ReadonlyMap<number, string> = new Map([
  [1, 'CANCELLED'],
  [2, 'UNKNOWN'],
  [4, 'DEADLINE_EXCEEDED'],
  [8, 'RESOURCE_EXHAUSTED'],
  [10, 'ABORTED'],
  [13, 'INTERNAL'],
  [14, 'UNAVAILABLE'],
]);

/** gRPC ALREADY_EXISTS: what Firestore's create() reports for an existing document. */
export const GRPC_ALREADY_EXISTS = 6;
/** gRPC FAILED_PRECONDITION. */
export const GRPC_FAILED_PRECONDITION = 9;
/** gRPC ABORTED: retryable (contention, or a write that must be tried again). */
export const GRPC_ABORTED = 10;

/**
 * A write refused because a document it must not find exists: ALREADY_EXISTS
 * for create() and for a delete that asserts absence (`{ exists: false }`;
 * the emulator answers ALREADY_EXISTS for both). FAILED_PRECONDITION is what
 * the API calls a failed precondition elsewhere, so it is taken the same way:
 * callers read what exists before they conclude anything, so a refusal for
 * another reason is never taken for a duplicate.
 */
export function isRefusedAsExisting(err: unknown): boolean {
  const code = errorCode(err);
  return code === GRPC_ALREADY_EXISTS || code === GRPC_FAILED_PRECONDITION;
}

/** Node socket errors that mean "the backend is not reachable right now". */
const RETRYABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);

/** A deadline of ours ran out before the backend answered. Always retryable. */
export class DeadlineExceededError extends Error {
  override readonly name = 'DeadlineExceededError';
  constructor(
    what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what} did not finish within ${timeoutMs} ms`);
  }
}

/**
 * A failure its thrower declares permanent: no retry can heal it (BullMQ's
 * UnrecoverableError, Temporal's non-retryable ApplicationFailure). A job
 * handler throws it (re-exported as `PermanentJobError` from
 * jobs/handlers.ts) so that runJob ends the job FAILED at once, the
 * instance INCIDENT / JOB_FAILED with this message, instead of spending
 * every retry on it. Recognised directly or as the `cause` of what is
 * thrown.
 */
export class PermanentFailureError extends Error {
  override readonly name: string = 'PermanentFailureError';
}

/**
 * A business error a step throws by its BPMN error code, for the model to
 * handle: the nearest error boundary event that catches `code` (on the
 * task, then on each enclosing subprocess) takes the token. Not a failure
 * of the system: nothing is retried; uncaught, it is an UNCAUGHT_ERROR
 * incident naming the code. A step throws it from an async handler (runJob)
 * or a synchronous one (inside the transaction).
 *
 * @example throw new BpmnError('CARD_DECLINED', `card of order ${id} declined`);
 */
export class BpmnError extends Error {
  override readonly name: string = 'BpmnError';
  constructor(
    /** The errorCode of the bpmn:error a boundary event catches. */
    readonly code: string,
    message: string = `BPMN error ${code}`,
  ) {
    super(message);
  }
}

/**
 * A step of the engine failed for a reason a retry on the same state does
 * not change: its pure transition threw (a token at a node its model does
 * not have, a stored state the engine cannot read), or the step would
 * apply more changes than one transaction may. Nothing of it was written.
 * Not technical, so never retried without end: the relay parks the message
 * after a few attempts (a deploy under way may still heal it), runJob ends
 * the job FAILED at once, fireTimer records an incident; each with this
 * message.
 */
export class StepFailedError extends Error {
  override readonly name = 'StepFailedError';
}

/**
 * Runs a pure computation of a step: what it throws is a
 * {@link StepFailedError} naming `what` (a Firestore or deadline error
 * cannot come from it: it does no I/O).
 */
export function computeStep<T>(what: string, compute: () => T): T {
  try {
    return compute();
  } catch (err) {
    if (err instanceof StepFailedError) throw err;
    throw new StepFailedError(`${what}: ${errorMessage(err)}`, { cause: err });
  }
}

/**
 * HTTP statuses a retry can heal: request timeout, rate limit, server errors.
 * The same list as the Cloud Storage client's own retry decision.
 */
export const RETRYABLE_HTTP_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/**
 * A call to an HTTP JSON API (Cloud Storage) failed. Those clients put the
 * HTTP status in `code`, where {@link classifyFailure} expects a gRPC code
 * (503 is no gRPC code at all, 4 would be read as DEADLINE_EXCEEDED), so an
 * adapter wraps their errors in this: `status` null means no answer at all
 * (timeout, refused or reset connection), which a retry can heal like a
 * retryable status. Every other status (403 permissions, 404 bucket, 400) is
 * a deployment or code problem: still never an answer to the sender.
 */
export class HttpApiError extends Error {
  override readonly name = 'HttpApiError';
  constructor(
    message: string,
    readonly status: number | null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export type FailureClass =
  /** Retry heals it: answer 503, back off. */
  | { readonly kind: 'retryable'; readonly code: string }
  /** Declared permanent by its thrower ({@link PermanentFailureError}): end it now, no retry. */
  | { readonly kind: 'permanent'; readonly code: 'PERMANENT' }
  /** A step of the engine that cannot be applied ({@link StepFailedError}): bounded attempts, then an incident or a parked document. */
  | { readonly kind: 'step'; readonly code: 'STEP_FAILED' }
  /** Unexpected: a defect or misconfiguration. Still never acked (answer 500), logged as ERROR. */
  | { readonly kind: 'unexpected'; readonly code: string };

/** The {@link PermanentFailureError} an error is or was caused by (a few levels of `cause`), or null. */
function permanentIn(err: unknown): PermanentFailureError | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PermanentFailureError) return current;
    current = current.cause;
  }
  return null;
}

/** Reads the numeric gRPC code or string socket code an error carries, if any. */
/** The text of anything thrown: an Error's message, anything else as a string. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function errorCode(err: unknown): number | string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' || typeof code === 'string' ? code : undefined;
}

/** Decides whether a thrown error is worth a retry. Pure. */
export function classifyFailure(err: unknown): FailureClass {
  if (err instanceof DeadlineExceededError) return { kind: 'retryable', code: 'DEADLINE_EXCEEDED' };
  if (err instanceof StepFailedError) return { kind: 'step', code: 'STEP_FAILED' };
  if (permanentIn(err) !== null) return { kind: 'permanent', code: 'PERMANENT' };
  if (err instanceof HttpApiError) {
    if (err.status === null) return { kind: 'retryable', code: 'UNAVAILABLE' };
    return RETRYABLE_HTTP_STATUSES.has(err.status)
      ? { kind: 'retryable', code: `HTTP_${err.status}` }
      : { kind: 'unexpected', code: `HTTP_${err.status}` };
  }
  const code = errorCode(err);
  if (typeof code === 'number') {
    const name = RETRYABLE_GRPC_CODES.get(code);
    return name === undefined ? { kind: 'unexpected', code: `GRPC_${code}` } : { kind: 'retryable', code: name };
  }
  if (typeof code === 'string' && RETRYABLE_SOCKET_CODES.has(code)) return { kind: 'retryable', code };
  // The gRPC client reports a refused connection as a message on a code-less error in some paths.
  const message = errorMessage(err);
  if (/ECONNREFUSED|Connection dropped|No connection established|socket hang up/i.test(message)) {
    return { kind: 'retryable', code: 'UNAVAILABLE' };
  }
  return { kind: 'unexpected', code: typeof code === 'string' ? code : 'UNKNOWN' };
}

/** Longest error text kept on a document (a job's lastError, an incident's message). */
export const MAX_STORED_ERROR_CHARS = 2_000;

/**
 * Error text Firestore can store: clipped to `max` characters, and every lone
 * surrogate (a half pair, also one the clip split) replaced by U+FFFD. A
 * message is often not ours (a handler's, a library's quoting its input):
 * stored as is, a short one with a lone surrogate fails every write (the
 * client sends it as invalid UTF-8) and a huge one exceeds the 1 MiB document,
 * so the failure could never be recorded.
 */
export function storableText(text: string, max = MAX_STORED_ERROR_CHARS): string {
  const clipped = text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
  return clipped.replace(/\p{Cs}/gu, '\uFFFD');
}

/** Runs `work` but gives up after `timeoutMs`; the work itself may still finish later. */
export async function withDeadline<T>(what: string, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, timeoutMs)), timeoutMs);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
