import request from 'supertest';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { startTcpProxy, type ProxyMode, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { firestoreAt, uniqueProjectId, waitFor } from '../support/firestore';
import { completionEnvelope } from '../support/push';
import { testReceiver } from '../support/receiver';

let proxy: TcpProxy;
beforeAll(async () => {
  proxy = await startTcpProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
});
afterAll(async () => {
  await proxy.close();
});

describe('technical failures are never acked', () => {
  test.each<[string, ProxyMode]>([
    ['Firestore refuses connections', 'refuse'],
    ['Firestore does not answer', 'blackhole'],
  ])('%s: 503 within the write deadline; after recovery the redelivery is stored exactly once', async (_name, outage) => {
    proxy.setMode('forward');
    const db = firestoreAt(proxy.host, uniqueProjectId('outage'));
    const receiver = testReceiver(db, { writeTimeoutMs: 1_500 });
    const body = completionEnvelope({ workOrderId: 'WO-outage' }, { messageId: 'm-outage' });

    proxy.setMode(outage);
    const started = Date.now();
    const res = await request(receiver.server).post('/').send(body);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'DEADLINE_EXCEEDED', retry: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(receiver.logs.some((l) => l.severity === 'WARNING' && String(l.message).includes('not acked'))).toBe(true);

    // Recovery: Pub/Sub keeps redelivering until it gets a 2xx. The client
    // reconnects with its own backoff, so the first redeliveries may still fail.
    proxy.setMode('forward');
    const again = await waitFor('a 2xx after recovery', async () => {
      const r = await request(receiver.server).post('/').send(body);
      return r.status === 200 ? r : undefined;
    });
    // The write abandoned at the deadline may have landed first, so either answer is right.
    expect(['stored', 'duplicate']).toContain(again.body.outcome);
    expect((await request(receiver.server).post('/').send(body)).body.outcome).toBe('duplicate');

    const stored = await db.collection(INBOX).where('correlationKey', '==', 'WO-outage').get();
    expect(stored.docs.map((d) => d.id)).toEqual([messageDocId('WorkOrderCompleted', 'WorkOrderCompleted:WO-outage')]);
    await db.terminate();
  });
});
