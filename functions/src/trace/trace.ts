/**
 * W3C trace context through the inbox: one span per hop (receipt, the
 * fast-path task, the relay's transaction, the correlation, each job task and
 * its run), all of one trace from the publisher to the process's last step. This module
 * holds what the handlers call: {@link withSpan} and the extract/inject
 * helpers. Which spans are recorded and where they go is setup.ts's business;
 * without it (a test building a handler, the CLI) every call here is the
 * OpenTelemetry API's no-op and costs next to nothing.
 */
import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  trace,
  type TextMapGetter,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** Where a span hangs: an extracted context (a message's, a request's, a document's), or whatever span is active now. */
export type SpanParent = Context | 'active';

/** The tracer's name in every exported span (instrumentation scope). */
export const TRACER_NAME = 'transactional-inbox';

/** The propagator itself, not the global one: extract/inject work the same with or without setup.ts. */
const W3C = new W3CTraceContextPropagator();

/** A flat carrier (headers, attributes) read under a prefix: the Pub/Sub client writes `googclient_traceparent`. */
function prefixedGetter(prefix: string): TextMapGetter<Readonly<Record<string, string | undefined>>> {
  return {
    keys: (carrier) =>
      Object.keys(carrier)
        .filter((k) => k.startsWith(prefix))
        .map((k) => k.slice(prefix.length)),
    get: (carrier, key) => carrier[`${prefix}${key}`],
  };
}

/** Attribute prefix of @google-cloud/pubsub's OpenTelemetry propagation (telemetry-tracing.js, PubsubMessageGetSet.keyPrefix). */
export const PUBSUB_ATTRIBUTE_PREFIX = 'googclient_';

/** The context in a traceparent (and tracestate) value; ROOT_CONTEXT when absent or malformed (the propagator ignores a bad one). */
export function fromTraceparent(traceparent: string | null | undefined, tracestate?: string | null): Context {
  if (typeof traceparent !== 'string' || traceparent === '') return ROOT_CONTEXT;
  const carrier: Record<string, string> = { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
  return W3C.extract(ROOT_CONTEXT, carrier, prefixedGetter(''));
}

/**
 * The publisher's context from a Pub/Sub message's attributes: the client
 * library's `googclient_traceparent` first, else a plain `traceparent`;
 * ROOT_CONTEXT (a new trace) when neither is a valid one.
 */
export function fromAttributes(attributes: Readonly<Record<string, string>>): Context {
  for (const prefix of [PUBSUB_ATTRIBUTE_PREFIX, '']) {
    const extracted = W3C.extract(ROOT_CONTEXT, attributes, prefixedGetter(prefix));
    if (trace.getSpanContext(extracted) !== undefined) return extracted;
  }
  return ROOT_CONTEXT;
}

/** The caller's context from an HTTP request's headers (`traceparent`, `tracestate`; Node lowercases their names). */
export function fromHeaders(header: (name: string) => string | undefined): Context {
  return fromTraceparent(header('traceparent'), header('tracestate'));
}

/** The active span's context as W3C headers (`traceparent`, and `tracestate` if any); empty without a valid span. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  W3C.inject(ctx, carrier, {
    set: (_c, k, v) => {
      carrier[k] = v;
    },
  });
  return carrier;
}

/** The active span's `traceparent`, null without one: what the receiver stores on the inbox document. */
export function currentTraceparent(): string | null {
  return traceHeaders().traceparent ?? null;
}

/**
 * Runs `fn` in a new span named `name`, child of `parent`, and ends it when
 * `fn` settles (a throw is recorded on the span and rethrown unchanged).
 * Inside `fn` the span is the active one: log lines carry it and the Cloud
 * Tasks created there carry it as their `traceparent` header.
 */
export function withSpan<T>(
  name: string,
  parent: SpanParent,
  fn: (span: Span) => Promise<T>,
  attributes: Attributes = {},
): Promise<T> {
  const ctx = parent === 'active' ? context.active() : parent;
  // The global provider is read per call: setup.ts sets it after this module is loaded.
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, ctx, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The project the log fields name (`projects/<project>/traces/<id>`); set by setup.ts, null: no trace fields in logs. */
let logProject: string | null = null;

/** Sets the project of the log lines' trace field (setup.ts, from GOOGLE_CLOUD_PROJECT). */
export function setLogProject(projectId: string | null): void {
  logProject = projectId;
}

/**
 * The fields Cloud Logging reads to tie an entry to its trace and span (the
 * Logs Explorer's "show trace"): empty when no valid span is active or no
 * project is set.
 */
export function traceLogFields(): Record<string, string | boolean> {
  if (logProject === null) return {};
  const sc = trace.getSpanContext(context.active());
  if (sc === undefined || !trace.isSpanContextValid(sc)) return {};
  return {
    'logging.googleapis.com/trace': `projects/${logProject}/traces/${sc.traceId}`,
    'logging.googleapis.com/spanId': sc.spanId,
    // TraceFlags.SAMPLED is bit 0.
    'logging.googleapis.com/trace_sampled': (sc.traceFlags & 1) === 1,
  };
}

/** Adds attributes to the active span, if one is recording (what a handler learns after its span started, e.g. the job's activity). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}
