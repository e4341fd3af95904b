import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { createPushTokenVerifier } from '../../functions/src/auth/push-token';
import { INBOX } from '../../functions/src/inbox/document';
import { pushAuthCases, PUSHER } from '../support/auth-cases';
import { freshFirestores } from '../support/firestore';
import { completionEnvelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { createSigner } from '../support/tokens';

const AUDIENCE = 'https://inbox.example.test/receivePubSubPush';

const signer = createSigner();
const stranger = createSigner(signer.kid); // same kid, different key: a forged signature
const db = freshFirestores()('auth');
const inbox = db.collection(INBOX);

const verifier = createPushTokenVerifier({
  audience: AUDIENCE,
  allowedEmails: [PUSHER],
  client: new OAuth2Client(),
  certs: async () => signer.certs,
});
const { server } = testReceiver(db, { verifier: async () => verifier });

// The matrix is shared with receiveDeadLetter (test/hostile/dead-letter-auth.test.ts).
const cases = pushAuthCases(signer, stranger, AUDIENCE);

describe('push authentication', () => {
  test.each(cases)('$name: rejected with $status, nothing stored', async ({ name, authorization, status, reason }) => {
    const caseId = `C-auth-${name.replace(/\W+/g, '-')}`;
    let call = request(server).post('/');
    if (authorization !== undefined) call = call.set('authorization', authorization);
    const res = await call.send(completionEnvelope({ caseId }));
    expect(res.status).toBe(status);
    expect(res.type).toBe('application/json');
    expect(res.body.error).toContain(reason);
    // The answer never echoes the token.
    expect(JSON.stringify(res.body)).not.toContain(authorization?.slice(7, 60) ?? '\u0000');
    const stored = await inbox.where('correlationKey', '==', caseId).get();
    expect(stored.size).toBe(0);
  });

  test('a valid token from the push service account is accepted and the message stored', async () => {
    const res = await request(server)
      .post('/')
      .set('authorization', `Bearer ${signer.token()}`)
      .send(completionEnvelope({ caseId: 'C-auth-ok' }));
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('stored');
    expect((await inbox.where('correlationKey', '==', 'C-auth-ok').get()).size).toBe(1);
  });

  test('a failure to fetch certificates is technical: 503, so Pub/Sub redelivers', async () => {
    const failing = createPushTokenVerifier({
      audience: AUDIENCE,
      allowedEmails: [PUSHER],
      client: new OAuth2Client(),
      certs: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED www.googleapis.com'), { code: 'ECONNREFUSED' });
      },
    });
    const flaky = testReceiver(db, { verifier: async () => failing });
    const res = await request(flaky.server)
      .post('/')
      .set('authorization', `Bearer ${signer.token()}`)
      .send(completionEnvelope({ caseId: 'C-auth-503' }));
    expect(res.status).toBe(503);
    expect((await inbox.where('correlationKey', '==', 'C-auth-503').get()).size).toBe(0);
  });
});
