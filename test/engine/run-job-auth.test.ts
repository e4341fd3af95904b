import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { CloudTasksClient } from '@google-cloud/tasks';
import { emulatorClient, startCloudTasksEmulator, type CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { createPushTokenVerifier } from '../../functions/src/auth/push-token';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { freePort } from '../../tools/emulators/ports';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { fixtureEngine } from '../support/engine';
import { freshFirestores, uniqueProjectId } from '../support/firestore';
import { createSigner } from '../support/tokens';
import { FIXTURE_ENV } from '../support/app';

const RUN_JOB_URL = 'https://inbox.example.test/runJob';
const TASKS_ACCOUNT = 'cloud-tasks@test-project.iam.gserviceaccount.com';
const signer = createSigner();
const db = freshFirestores()('run-job-auth');
const verifier = createPushTokenVerifier({
  audience: RUN_JOB_URL,
  allowedEmails: [TASKS_ACCOUNT],
  client: new OAuth2Client(),
  certs: async () => signer.certs,
});
http(
  'runJobAuthTest',
  createRunJobHandler({
    db: () => db,
    engine: fixtureEngine,
    queue: () => ({ enqueue: async () => 'CREATED' }),
    timerQueue: () => ({ enqueue: async () => 'CREATED' }),
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
    [
      'a token for another audience',
      `Bearer ${signer.token({ aud: 'https://elsewhere.example.test', email: TASKS_ACCOUNT })}`,
      401,
    ],
    ['a token of another service account', `Bearer ${signer.token({ aud: RUN_JOB_URL })}`, 403],
  ])('%s: rejected', async (_name, authorization, status) => {
    let call = request(server).post('/');
    if (authorization !== undefined) call = call.set('authorization', authorization);
    expect((await call.send(JOB)).status).toBe(status);
  });

  test('the Cloud Tasks service account passes; an unknown job is answered 200 so the task ends', async () => {
    const res = await request(server)
      .post('/')
      .set('authorization', `Bearer ${signer.token({ aud: RUN_JOB_URL, email: TASKS_ACCOUNT })}`)
      .send(JOB);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ outcome: 'not found', jobId: JOB.jobId });
  });

  test('a body without a job id: 400', async () => {
    const res = await request(server)
      .post('/')
      .set('authorization', `Bearer ${signer.token({ aud: RUN_JOB_URL, email: TASKS_ACCOUNT })}`)
      .send({ jobId: '../etc' });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('jobId');
  });
});

/**
 * runJob as deployed (dist/ under the Functions Framework CLI, configured by
 * its environment alone) with the issuer and keys of the local Cloud Tasks
 * emulator (INBOX_TASKS_OIDC_ISSUER / _CERTS_URL): the tokens the emulator
 * signs per dispatch pass google-auth-library's check, anything else is
 * refused. Requires `npm run build`.
 */
describe('runJob served, trusting the local Cloud Tasks emulator through INBOX_TASKS_OIDC_*', () => {
  const projectId = uniqueProjectId('run-job-oidc');
  const queue = `projects/${projectId}/locations/europe-west1/queues/process-jobs`;
  let tasks: CloudTasksEmulator;
  let other: CloudTasksEmulator;
  let admin: CloudTasksClient;
  let runJob: ServedFunction;

  beforeAll(async () => {
    // One attempt per task: a refused token shows as the task's only (failed) attempt.
    tasks = await startCloudTasksEmulator({ queues: [{ name: queue, retryConfig: { maxAttempts: 1 } }] });
    other = await startCloudTasksEmulator();
    admin = emulatorClient(tasks.host);
    const port = await freePort();
    runJob = await serveFunction({
      target: 'runJob',
      port,
      env: {
        ...FIXTURE_ENV,
        GOOGLE_CLOUD_PROJECT: projectId,
        INBOX_PUSH_AUTH: 'enabled',
        INBOX_RUN_JOB_URL: `http://127.0.0.1:${port}/`,
        // Required of every function that moves tokens; no task here goes there.
        INBOX_FIRE_TIMER_URL: 'http://127.0.0.1:9/',
        INBOX_TASKS_SERVICE_ACCOUNT: TASKS_ACCOUNT,
        INBOX_TASKS_EMULATOR_HOST: tasks.host,
        INBOX_TASKS_OIDC_ISSUER: tasks.oidc.issuer,
        INBOX_TASKS_OIDC_CERTS_URL: tasks.oidc.certsUrl,
      },
    });
  });
  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
    await runJob?.stop();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
    await admin?.close();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
    await Promise.all([tasks?.stop(), other?.stop()]);
  });

  /** Dispatches one task for an unknown job to runJob and returns its only attempt's HTTP status. */
  async function dispatched(oidcToken: { serviceAccountEmail: string } | undefined): Promise<number | undefined> {
    const [task] = await admin.createTask({
      parent: queue,
      task: {
        httpRequest: {
          url: runJob.url,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(JSON.stringify(JOB)),
          ...(oidcToken === undefined ? {} : { oidcToken }),
        },
      },
    });
    await tasks.idle();
    return tasks.dispatchLog.find((d) => d.task === task.name)?.status;
  }

  const post = (authorization: string): Promise<Response> =>
    fetch(runJob.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify(JOB),
    });
  const sign = (
    from: CloudTasksEmulator,
    claims: { email?: string; audience?: string; issuedAtMs?: number } = {},
  ): string =>
    from.oidc.sign({
      serviceAccountEmail: claims.email ?? TASKS_ACCOUNT,
      audience: claims.audience ?? runJob.url,
      ...(claims.issuedAtMs === undefined ? {} : { issuedAtMs: claims.issuedAtMs }),
    });

  test("a task dispatched with the tasks account's OIDC token is let in (unknown job: 200); without one it is refused", async () => {
    expect(await dispatched({ serviceAccountEmail: TASKS_ACCOUNT })).toBe(200);
    expect(await dispatched(undefined)).toBe(401);
    expect(await dispatched({ serviceAccountEmail: 'someone-else@test-project.iam.gserviceaccount.com' })).toBe(403);
  });

  test('a tampered, expired, misaddressed or foreign token is refused with 401', async () => {
    const good = sign(tasks);
    expect((await post(`Bearer ${good}`)).status).toBe(200);
    const [head, , signature] = good.split('.');
    const changed = Buffer.from(
      JSON.stringify(
        tasks.oidc.claims({ serviceAccountEmail: TASKS_ACCOUNT, audience: 'https://elsewhere.example.test' }),
      ),
    ).toString('base64url');
    const refused = {
      tampered: await post(`Bearer ${head}.${changed}.${signature}`),
      expired: await post(`Bearer ${sign(tasks, { issuedAtMs: Date.now() - 2 * 3600_000 })}`),
      misaddressed: await post(`Bearer ${sign(tasks, { audience: 'https://elsewhere.example.test' })}`),
      'another emulator': await post(`Bearer ${sign(other)}`),
    };
    expect(Object.fromEntries(Object.entries(refused).map(([why, res]) => [why, res.status]))).toEqual({
      tampered: 401,
      expired: 401,
      misaddressed: 401,
      'another emulator': 401,
    });
  });
});
