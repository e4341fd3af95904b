/**
 * `npm run demo` (receiver stage): starts the emulators (or uses running
 * ones), serves receivePubSubPush under the Functions Framework, pushes sample
 * messages through the Pub/Sub emulator, and prints what the inbox stored.
 * Exits non-zero if any scenario ends differently than expected.
 */
import { PubSub } from '@google-cloud/pubsub';
import { Firestore } from '@google-cloud/firestore';
import { INBOX } from '../../functions/src/inbox/document';
import { startTcpProxy } from '../faults/tcp-proxy';
import { serveFunction } from '../local/serve-function';
import { formatTable } from '../local/table';
import { useEmulators } from '../local/use-emulators';

const PROJECT = 'demo-inbox';
const completedAt = new Date().toISOString();
const completion = (workOrderId: string, completedItems = 12, eventId?: string): Buffer =>
  Buffer.from(JSON.stringify({ workOrderId, completedItems, completionTimestamp: completedAt, ...(eventId === undefined ? {} : { eventId }) }));
const typed = { eventType: 'WorkOrderCompleted' };

type Doc = Record<string, unknown> & { id: string };

interface Scenario {
  readonly name: string;
  readonly expected: string;
  /** Reads the inbox and says what happened. */
  observe(docs: ReadonlyArray<Record<string, unknown>>): string;
}

const byKey = (docs: ReadonlyArray<Record<string, unknown>>, key: string): Array<Record<string, unknown>> => docs.filter((d) => d.correlationKey === key);
const describeDocs = (docs: ReadonlyArray<Record<string, unknown>>): string =>
  docs.length === 0 ? 'nothing stored' : docs.map((d) => (d.reason === null ? String(d.status) : `${String(d.status)} ${String(d.reason)}`)).sort().join(' + ');
const byError = (docs: ReadonlyArray<Record<string, unknown>>, text: string): Array<Record<string, unknown>> =>
  docs.filter((d) => String(d.validationError ?? '').includes(text));

