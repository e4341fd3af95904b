/**
 * The provider set-up, once per process (index.ts): the context manager
 * (always, so the active span follows async calls and logs see it), and with
 * an exporter the SDK's tracer provider with a parent-based ratio sampler.
 * Loaded only where a function is served: the SDK stays out of the CLI and
 * of tests that build handlers themselves.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type * as Sdk from '@opentelemetry/sdk-trace-base';
import type * as Resources from '@opentelemetry/resources';
import type { TraceConfig } from '../config';
import { setLogProject } from './trace';

/** What {@link setupTracing} set up: `flush` exports what is pending (tests, a bench, SIGTERM). */
export interface Tracing {
  readonly flush: () => Promise<void>;
}

let installed: Tracing | undefined;

/**
 * Batch export for Cloud Trace. Cloud Run answers before spans can be sent,
 * and sending them before every answer would add a Cloud Trace round trip to
 * each request's latency; a short delay instead sends them within half a second,
 * while the instance still has CPU from the request in most cases. What can be
 * lost: spans of an instance shut down before its next export (the SIGTERM
 * hook tries one last flush).
 */
const CLOUD_TRACE_BATCH = {
  scheduledDelayMillis: 500,
  maxExportBatchSize: 256,
  maxQueueSize: 4096,
  exportTimeoutMillis: 10_000,
} as const;

/**
 * INBOX_TRACE_SAMPLE_RATIO as a sampler: a new trace (no parent) is recorded
 * with probability `ratio` (by its trace id, so every hop of it decides the
 * same); a parent's decision is always followed, sampled or not.
 */
export function traceSampler(ratio: number): Sdk.Sampler {
  const sdk = require('@opentelemetry/sdk-trace-base') as typeof Sdk;
  return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) });
}

/** Sets up tracing for the function `serviceName` of `projectId`; a second call returns the first set-up. */
export function setupTracing(config: TraceConfig, projectId: string, serviceName: string): Tracing {
  if (installed !== undefined) return installed;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  setLogProject(projectId);
  if (config.exporter.kind === 'none') {
    installed = { flush: () => Promise.resolve() };
    return installed;
  }
  const sdk = require('@opentelemetry/sdk-trace-base') as typeof Sdk;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof Resources;
  const processor =
    config.exporter.kind === 'file'
      ? // One line per span, written as the span ends: a local bench or test reads it without waiting for a flush.
        new sdk.SimpleSpanProcessor(
          (require('./file-exporter') as typeof import('./file-exporter')).fileSpanExporter(config.exporter.path),
        )
      : new sdk.BatchSpanProcessor(
          (require('./cloud-trace') as typeof import('./cloud-trace')).lazyCloudTraceExporter(projectId),
          CLOUD_TRACE_BATCH,
        );
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'cloud.account.id': projectId }),
    sampler: traceSampler(config.sampleRatio),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  installed = { flush: () => provider.forceFlush() };
  const flush = installed.flush;
  process.once('SIGTERM', () => void flush().catch(() => undefined));
  return installed;
}
