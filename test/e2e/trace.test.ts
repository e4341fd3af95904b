import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { refs } from '../../functions/src/engine/store/collections';
import { topicOf } from '../../tools/local/peers';
import { startLocalStack, type LocalStack } from '../../tools/local/stack';
import { ofTrace, orphans, readSpans, type SpanLine } from '../../tools/trace/spans';
import { freshFirestores } from '../support/firestore';
import { completionPayload } from '../support/inbox';
import { waitFor } from '../support/wait';
import { FIXTURE_APP, settlementRef } from '../support/app';

/**
 * One message's path as one trace, through the real Functions Framework
 * processes of the local stack (Pub/Sub push, Cloud Tasks emulator, relay,
 * runJob), each writing its spans to a JSON-lines file: a completion published
 * with a `traceparent` attribute ends in the run of "Settle", and
 * every hop on the way is a span of the publisher's trace, hung under the
 * hop before it. startProcess called with a `traceparent` header starts the
 * same way.
 */
jest.setTimeout(120_000);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('trace');
const traceDir = mkdtempSync(join(tmpdir(), 'inbox-trace-'));
let stack: LocalStack;

beforeAll(async () => {
  // The fixture app; its counterpart is told not to answer (peerScript: silent): the one completion is the one this test publishes.
  stack = await startLocalStack({ projectId, app: FIXTURE_APP, relayEveryMs: 1_000, traceDir });
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await stack?.stop();
});

const hex = (n: number, seed: string): string => seed.repeat(n).slice(0, n);

/** The spans of `traceId` once `done` holds for them. */
const spansOf = (traceId: string, what: string, done: (spans: SpanLine[]) => boolean): Promise<SpanLine[]> =>
  waitFor(
    what,
    async () => {
      const spans = ofTrace(readSpans(traceDir), traceId);
      return done(spans) ? spans : undefined;
    },
    { timeoutMs: 60_000, everyMs: 200 },
  );

const isRunOf =
  (activity: string) =>
  (s: SpanLine): boolean =>
    s.name === 'runJob' && s.attributes['inbox.job.activity'] === activity;

test('a completion published with a traceparent: receipt, relay, correlation and the settlement run are one trace, one tree', async () => {
  const { functions, topology, pubsubHost, logDir } = await stack.info();
  const startTrace = hex(32, 'a1b2c3d4');
  const started = await fetch(functions.startProcess, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${startTrace}-${hex(16, 'e5f6')}-01` },
    body: JSON.stringify({
      processKey: 'fixture-process',
      businessKey: 'C-trace-1',
      variables: { caseId: 'C-trace-1', peerScript: 'silent' },
    }),
  });
  expect(started.status).toBe(201);
  // The start's own trace: startProcess, the hand-over's task and its run.
  const startSpans = await spansOf(
    startTrace,
    'the hand-over run in the start trace',
    (s) => s.some(isRunOf('handOver')) && orphans(s).length === 1,
  );
  expect(orphans(startSpans).map((s) => s.name)).toEqual(['startProcess']);
  expect(startSpans.map((s) => s.name)).toEqual(expect.arrayContaining(['startProcess', 'job task', 'runJob']));
  await waitFor('C-trace-1 waiting', async () =>
    (((await refs.correlationKey(db, 'C-trace-1').get()).get('waiting') as unknown[] | undefined)?.length ?? 0) === 1
      ? true
      : undefined,
  );

  const traceId = hex(32, '4bf92f3577b34da6');
  const publisherSpan = hex(16, '00f067aa0ba902b7');
  const pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost });
  try {
    await pubsub.topic(topicOf(topology, 'TaskCompleted')).publishMessage({
      json: completionPayload('C-trace-1', { eventId: 'evt-trace-1' }),
      attributes: { eventType: 'TaskCompleted', traceparent: `00-${traceId}-${publisherSpan}-01` },
    });
  } finally {
    await pubsub.close();
  }
  await waitFor(
    'the settlement of C-trace-1',
    async () => ((await settlementRef(db, 'C-trace-1').get()).exists ? true : undefined),
    { timeoutMs: 60_000 },
  );
  // Spans are written as they end, and a parent ends after its children (the relay's span waits for the task it created,
  // whose run may be done by then): wait for the settlement's run and for every span's parent. The only spans whose parent
  // is not in the files are receipts under the publisher's span: one per delivery (on a busy machine a push can outlast
  // the write deadline, answer 503 and come again as a DUPLICATE, each delivery its own receipt in the same trace).
  const underPublisher = (o: SpanLine): boolean => o.name === 'receipt' && o.parentSpanId === publisherSpan;
  const complete = (s: SpanLine[]): boolean =>
    s.some(isRunOf('settle')) && orphans(s).length >= 1 && orphans(s).every(underPublisher);
  const spans = await spansOf(traceId, 'the settlement run and its ancestors in the message trace', complete);

  const names = spans.map((s) => s.name);
  const receipts = spans.filter((s) => s.name === 'receipt');
  // Besides ours, the Firestore client's own spans of the same requests (Transaction.Commit, …) hang in the tree. A
  // delivery that stored the message but answered 503 at its deadline may not have created the fast-path task; the
  // redelivery is a DUPLICATE (no task either), and the scheduled relay takes the document, continuing its stored context.
  expect(names).toEqual(
    expect.arrayContaining([
      'receipt',
      'relay document',
      'correlate',
      'job task',
      'runJob',
      ...(receipts.length === 1 ? ['fast-path task'] : []),
    ]),
  );
  // One tree: the receipt hangs under the publisher's span, every other span under a span of the trace.
  expect(receipts.length).toBeGreaterThanOrEqual(1);
  expect(receipts.map((r) => r.parentSpanId)).toEqual(receipts.map(() => publisherSpan));
  expect(orphans(spans).map((s) => s.name)).toEqual(receipts.map(() => 'receipt'));
  // The settlement's run descends from the receipt through the correlation's job task.
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const ancestry: string[] = [];
  for (
    let s = spans.find(isRunOf('settle'));
    s !== undefined;
    s = s.parentSpanId === null ? undefined : byId.get(s.parentSpanId)
  )
    ancestry.unshift(s.name);
  expect(ancestry[0]).toBe('receipt');
  expect(ancestry.slice(-2)).toEqual(['job task', 'runJob']);
  expect(ancestry).toContain('relay document');
  expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['receivePubSubPush', 'relayInbox', 'runJob']));

  // The receipt's log line names the trace and the receipt's span, as Cloud Logging reads them.
  const receiptLines = readFileSync(join(logDir, 'receivePubSubPush.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"message stored"') || l.includes('"duplicate delivery, nothing changed"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  // (A delivery that answered 503 past its deadline logs neither line; the one after it logs the duplicate.)
  const ofTraceLines = receiptLines.filter(
    (l) => l['logging.googleapis.com/trace'] === `projects/${projectId}/traces/${traceId}`,
  );
  expect(ofTraceLines.length).toBeGreaterThanOrEqual(1);
  for (const line of ofTraceLines) {
    expect(line).toMatchObject({ 'logging.googleapis.com/trace_sampled': true });
    expect(receipts.map((r) => r.spanId)).toContain(line['logging.googleapis.com/spanId']);
  }
});
