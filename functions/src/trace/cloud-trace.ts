import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type * as CloudTrace from '@google-cloud/opentelemetry-cloud-trace-exporter';

/**
 * Google's Cloud Trace exporter, created on the first export: the Google
 * client it brings (gRPC, google-auth-library) is loaded after the first
 * request has been answered, never at start-up (test/e2e/lazy-start.test.ts).
 */
export function lazyCloudTraceExporter(projectId: string): SpanExporter {
  let exporter: SpanExporter | undefined;
  const get = (): SpanExporter => {
    exporter ??= new (require('@google-cloud/opentelemetry-cloud-trace-exporter') as typeof CloudTrace).TraceExporter({
      projectId,
    });
    return exporter;
  };
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
      get().export(spans, done);
    },
    shutdown: () => (exporter === undefined ? Promise.resolve() : exporter.shutdown()),
    forceFlush: () => (exporter?.forceFlush === undefined ? Promise.resolve() : exporter.forceFlush()),
  };
}
