import { serveFunction } from '../../tools/local/serve-function';
import { uniqueProjectId } from '../support/firestore';
import { FIXTURE_ENV } from '../support/app';

/** The compiled entry point (package.json main) under the Functions Framework CLI, as gcloud deploys it. */
const base = { ...FIXTURE_ENV, GOOGLE_CLOUD_PROJECT: uniqueProjectId('entry'), INBOX_PUSH_AUTH: 'disabled' };
/** The task targets every function that moves tokens needs (nothing listens there: a GET reaches no task). */
const TASK_URLS = { INBOX_RUN_JOB_URL: 'http://127.0.0.1:9/', INBOX_FIRE_TIMER_URL: 'http://127.0.0.1:9/' };

describe('dist/index.js under functions-framework --target', () => {
  test.each([
    ['receivePubSubPush', {}],
    ['receiveDeadLetter', {}],
    ['startProcess', TASK_URLS],
    ['runJob', TASK_URLS],
    ['fireTimer', TASK_URLS],
    ['sweepJobs', TASK_URLS],
    ['relayInbox', TASK_URLS],
  ])('%s serves and refuses a GET with a JSON answer', async (target, extra) => {
    const fn = await serveFunction({ target, env: { ...base, ...extra } });
    try {
      const res = await fetch(fn.url, { method: 'GET' });
      expect(res.status).toBe(405);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(((await res.json()) as { error: string }).error).toContain('POST');
    } finally {
      await fn.stop();
    }
  });

  test.each([
    ['startProcess without INBOX_RUN_JOB_URL', 'startProcess', {}, 'INBOX_RUN_JOB_URL'],
    [
      'fireTimer without INBOX_FIRE_TIMER_URL',
      'fireTimer',
      { INBOX_RUN_JOB_URL: 'http://127.0.0.1:9/' },
      'INBOX_FIRE_TIMER_URL',
    ],
    [
      'any function without GOOGLE_CLOUD_PROJECT',
      'receivePubSubPush',
      { GOOGLE_CLOUD_PROJECT: '' },
      'GOOGLE_CLOUD_PROJECT',
    ],
    ['auth on without an audience', 'receivePubSubPush', { INBOX_PUSH_AUTH: 'enabled' }, 'INBOX_PUSH_AUDIENCE'],
  ])('%s: the start-up fails naming the variable', async (_name, target, extra, variable) => {
    await expect(serveFunction({ target, env: { ...base, ...extra }, readyTimeoutMs: 15_000 })).rejects.toThrow(
      variable,
    );
  });
});
