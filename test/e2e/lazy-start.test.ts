import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { FIXTURE_ENV } from '../support/app';

const ROOT = join(__dirname, '..', '..');
const CLIENTS = ['@google-cloud/firestore', '@google-cloud/pubsub', '@google-cloud/storage', '@google-cloud/tasks'];

/**
 * What each deployed function loads before its first request (the cold start
 * it decides): none of the Google client libraries; they load with the first
 * request that needs them. Measured in a fresh process, as the benchmarks' cold start does; the app is the fixture app.
 */
test.each(['receivePubSubPush', 'receiveDeadLetter', 'startProcess', 'runJob', 'fireTimer', 'sweepJobs', 'relayInbox'])(
  '%s starts without loading a Google client library',
  (target) => {
    const out = execFileSync(
      process.execPath,
      [join(ROOT, 'test', 'support', 'cold-start-child.js'), join(ROOT, 'dist', 'index.js')],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          FUNCTION_TARGET: target,
          GOOGLE_CLOUD_PROJECT: 'lazy-start',
          ...FIXTURE_ENV,
          INBOX_PUSH_AUTH: 'enabled',
          INBOX_PUSH_AUDIENCE: 'https://example.test/push',
          INBOX_PUSH_SERVICE_ACCOUNTS: 'push@example.iam.gserviceaccount.com',
          INBOX_RUN_JOB_URL: 'https://example.test/runJob',
          INBOX_FIRE_TIMER_URL: 'https://example.test/fireTimer',
          INBOX_TASKS_SERVICE_ACCOUNT: 'tasks@example.iam.gserviceaccount.com',
        },
        encoding: 'utf8',
      },
    );
    const { heavy, modules } = JSON.parse(out) as { heavy: string[]; modules: number };
    expect(heavy.filter((p) => CLIENTS.includes(p))).toEqual([]);
    expect(modules).toBeGreaterThan(5);
  },
);
