import { validateHeaderName, validateHeaderValue } from 'node:http';
import { fromMs, toMs } from './convert';
import type { AttemptMsg, HttpMethodName, HttpRequestMsg, TaskMsg, TaskViewName } from './messages';
import { invalid } from './names';

/** What a task's HTTP request is made of, validated at CreateTask. */
export interface HttpTarget {
  readonly url: string;
  readonly method: Exclude<HttpMethodName, 'HTTP_METHOD_UNSPECIFIED'>;
  /** As given by the caller; dispatch drops or replaces the reserved ones. */
  readonly headers: Readonly<Record<string, string>>;
  /** Undefined: no body (none given, or an empty one). */
  readonly body?: Buffer | undefined;
  /**
   * The token the caller asked Cloud Tasks to attach. An OIDC token is signed
   * by the emulator's own key (oidc.ts) at each attempt; an OAuth access
   * token (for Google APIs) cannot be minted locally, so none is sent.
   */
  readonly auth?:
    | { readonly kind: 'oidc'; readonly serviceAccountEmail: string; readonly audience: string }
    | { readonly kind: 'oauth'; readonly serviceAccountEmail: string; readonly scope: string }
    | undefined;
}

/** One dispatch attempt as Task.first_attempt / last_attempt report it. */
export interface AttemptRecord {
  readonly scheduleMs: number;
  readonly dispatchMs: number;
  responseMs?: number;
  /** gRPC-style status of the outcome (OK for 2xx, UNAVAILABLE for 503, ...). */
  status?: { readonly code: number; readonly message: string };
}

/** A live task. Mutated in place by the dispatcher. */
export interface TaskRecord {
  readonly name: string;
  readonly queue: string;
  readonly http: HttpTarget;
  readonly createMs: number;
  readonly deadlineMs: number;
  scheduleMs: number;
  /** Attempts dispatched, including one in flight. */
  dispatchCount: number;
  /** Attempts that got any HTTP response. */
  responseCount: number;
  /** Responses that were not 5xx: Cloud Tasks' X-CloudTasks-TaskExecutionCount. */
  executionCount: number;
  previousResponse?: number;
  firstAttempt?: AttemptRecord;
  lastAttempt?: AttemptRecord;
  /** Attempts currently waiting for the target (more than 1 only through RunTask). */
  inFlight: number;
}

const DEFAULT_DEADLINE_MS = 10 * 60_000;
// HttpRequest limits from task.proto / target.proto and the Cloud Tasks quotas page.
const MIN_DEADLINE_MS = 15_000;
const MAX_DEADLINE_MS = 30 * 60_000;
const MAX_URL_LENGTH = 2083;
const MAX_TASK_BYTES = 100 * 1024;
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);
/**
 * How far ahead a task may be scheduled: Cloud Tasks answers a later
 * schedule_time INVALID_ARGUMENT ("... is too far in the future. Schedule
 * time must be no more than 720h in the future."), the 30 days of its quotas
 * page. Code that schedules far ahead must meet the refusal here first.
 */
export const MAX_SCHEDULE_AHEAD_MS = 720 * 60 * 60_000;

function httpTargetFrom(req: HttpRequestMsg): HttpTarget {
  const url = req.url ?? '';
  if (!/^https?:\/\//i.test(url))
    throw invalid(`HttpRequest.url must begin with "http://" or "https://", got "${url}"`);
  if (url.length > MAX_URL_LENGTH) throw invalid(`HttpRequest.url is longer than ${MAX_URL_LENGTH} characters`);
  try {
    new URL(url);
  } catch {
    throw invalid(`HttpRequest.url is not a valid URL: "${url}"`);
  }
  const method = req.httpMethod === undefined || req.httpMethod === 'HTTP_METHOD_UNSPECIFIED' ? 'POST' : req.httpMethod;
  const body = req.body !== undefined && req.body.length > 0 ? req.body : undefined;
  if (body !== undefined && !BODY_METHODS.has(method)) {
    throw invalid(`A request body is only allowed with POST, PUT or PATCH, not ${method}`);
  }
  const headers = { ...(req.headers ?? {}) };
  for (const [name, value] of Object.entries(headers)) {
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      throw invalid(`Invalid HTTP header "${name}"`);
    }
  }
  let auth: HttpTarget['auth'];
  if (req.oidcToken !== undefined) {
    // Cloud Tasks: "If not specified, the URI specified in target will be used."
    const o = req.oidcToken;
    // Cloud Tasks needs the account to sign as; a token without one would carry no email to check.
    if (o.serviceAccountEmail === undefined || o.serviceAccountEmail === '')
      throw invalid('HttpRequest.oidcToken.serviceAccountEmail is required');
    auth = { kind: 'oidc', serviceAccountEmail: o.serviceAccountEmail, audience: o.audience || url };
  } else if (req.oauthToken !== undefined) {
    const o = req.oauthToken;
    auth = {
      kind: 'oauth',
      serviceAccountEmail: o.serviceAccountEmail ?? '',
      scope: o.scope || 'https://www.googleapis.com/auth/cloud-platform',
    };
  }
  return { url, method, headers, body, auth };
}

