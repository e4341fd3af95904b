/**
 * The subset of `google.cloud.tasks.v2` message shapes the emulator reads and
 * writes, as @grpc/proto-loader presents them with the options in protos.ts
 * (camelCase, enums as names, int64 as strings, bytes as Buffer, unset fields
 * absent). Every field is optional because proto3 omits unset fields. Fields
 * the emulator fills from state that may be unset also take undefined:
 * protobufjs encodes an undefined field as unset, so for a message written
 * here, undefined and absent are the same message.
 */

/** `google.protobuf.Duration` / `google.protobuf.Timestamp` (int64 seconds arrive as strings). */
export interface SecondsNanos {
  seconds?: string | number;
  nanos?: number;
}

export interface RetryConfigMsg {
  maxAttempts?: number;
  maxRetryDuration?: SecondsNanos | undefined;
  minBackoff?: SecondsNanos;
  maxBackoff?: SecondsNanos;
  maxDoublings?: number;
}

export interface RateLimitsMsg {
  maxDispatchesPerSecond?: number;
  maxBurstSize?: number;
  maxConcurrentDispatches?: number;
}

export type QueueStateName = 'STATE_UNSPECIFIED' | 'RUNNING' | 'PAUSED' | 'DISABLED';

export interface QueueMsg {
  name?: string;
  appEngineRoutingOverride?: object | undefined;
  rateLimits?: RateLimitsMsg;
  retryConfig?: RetryConfigMsg;
  state?: QueueStateName;
  purgeTime?: SecondsNanos | undefined;
  stackdriverLoggingConfig?: { samplingRatio?: number } | undefined;
}

export type HttpMethodName =
  'HTTP_METHOD_UNSPECIFIED' | 'POST' | 'GET' | 'HEAD' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';

export interface OidcTokenMsg {
  serviceAccountEmail?: string;
  audience?: string;
}

export interface OAuthTokenMsg {
  serviceAccountEmail?: string;
  scope?: string;
}

export interface HttpRequestMsg {
  url?: string;
  httpMethod?: HttpMethodName;
  headers?: Record<string, string>;
  body?: Buffer;
  oauthToken?: OAuthTokenMsg;
  oidcToken?: OidcTokenMsg;
}

/** `google.rpc.Status` (details are never filled in by the emulator). */
export interface RpcStatusMsg {
  code?: number;
  message?: string;
}

export interface AttemptMsg {
  scheduleTime?: SecondsNanos;
  dispatchTime?: SecondsNanos;
  responseTime?: SecondsNanos | undefined;
  responseStatus?: RpcStatusMsg | undefined;
}

export type TaskViewName = 'VIEW_UNSPECIFIED' | 'BASIC' | 'FULL';

export interface TaskMsg {
  name?: string;
  appEngineHttpRequest?: object;
  httpRequest?: HttpRequestMsg;
  scheduleTime?: SecondsNanos;
  createTime?: SecondsNanos;
  dispatchDeadline?: SecondsNanos;
  dispatchCount?: number;
  responseCount?: number;
  firstAttempt?: AttemptMsg | undefined;
  lastAttempt?: AttemptMsg | undefined;
  view?: TaskViewName;
}

export interface NameRequest {
  name?: string;
}

export interface ListRequest {
  parent?: string;
  filter?: string;
  pageSize?: number;
  pageToken?: string;
  responseView?: TaskViewName;
}

export interface CreateQueueRequest {
  parent?: string;
  queue?: QueueMsg;
}

export interface UpdateQueueRequest {
  queue?: QueueMsg;
  updateMask?: { paths?: string[] };
}

export interface CreateTaskRequest {
  parent?: string;
  task?: TaskMsg;
  responseView?: TaskViewName;
}

export interface TaskNameRequest {
  name?: string;
  responseView?: TaskViewName;
}

/**
 * Treats a decoded request as message type `T`. proto-loader has already
 * decoded it against the schema, so field types can be trusted; only the
 * outer shape is checked.
 */
export function asMessage<T extends object>(value: unknown): T {
  if (typeof value !== 'object' || value === null) throw new TypeError('request is not a message object');
  return value as T;
}
