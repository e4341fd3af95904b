import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type ExportResult, ExportResultCode, hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** One span as a JSON line of `INBOX_TRACE_EXPORTER=file:<path>` (tools/trace/ reads them). */
export interface SpanLine {
  readonly name: string;
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** Null for a root span. */
  readonly parentSpanId: string | null;
  /** Epoch milliseconds (fractional). */
  readonly startMs: number;
  readonly endMs: number;
  /** 0 unset, 1 ok, 2 error (OpenTelemetry's SpanStatusCode). */
  readonly status: number;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/** The line of one ended span. */
export function spanLine(span: ReadableSpan): SpanLine {
  return {
    name: span.name,
    service: String(span.resource.attributes['service.name'] ?? ''),
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    startMs: hrTimeToMilliseconds(span.startTime),
    endMs: hrTimeToMilliseconds(span.endTime),
    status: span.status.code,
    attributes: { ...span.attributes },
  };
}

/**
 * Appends each span as a JSON line to `path` (created with its directory).
 * Synchronous appends of whole lines: several function processes can share
 * one file, and a reader never sees half a line of one that ended.
 */
export function fileSpanExporter(path: string): SpanExporter {
  mkdirSync(dirname(path), { recursive: true });
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
      try {
        appendFileSync(path, spans.map((s) => `${JSON.stringify(spanLine(s))}\n`).join(''));
        done({ code: ExportResultCode.SUCCESS });
      } catch (err) {
        done({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) });
      }
    },
    shutdown: () => Promise.resolve(),
  };
}