/** Validates a CreateTask payload and builds the new task's record. */
export function newTaskRecord(name: string, queue: string, msg: TaskMsg, nowMs: number): TaskRecord {
  if (msg.appEngineHttpRequest !== undefined) {
    throw invalid('App Engine tasks (appEngineHttpRequest) are not supported by the emulator; use httpRequest');
  }
  if (msg.httpRequest === undefined) throw invalid('Task.httpRequest is required');
  const http = httpTargetFrom(msg.httpRequest);
  const headerBytes = Object.entries(http.headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
  if ((http.body?.length ?? 0) + headerBytes + http.url.length > MAX_TASK_BYTES) {
    throw invalid('Task size exceeds the maximum of 100KB');
  }
  const deadlineMs = toMs(msg.dispatchDeadline) ?? DEFAULT_DEADLINE_MS;
  if (deadlineMs < MIN_DEADLINE_MS || deadlineMs > MAX_DEADLINE_MS) {
    throw invalid('Task.dispatchDeadline must be between 15 seconds and 30 minutes for HTTP tasks');
  }
  // "If schedule_time is not set or is in the past then Cloud Tasks will set it to the current time."
  const requestedMs = toMs(msg.scheduleTime) ?? 0;
  if (requestedMs > nowMs + MAX_SCHEDULE_AHEAD_MS) {
    throw invalid(
      `The Task.scheduleTime, ${new Date(requestedMs).toISOString()}, is too far in the future. Schedule time must be no more than 720h in the future.`,
    );
  }
  const scheduleMs = Math.max(nowMs, requestedMs);
  return {
    name,
    queue,
    http,
    createMs: nowMs,
    deadlineMs,
    scheduleMs,
    dispatchCount: 0,
    responseCount: 0,
    executionCount: 0,
    inFlight: 0,
  };
}

function attemptMsg(a: AttemptRecord | undefined, full: boolean): AttemptMsg | undefined {
  if (a === undefined) return undefined;
  // "first_attempt: Only dispatch_time will be set."
  if (!full) return { dispatchTime: fromMs(a.dispatchMs) };
  return {
    scheduleTime: fromMs(a.scheduleMs),
    dispatchTime: fromMs(a.dispatchMs),
    responseTime: a.responseMs === undefined ? undefined : fromMs(a.responseMs),
    responseStatus: a.status === undefined ? undefined : { ...a.status },
  };
}

/**
 * The Task message for `t`. The BASIC view (the default) leaves out the
 * request body, as the real API does for HTTP tasks too (see
 * googleapis/nodejs-tasks#525); FULL includes it.
 */
export function taskMsg(t: TaskRecord, view: TaskViewName | undefined): TaskMsg {
  const full = view === 'FULL';
  const { http } = t;
  const httpRequest: HttpRequestMsg = { url: http.url, httpMethod: http.method, headers: { ...http.headers } };
  if (full && http.body !== undefined) httpRequest.body = http.body;
  if (http.auth?.kind === 'oidc') {
    httpRequest.oidcToken = { serviceAccountEmail: http.auth.serviceAccountEmail, audience: http.auth.audience };
  } else if (http.auth?.kind === 'oauth') {
    httpRequest.oauthToken = { serviceAccountEmail: http.auth.serviceAccountEmail, scope: http.auth.scope };
  }
  return {
    name: t.name,
    httpRequest,
    scheduleTime: fromMs(t.scheduleMs),
    // "create_time will be truncated to the nearest second."
    createTime: fromMs(Math.floor(t.createMs / 1000) * 1000),
    dispatchDeadline: fromMs(t.deadlineMs),
    dispatchCount: t.dispatchCount,
    responseCount: t.responseCount,
    firstAttempt: attemptMsg(t.firstAttempt, false),
    lastAttempt: attemptMsg(t.lastAttempt, true),
    view: full ? 'FULL' : 'BASIC',
  };
}
