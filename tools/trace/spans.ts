/**
 * Reads the spans the functions wrote with INBOX_TRACE_EXPORTER=file:<path>
 * (the local stack's `traceDir`: one `spans-<target>.jsonl` per function) and
 * splits one message's publish → last-step latency by hop: the chain of spans
 * from its receipt to the run of the job that ended last, cut into
 * contiguous segments (a span's own time, and the wait before the next hop's
 * span starts: a Cloud Tasks queue, a scheduler tick).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SpanLine } from '../../functions/src/trace/file-exporter';

export type { SpanLine };

/** Every span line of the `spans-*.jsonl` files in `dir` (a half-written last line is skipped). */
export function readSpans(dir: string): SpanLine[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^spans-.*\.jsonl$/.test(f))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
    .flatMap((line) => {
      if (line.trim() === '') return [];
      try {
        return [JSON.parse(line) as SpanLine];
      } catch {
        return [];
      }
    });
}

/** The spans of one trace. */
export const ofTrace = (spans: readonly SpanLine[], traceId: string): SpanLine[] =>
  spans.filter((s) => s.traceId === traceId);

/** One segment of a message's latency. */
export interface Hop {
  /** The span's name (`receipt`, `relay document`, `runJob`…), or `wait → <next>` for the time between two hops. */
  readonly name: string;
  readonly service: string;
  readonly ms: number;
}

/** The chain from the trace's first span to `last`, following parent ids (oldest first); spans whose parent is outside the trace end it. */
function chainTo(spans: readonly SpanLine[], last: SpanLine): SpanLine[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: SpanLine[] = [];
  for (
    let s: SpanLine | undefined = last;
    s !== undefined && !chain.includes(s);
    s = s.parentSpanId === null ? undefined : byId.get(s.parentSpanId)
  )
    chain.unshift(s);
  return chain;
}

/**
 * One message's latency by hop: from `publishedAtMs` (or its first span's
 * start) to the end of the span `isEnd` picks (default: the span that ends
 * last), along the parent chain. The hops add up to the whole.
 */
export function hopsOf(
  trace: readonly SpanLine[],
  options: { readonly publishedAtMs?: number; readonly isEnd?: (s: SpanLine) => boolean } = {},
): { readonly totalMs: number; readonly hops: Hop[] } | null {
  const ends = trace.filter(options.isEnd ?? (() => true)).sort((a, b) => b.endMs - a.endMs);
  const last = ends[0];
  if (last === undefined) return null;
  const chain = chainTo(trace, last);
  const first = chain[0] ?? last;
  const t0 = options.publishedAtMs ?? first.startMs;
  const hops: Hop[] = [];
  if (first.startMs > t0) hops.push({ name: `wait → ${first.name}`, service: first.service, ms: first.startMs - t0 });
  chain.forEach((span, i) => {
    const next = chain[i + 1];
    if (next === undefined) {
      hops.push({ name: span.name, service: span.service, ms: span.endMs - span.startMs });
      return;
    }
    // A span's own time runs until the next hop starts, or until it ends when the next one waits in a queue.
    const own = Math.min(span.endMs, next.startMs) - span.startMs;
    hops.push({ name: span.name, service: span.service, ms: Math.max(0, own) });
    const gap = next.startMs - Math.max(span.startMs, Math.min(span.endMs, next.startMs));
    if (gap > 0) hops.push({ name: `wait → ${next.name}`, service: next.service, ms: gap });
  });
  return { totalMs: last.endMs - t0, hops };
}

/** Every span's parent is in the trace, but the roots' (whose parent is the publisher's, outside): the ids of spans whose parent is missing. */
export function orphans(trace: readonly SpanLine[]): SpanLine[] {
  const ids = new Set(trace.map((s) => s.spanId));
  return trace.filter((s) => s.parentSpanId !== null && !ids.has(s.parentSpanId));
}
