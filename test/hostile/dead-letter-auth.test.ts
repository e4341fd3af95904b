import fc from 'fast-check';
import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { createPushTokenVerifier } from '../../functions/src/auth/push-token';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { forgedAuthorization, pushAuthCases, PUSHER } from '../support/auth-cases';
import { freshFirestores } from '../support/firestore';
import { sendAll, type Served, serve } from '../support/hostile/harness';
import { HOSTILE_SEED } from '../support/hostile/suite';
import { completionEnvelope } from '../support/push';
import { testDeadLetterReceiver, testReceiver } from '../support/receiver';
import { createSigner } from '../support/tokens';

/**
 * receiveDeadLetter authenticates like the receiver: the same case matrix
 * (test/support/auth-cases.ts) is refused with a JSON 401/403 and nothing is
 * stored. Then forged headers are thrown at both endpoints.
 */
const RECEIVER_AUDIENCE = 'https://inbox.example.test/receivePubSubPush';
const DEAD_LETTER_AUDIENCE = 'https://inbox.example.test/receiveDeadLetter';
const FORGED_PER_ENDPOINT = 300;

const signer = createSigner();
const stranger = createSigner(signer.kid); // same kid, different key: a forged signature
const firestore = freshFirestores();
const db = firestore('dead-letter-auth');
const inbox = db.collection(INBOX);

function verifier(audience: string) {
  const verify = createPushTokenVerifier({
    audience,
    allowedEmails: [PUSHER],
    client: new OAuth2Client(),
    certs: async () => signer.certs,
  });
  return async () => verify;
}
const deadLetter = testDeadLetterReceiver(db, { verifier: verifier(DEAD_LETTER_AUDIENCE) });
const receiver = testReceiver(db, { verifier: verifier(RECEIVER_AUDIENCE) });
let served: Served[] = [];

/** What Pub/Sub adds when it forwards a message to the dead-letter topic. */
const deadLetterAttributes = {
  CloudPubSubDeadLetterSourceSubscription: 'fixture-results-push',
  CloudPubSubDeadLetterSourceSubscriptionProject: 'test',
  CloudPubSubDeadLetterSourceDeliveryCount: '10',
};
const deadLettered = (caseId: string) => completionEnvelope({ caseId }, { attributes: deadLetterAttributes });
const idOf = (caseId: string) => messageDocId('TaskCompleted', caseId, `TaskCompleted:${caseId}`);

beforeAll(async () => {
  served = [await serve(deadLetter.server), await serve(receiver.server)];
});
firestore.beforeTerminate(async () => {
  await Promise.all(served.map((s) => s.close()));
});

describe('receiveDeadLetter: push authentication', () => {
  test.each(pushAuthCases(signer, stranger, DEAD_LETTER_AUDIENCE))(
    '$name: rejected with $status, nothing stored',
    async ({ name, authorization, status, reason }) => {
      const caseId = `C-dl-auth-${name.replace(/\W+/g, '-')}`;
      let call = request(deadLetter.server).post('/');
      if (authorization !== undefined) call = call.set('authorization', authorization);
      const res = await call.send(deadLettered(caseId));
      expect(res.status).toBe(status);
      expect(res.type).toBe('application/json');
      expect(res.body.error).toContain(reason);
      // The answer never echoes the token.
      expect(JSON.stringify(res.body)).not.toContain(authorization?.slice(7, 60) ?? '\u0000');
      expect((await inbox.doc(idOf(caseId)).get()).exists).toBe(false);
    },
  );

  test("a valid token minted for receivePubSubPush's audience is refused (401)", async () => {
    const res = await request(deadLetter.server)
      .post('/')
      .set('authorization', `Bearer ${signer.token({ aud: RECEIVER_AUDIENCE })}`)
      .send(deadLettered('C-dl-auth-cross'));
    expect(res.status).toBe(401);
    expect(res.body.error).toContain('Wrong recipient');
    expect((await inbox.doc(idOf('C-dl-auth-cross')).get()).exists).toBe(false);
  });

  test(`${FORGED_PER_ENDPOINT} forged Authorization headers per endpoint (seed ${HOSTILE_SEED}): all 401 with a JSON error, nothing stored`, async () => {
    const headers = fc.sample(forgedAuthorization(DEAD_LETTER_AUDIENCE), {
      seed: HOSTILE_SEED,
      numRuns: FORGED_PER_ENDPOINT,
    });
    for (const [i, { port }] of served.entries()) {
      const answers = await sendAll(
        port,
        headers.map((authorization, n) => ({
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: Buffer.from(JSON.stringify(deadLettered(`C-forged-${i}-${n}`))),
        })),
        8,
      );
      const wrong = answers.map((a, n) =>
        a.status === 401 &&
        a.contentType.startsWith('application/json') &&
        typeof (JSON.parse(a.text) as { error?: unknown }).error === 'string'
          ? null
          : `${n} ${JSON.stringify(headers[n])}: ${a.status} ${a.text.slice(0, 200)}`,
      );
      expect(wrong.filter((w) => w !== null)).toEqual([]);
    }
    // Every refusal above, and the table's, left the inbox empty.
    expect((await inbox.count().get()).data().count).toBe(0);
  });

  test('a valid token of the push service account is accepted: stored PARKED / DEAD_LETTERED', async () => {
    const res = await request(deadLetter.server)
      .post('/')
      .set('authorization', `Bearer ${signer.token({ aud: DEAD_LETTER_AUDIENCE })}`)
      .send(deadLettered('C-dl-auth-ok'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ outcome: 'parked', id: idOf('C-dl-auth-ok') });
    expect((await inbox.doc(idOf('C-dl-auth-ok')).get()).data()).toMatchObject({
      status: 'PARKED',
      reason: 'DEAD_LETTERED',
    });
  });
});
