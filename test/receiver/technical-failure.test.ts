import request from 'supertest';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { startTcpProxy, type ProxyMode, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { freshFirestores } from '../support/firestore';
import { completionEnvelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';

const firestore = freshFirestores();
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
  ])(
    '%s: 503 within the write deadline; after recovery the redelivery is stored exactly once',
    async (_name, outage) => {
      proxy.setMode('forward');
      const db = firestore('outage', { host: proxy.host });
      const receiver = testReceiver(db, { writeTimeoutMs: 1_500 });
      const body = completionEnvelope({ caseId: 'C-outage' }, { messageId: 'm-outage' });

      proxy.setMode(outage);
      const started = Date.now();
      const res = await request(receiver.server).post('/').send(body);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'DEADLINE_EXCEEDED', retry: true });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(receiver.logs.some((l) => l.severity === 'WARNING' && String(l.message).includes('not acked'))).toBe(true);

      // Recovery. The write abandoned at the deadline is still retried inside the
      // Firestore client and lands once the line is back: wait for it, so it does
      // not outlive this test (a retry after the client is terminated throws inside
      // the finished function, and jest fails the run for a log after the tests).
      proxy.setMode('forward');
      const id = messageDocId('TaskCompleted', 'C-outage', 'TaskCompleted:C-outage');
      await waitFor(
        'the abandoned write to land',
        async () => ((await db.collection(INBOX).doc(id).get()).exists ? true : undefined),
        { timeoutMs: 30_000 },
      );
      // Pub/Sub keeps redelivering until it gets a 2xx: the redelivery finds the message stored.
      const again = await waitFor('a 2xx after recovery', async () => {
        const r = await request(receiver.server).post('/').send(body);
        return r.status === 200 ? r : undefined;
      });
      expect(again.body.outcome).toBe('duplicate');

      const stored = await db.collection(INBOX).where('correlationKey', '==', 'C-outage').get();
      expect(stored.docs.map((d) => d.id)).toEqual([id]);
    },
  );
});
