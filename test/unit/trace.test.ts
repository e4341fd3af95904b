import { context, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { ConfigError, loadConfig } from '../../functions/src/config';
import { createLogger } from '../../functions/src/log';
import { traceSampler } from '../../functions/src/trace/setup';
import {
  fromAttributes,
  fromHeaders,
  fromTraceparent,
  setLogProject,
  traceHeaders,
  traceLogFields,
} from '../../functions/src/trace/trace';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const SAMPLED = `00-${TRACE}-${SPAN}-01`;
const traceIdOf = (ctx: typeof ROOT_CONTEXT): string | undefined => trace.getSpanContext(ctx)?.traceId;

describe('extract', () => {
  test("a Pub/Sub client's googclient_traceparent attribute", () => {
    const ctx = fromAttributes({ eventType: 'X', googclient_traceparent: SAMPLED });
    expect(trace.getSpanContext(ctx)).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
  });

  test("a plain traceparent attribute, and the client library's first when both are there", () => {
    expect(traceIdOf(fromAttributes({ traceparent: SAMPLED }))).toBe(TRACE);
    const other = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`;
    expect(traceIdOf(fromAttributes({ traceparent: other, googclient_traceparent: SAMPLED }))).toBe(TRACE);
  });

  test('none, or a malformed one, is no parent: the receiver starts a new trace', () => {
    expect(trace.getSpanContext(fromAttributes({ eventType: 'X' }))).toBeUndefined();
    for (const bad of [
      '',
      'nonsense',
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE}-${SPAN}`,
    ]) {
      expect(trace.getSpanContext(fromAttributes({ traceparent: bad }))).toBeUndefined();
      expect(trace.getSpanContext(fromTraceparent(bad))).toBeUndefined();
    }
    // A bad client attribute does not hide a good plain one.
    expect(traceIdOf(fromAttributes({ googclient_traceparent: 'nonsense', traceparent: SAMPLED }))).toBe(TRACE);
  });

  test('request headers, with tracestate', () => {
    const headers: Record<string, string> = { traceparent: SAMPLED, tracestate: 'vendor=1' };
    const ctx = fromHeaders((h) => headers[h]);
    expect(trace.getSpanContext(ctx)?.traceState?.get('vendor')).toBe('1');
    expect(trace.getSpanContext(fromHeaders(() => undefined))).toBeUndefined();
  });
});

describe('inject', () => {
  test('what is extracted is injected unchanged; nothing without a span', () => {
    expect(traceHeaders(fromTraceparent(SAMPLED, 'vendor=1'))).toEqual({
      traceparent: SAMPLED,
      tracestate: 'vendor=1',
    });
    expect(traceHeaders(fromTraceparent(`00-${TRACE}-${SPAN}-00`))).toEqual({ traceparent: `00-${TRACE}-${SPAN}-00` });
    expect(traceHeaders(ROOT_CONTEXT)).toEqual({});
  });
});

describe('log fields', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    setLogProject('proj-1');
  });
  afterAll(() => {
    context.disable();
    setLogProject(null);
  });

  test('a line written in a span names its trace and span as Cloud Logging reads them; none outside', () => {
    const lines: string[] = [];
    const log = createLogger((l) => lines.push(l));
    context.with(fromTraceparent(SAMPLED), () => log.info('inside'));
    log.info('outside');
    context.with(fromTraceparent(`00-${TRACE}-${SPAN}-00`), () => log.info('unsampled'));
    const [inside, outside, unsampled] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({
      message: 'inside',
      'logging.googleapis.com/trace': `projects/proj-1/traces/${TRACE}`,
      'logging.googleapis.com/spanId': SPAN,
      'logging.googleapis.com/trace_sampled': true,
    });
    expect(Object.keys(outside ?? {}).filter((k) => k.startsWith('logging.googleapis.com/'))).toEqual([]);
    expect(unsampled).toMatchObject({ 'logging.googleapis.com/trace_sampled': false });
    expect(context.with(fromTraceparent(SAMPLED), traceLogFields)['logging.googleapis.com/spanId']).toBe(SPAN);
  });
});

describe('sampling', () => {
  const decide = (ratio: number, parent: typeof ROOT_CONTEXT, traceId: string): SamplingDecision =>
    traceSampler(ratio).shouldSample(parent, traceId, 'receipt', SpanKind.INTERNAL, {}, []).decision;

  test('a sampled parent is followed at ratio 0, an unsampled one at ratio 1', () => {
    expect(decide(0, fromTraceparent(SAMPLED), TRACE)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(1, fromTraceparent(`00-${TRACE}-${SPAN}-00`), TRACE)).toBe(SamplingDecision.NOT_RECORD);
  });

  test('new traces are recorded by the ratio: none at 0, all at 1, about a quarter at 0.25', () => {
    const ids = Array.from({ length: 2_000 }, (_, i) =>
      (BigInt(i + 1) * 0x9e3779b97f4a7c15n).toString(16).padStart(32, '0').slice(-32),
    );
    const share = (ratio: number): number =>
      ids.filter((id) => decide(ratio, ROOT_CONTEXT, id) === SamplingDecision.RECORD_AND_SAMPLED).length / ids.length;
    expect(share(0)).toBe(0);
    expect(share(1)).toBe(1);
    expect(share(0.25)).toBeGreaterThan(0.18);
    expect(share(0.25)).toBeLessThan(0.32);
  });
});

describe('the trace settings', () => {
  const base = { GOOGLE_CLOUD_PROJECT: 'p' };
  test('exporter: none locally, cloud-trace on Cloud Run, a file, or refused', () => {
    expect(loadConfig(base).trace).toEqual({ exporter: { kind: 'none' }, sampleRatio: 0.1 });
    expect(loadConfig({ ...base, K_SERVICE: 'relayInbox' }).trace.exporter).toEqual({ kind: 'cloud-trace' });
    expect(loadConfig({ ...base, K_SERVICE: 'relayInbox', INBOX_TRACE_EXPORTER: 'none' }).trace.exporter).toEqual({
      kind: 'none',
    });
    expect(loadConfig({ ...base, INBOX_TRACE_EXPORTER: 'file:/tmp/spans.jsonl' }).trace.exporter).toEqual({
      kind: 'file',
      path: '/tmp/spans.jsonl',
    });
    expect(() => loadConfig({ ...base, INBOX_TRACE_EXPORTER: 'jaeger' })).toThrow(/INBOX_TRACE_EXPORTER/);
    expect(() => loadConfig({ ...base, INBOX_TRACE_EXPORTER: 'file:' })).toThrow(ConfigError);
  });

  test('sample ratio between 0 and 1', () => {
    expect(loadConfig({ ...base, INBOX_TRACE_SAMPLE_RATIO: '0.25' }).trace.sampleRatio).toBe(0.25);
    expect(loadConfig({ ...base, INBOX_TRACE_SAMPLE_RATIO: '0' }).trace.sampleRatio).toBe(0);
    for (const bad of ['1.5', '-0.1', 'half'])
      expect(() => loadConfig({ ...base, INBOX_TRACE_SAMPLE_RATIO: bad })).toThrow(/INBOX_TRACE_SAMPLE_RATIO/);
  });
});
