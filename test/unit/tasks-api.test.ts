import type { Request } from '@google-cloud/functions-framework';
import { answerTasks } from '../../functions/src/console/tasks-api';
import type { OperationsDeps } from '../../functions/src/operations/types';

/** The console's task routes refuse before any operation runs: no Firestore is reached here (deps that throw if used). */
const untouchable = new Proxy({} as OperationsDeps, {
  get: (_t, name) => {
    throw new Error(`operations deps used: ${String(name)}`);
  },
});
const request = (method: string, headers: Record<string, string>, body: unknown = {}): Request =>
  ({ method, body, query: {}, get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request;
const failed = () => {
  throw new Error('no failure expected');
};
const SAME_ORIGIN = { 'x-inbox-console': '1', 'sec-fetch-site': 'same-origin' };

describe('POST /api/tasks/ID/complete refusals', () => {
  test('a viewer may not complete a task: 403 naming the role it needs', async () => {
    const answer = await answerTasks(
      untouchable,
      request('POST', SAME_ORIGIN),
      { id: 'viewer@example.com', role: 'viewer' },
      { id: 't', rest: ['complete'] },
      failed,
    );
    expect(answer).toMatchObject({ kind: 'reject', status: 403, error: expect.stringContaining('repairer role') });
  });

  test('a cross-site request: 403, as for a repair', async () => {
    const answer = await answerTasks(
      untouchable,
      request('POST', { 'sec-fetch-site': 'cross-site' }),
      { id: 'r@example.com', role: 'repairer' },
      { id: 't', rest: ['complete'] },
      failed,
    );
    expect(answer).toMatchObject({ kind: 'reject', status: 403 });
  });

  test('an unknown sub-route: 404', async () => {
    const answer = await answerTasks(
      untouchable,
      request('GET', {}),
      { id: 'r@example.com', role: 'repairer' },
      { id: 't', rest: ['delete'] },
      failed,
    );
    expect(answer).toMatchObject({ kind: 'reject', status: 404 });
  });
});
