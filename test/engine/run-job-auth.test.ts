import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { createPushTokenVerifier } from '../../functions/src/auth/push-token';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { workOrderEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { createSigner } from '../support/tokens';

const RUN_JOB_URL = 'https://inbox.example.test/runJob';
const TASKS_ACCOUNT = 'cloud-tasks@test-project.iam.gserviceaccount.com';
const signer = createSigner();
const db = freshFirestores()('run-job-auth');
const verifier = createPushTokenVerifier({ audience: RUN_JOB_URL, allowedEmails: [TASKS_ACCOUNT], client: new OAuth2Client(), certs: async () => signer.certs });
http(
  'runJobAuthTest',
  createRunJobHandler({
    db: () => db,
    engine: workOrderEngine,
    queue: () => ({ enqueue: async () => 'CREATED' }),
    handlers: () => ({}),
    verifier: async () => verifier,
    log: createLogger(() => undefined),
    now: () => new Date(),
    maxAttempts: 3,
    queueMaxAttempts: 5,
  }),
);
const server = getTestServer('runJobAuthTest');
const JOB = { jobId: 'a'.repeat(40) };

describe('runJob authentication and input', () => {
  test.each([
    ['no token', undefined, 401],
    ['a token for another audience', `Bearer ${signer.token({ aud: 'https://elsewhere.example.test', email: TASKS_ACCOUNT })}`, 401],
    ['a token of another service account', `Bearer ${signer.token({ aud: RUN_JOB_URL })}`, 403],
  ])('%s: rejected', async (_name, authorization, status) => {
    let call = request(server).post('/');
    if (authorization !== undefined) call = call.set('authorization', authorization);
    expect((await call.send(JOB)).status).toBe(status);
  });

  test('the Cloud Tasks service account passes; an unknown job is answered 200 so the task ends', async () => {
    const res = await request(server).post('/').set('authorization', `Bearer ${signer.token({ aud: RUN_JOB_URL, email: TASKS_ACCOUNT })}`).send(JOB);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ outcome: 'not found', jobId: JOB.jobId });
  });

  test('a body without a job id: 400', async () => {
    const res = await request(server).post('/').set('authorization', `Bearer ${signer.token({ aud: RUN_JOB_URL, email: TASKS_ACCOUNT })}`).send({ jobId: '../etc' });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('jobId');
  });
});
