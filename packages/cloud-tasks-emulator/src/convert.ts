import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './backoff';
import type { QueueMsg, RateLimitsMsg, RetryConfigMsg, SecondsNanos } from './messages';
import { invalid } from './names';

/**
 * Queue configuration: proto messages in, validated settings with Cloud
 * Tasks' defaults applied out, and back again. Time conversions live here
 * too because every message uses them.
 */

/** `google.protobuf.Duration`/`Timestamp` → milliseconds; undefined when unset. */
export function toMs(value: SecondsNanos | undefined): number | undefined {
  if (value === undefined) return undefined;
  return Number(value.seconds ?? 0) * 1000 + (value.nanos ?? 0) / 1e6;
}

/** Milliseconds → `google.protobuf.Duration`/`Timestamp`. */
export function fromMs(ms: number): SecondsNanos {
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** A queue's dispatch limits with defaults applied. */
export interface RateSettings {
  readonly maxDispatchesPerSecond: number;
  /** Output only in Cloud Tasks (derived from the rate); reported, not enforced. */
  readonly maxBurstSize: number;
  readonly maxConcurrentDispatches: number;
}

/** Everything configurable on a queue. */
export interface QueueConfig {
  readonly retry: RetryPolicy;
  readonly rate: RateSettings;
  /**
   * Echoed back only; the emulator neither logs to Cloud Logging nor routes App Engine tasks.
   * Undefined: the queue's message left them unset (copied as read, so undefined is allowed).
   */
  readonly samplingRatio?: number | undefined;
  readonly appEngineRoutingOverride?: object | undefined;
}

/** Defaults of a queue created through the API (see `gcloud tasks queues describe`). */
export const DEFAULT_RATE: RateSettings = {
  maxDispatchesPerSecond: 500,
  maxBurstSize: 100,
  maxConcurrentDispatches: 1000,
};

// proto3 cannot tell an unset int32 from 0, and Cloud Tasks treats both as
// "pick the default", so 0 means default throughout.
const orDefault = (value: number | undefined, fallback: number): number =>
  value === undefined || value === 0 ? fallback : value;

function durationOrDefault(value: SecondsNanos | undefined, fallback: number, field: string): number {
  const ms = toMs(value);
  if (ms !== undefined && ms < 0) throw invalid(`${field} must not be negative`);
  return ms === undefined ? fallback : ms;
}

function retryFrom(msg: RetryConfigMsg | undefined): RetryPolicy {
  const m = msg ?? {};
  return {
    maxAttempts: orDefault(m.maxAttempts, DEFAULT_RETRY_POLICY.maxAttempts),
    // Unlike the others, 0 is meaningful here ("no age limit") and is also the default.
    maxRetryDurationMs: durationOrDefault(
      m.maxRetryDuration,
      DEFAULT_RETRY_POLICY.maxRetryDurationMs,
      'maxRetryDuration',
    ),
    minBackoffMs: durationOrDefault(m.minBackoff, DEFAULT_RETRY_POLICY.minBackoffMs, 'minBackoff'),
    maxBackoffMs: durationOrDefault(m.maxBackoff, DEFAULT_RETRY_POLICY.maxBackoffMs, 'maxBackoff'),
    maxDoublings: orDefault(m.maxDoublings, DEFAULT_RETRY_POLICY.maxDoublings),
  };
}

function rateFrom(msg: RateLimitsMsg | undefined): RateSettings {
  const m = msg ?? {};
  return {
    maxDispatchesPerSecond: orDefault(m.maxDispatchesPerSecond, DEFAULT_RATE.maxDispatchesPerSecond),
    maxBurstSize: DEFAULT_RATE.maxBurstSize,
    maxConcurrentDispatches: orDefault(m.maxConcurrentDispatches, DEFAULT_RATE.maxConcurrentDispatches),
  };
}

function validate(config: QueueConfig): QueueConfig {
  const { retry, rate } = config;
  if (retry.maxAttempts < -1) throw invalid('retryConfig.maxAttempts must be >= -1');
  if (retry.maxDoublings < 0) throw invalid('retryConfig.maxDoublings must not be negative');
  if (retry.minBackoffMs > retry.maxBackoffMs) throw invalid('retryConfig.minBackoff must not exceed maxBackoff');
  if (rate.maxDispatchesPerSecond < 0 || rate.maxDispatchesPerSecond > 500) {
    throw invalid('rateLimits.maxDispatchesPerSecond must be in (0, 500]');
  }
  if (rate.maxConcurrentDispatches < 1 || rate.maxConcurrentDispatches > 5000) {
    throw invalid('rateLimits.maxConcurrentDispatches must be in [1, 5000]');
  }
  return config;
}

/** The full configuration described by `msg`, defaults for whatever it leaves unset. */
export function queueConfigFrom(msg: QueueMsg): QueueConfig {
  return validate({
    retry: retryFrom(msg.retryConfig),
    rate: rateFrom(msg.rateLimits),
    samplingRatio: msg.stackdriverLoggingConfig?.samplingRatio,
    appEngineRoutingOverride: msg.appEngineRoutingOverride,
  });
}

const RETRY_KEYS = {
  maxAttempts: 'maxAttempts',
  maxRetryDuration: 'maxRetryDurationMs',
  minBackoff: 'minBackoffMs',
  maxBackoff: 'maxBackoffMs',
  maxDoublings: 'maxDoublings',
} as const satisfies Record<string, keyof RetryPolicy>;

const RATE_KEYS = {
  maxDispatchesPerSecond: 'maxDispatchesPerSecond',
  maxConcurrentDispatches: 'maxConcurrentDispatches',
} as const satisfies Record<string, keyof RateSettings>;

const camel = (path: string): string => path.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function hasKey<T extends object>(table: T, key: string | undefined): key is Extract<keyof T, string> {
  return key !== undefined && Object.prototype.hasOwnProperty.call(table, key);
}

/**
 * UpdateQueue: applies the fields named by `paths` (snake_case or camelCase,
 * e.g. `retry_config` or `retry_config.min_backoff`) from `msg` to `current`.
 * A named field that `msg` leaves unset goes back to its default, as in the
 * real API; an empty mask means "all fields", i.e. a full replacement.
 */
export function updateQueueConfig(current: QueueConfig, msg: QueueMsg, paths: readonly string[]): QueueConfig {
  if (paths.length === 0) return queueConfigFrom(msg);
  const fresh = queueConfigFrom(msg);
  let retry: RetryPolicy = current.retry;
  let rate: RateSettings = current.rate;
  let { samplingRatio, appEngineRoutingOverride } = current;
  for (const raw of paths) {
    const [section, field, ...rest] = camel(raw).split('.');
    if (rest.length > 0) throw invalid(`Unsupported update_mask path "${raw}"`);
    if (section === 'retryConfig' && field === undefined) retry = fresh.retry;
    else if (section === 'retryConfig' && hasKey(RETRY_KEYS, field)) {
      const key = RETRY_KEYS[field];
      retry = { ...retry, [key]: fresh.retry[key] };
    } else if (section === 'rateLimits' && field === undefined) rate = fresh.rate;
    else if (section === 'rateLimits' && hasKey(RATE_KEYS, field)) {
      const key = RATE_KEYS[field];
      rate = { ...rate, [key]: fresh.rate[key] };
    } else if (section === 'stackdriverLoggingConfig') samplingRatio = fresh.samplingRatio;
    else if (section === 'appEngineRoutingOverride') appEngineRoutingOverride = fresh.appEngineRoutingOverride;
    else throw invalid(`Unsupported or output-only update_mask path "${raw}"`);
  }
  return validate({ retry, rate, samplingRatio, appEngineRoutingOverride });
}

/** The `retryConfig`/`rateLimits` part of a Queue message. */
export function queueConfigMsg(
  config: QueueConfig,
): Pick<QueueMsg, 'retryConfig' | 'rateLimits' | 'stackdriverLoggingConfig' | 'appEngineRoutingOverride'> {
  const { retry, rate } = config;
  return {
    retryConfig: {
      maxAttempts: retry.maxAttempts,
      maxRetryDuration: retry.maxRetryDurationMs > 0 ? fromMs(retry.maxRetryDurationMs) : undefined,
      minBackoff: fromMs(retry.minBackoffMs),
      maxBackoff: fromMs(retry.maxBackoffMs),
      maxDoublings: retry.maxDoublings,
    },
    rateLimits: { ...rate },
    stackdriverLoggingConfig: config.samplingRatio === undefined ? undefined : { samplingRatio: config.samplingRatio },
    appEngineRoutingOverride: config.appEngineRoutingOverride,
  };
}