async function main(): Promise<void> {
  const emulators = await useEmulators();
  const proxy = await startTcpProxy(emulators.firestoreHost);
  const receiver = await serveFunction({
    target: 'receivePubSubPush',
    env: { GOOGLE_CLOUD_PROJECT: PROJECT, INBOX_PUSH_AUTH: 'disabled', FIRESTORE_EMULATOR_HOST: proxy.host, INBOX_WRITE_TIMEOUT_MS: '2000' },
  });
  const pubsub = new PubSub({ projectId: PROJECT });
  const db = new Firestore({ projectId: PROJECT });
  try {
    console.log(`emulators: Firestore ${emulators.firestoreHost}, Pub/Sub ${emulators.pubsubHost}${emulators.started ? ' (started for this run)' : ' (already running)'}`);
    console.log(`receiver:  ${receiver.url} (functions-framework --target=receivePubSubPush)\n`);
    const run = Date.now().toString(36);
    const [topic] = await pubsub.createTopic(`work-order-completed-${run}`);
    const [dlt] = await pubsub.createTopic(`work-order-completed-dlt-${run}`);
    await topic.createSubscription(`work-order-completed-push-${run}`, {
      pushConfig: { pushEndpoint: receiver.url },
      deadLetterPolicy: { deadLetterTopic: dlt.name, maxDeliveryAttempts: 5 },
      retryPolicy: { minimumBackoff: { seconds: 1 }, maximumBackoff: { seconds: 5 } },
    });
    const key = (n: number): string => `WO-${run}-${n}`;
    const publish = (data: Buffer, attributes: Record<string, string> = typed): Promise<string> => topic.publishMessage({ data, attributes });

    await publish(completion(key(1)));
    await publish(completion(key(2), 7, `evt-${run}-2`));
    await publish(completion(key(2), 7, `evt-${run}-2`));
    await publish(completion(key(3), 100));
    await publish(completion(key(3), 250));
    await publish(Buffer.from('<xml>not json</xml>'));
    await publish(completion(key(5)), { eventType: 'WorkOrderCancelled' });
    await publish(Buffer.from(JSON.stringify({ workOrderId: key(6), completedItems: -1, completionTimestamp: 'soon' })));
    const mineCount = async (): Promise<number> =>
      (await db.collection(INBOX).get()).docs.filter((d) => JSON.stringify(d.data()).includes(run) || String(d.get('validationError') ?? '') !== '').length;
    await until(async () => (await mineCount()) >= 7, 'the first seven messages to be stored');
    proxy.setMode('refuse');
    const outageMessageId = await publish(completion(key(4)));
    await until(() => receiver.logs.some((l) => l.messageId === outageMessageId && String(l.message).includes('not acked')), 'a 503 during the outage').catch((err: unknown) => {
      console.error(receiver.logs.map((l) => JSON.stringify(l)).join('\n'));
      throw err;
    });
    proxy.setMode('forward');
    const notPush = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"hello":"world"}' });
    const notPushBody = (await notPush.json()) as { error?: string };

    const scenarios: Scenario[] = [
      { name: 'normal completion', expected: 'OPEN', observe: (d) => describeDocs(byKey(d, key(1))) },
      { name: 'duplicate publish (same eventId)', expected: 'OPEN', observe: (d) => describeDocs(byKey(d, key(2))) },
      { name: 'two payloads under one key', expected: 'OPEN + PARKED KEY_COLLISION', observe: (d) => describeDocs(byKey(d, key(3))) },
      { name: 'poison payload (not JSON)', expected: 'PARKED INVALID_PAYLOAD', observe: (d) => describeDocs(byError(d, 'not JSON')) },
      { name: 'unknown message type', expected: 'PARKED INVALID_PAYLOAD', observe: (d) => describeDocs(byError(d, 'WorkOrderCancelled')) },
      { name: 'schema violation', expected: 'PARKED INVALID_PAYLOAD', observe: (d) => describeDocs(byError(d, 'completedItems')) },
      { name: 'Firestore outage during delivery (503, redelivered)', expected: 'OPEN', observe: (d) => describeDocs(byKey(d, key(4))) },
      { name: 'not a push request', expected: '400 JSON error', observe: () => `${notPush.status} ${notPushBody.error === undefined ? 'no JSON error' : 'JSON error'}` },
    ];
    // Every document of this run (the emulators may hold earlier runs' data).
    const load = async (): Promise<Doc[]> =>
      (await db.collection(INBOX).get()).docs.map((d): Doc => ({ ...d.data(), id: d.id })).filter((d) => JSON.stringify(d).includes(run));
    const settled = (docs: Doc[]): boolean => scenarios.every((s) => s.observe(docs) === s.expected);
    const stored = await until(async () => {
      const docs = await load();
      return settled(docs) ? docs : undefined;
    }, 'every scenario to settle', 30_000).catch(load);

    console.log(formatTable(['id', 'status', 'reason', 'message', 'correlation key', 'why'], stored.map((d) => [
      d.id.slice(0, 12), d.status, d.reason, d.messageName, d.correlationKey, String(d.validationError ?? (d.collidesWith === null ? '' : `collides with ${String(d.collidesWith).slice(0, 12)}`)).slice(0, 60),
    ])));
    console.log('');
    const rows = scenarios.map((s) => [s.name, s.expected, s.observe(stored), s.observe(stored) === s.expected ? 'ok' : 'MISMATCH']);
    console.log(formatTable(['scenario', 'expected', 'observed', ''], rows));
    const failed = rows.filter((r) => r[3] !== 'ok').length;
    console.log(`\n${rows.length - failed} of ${rows.length} scenarios as expected.`);
    process.exitCode = failed === 0 ? 0 : 1;
  } finally {
    await pubsub.close();
    await db.terminate();
    await receiver.stop();
    await proxy.close();
    await emulators.stop();
  }
}

async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
