import { http, type Request, type Response } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { outsideRequestDomain } from '../../functions/src/http/outside-request-domain';

type WithDomain = NodeJS.Process & { domain?: unknown };
const currentDomain = (): unknown => (process as WithDomain).domain ?? null;

/** What the function saw: the domain when it was called, and after an await (a promise continuation). */
interface Seen {
  atCall: unknown;
  afterAwait: unknown;
}

function probe(seen: Seen[]): (req: Request, res: Response) => Promise<void> {
  return async (_req, res) => {
    const entry: Seen = { atCall: currentDomain(), afterAwait: 'unset' };
    await new Promise((resolve) => setImmediate(resolve));
    entry.afterAwait = currentDomain();
    seen.push(entry);
    res.status(200).json({ ok: true });
  };
}

const plain: Seen[] = [];
const wrapped: Seen[] = [];
http('domainProbePlain', probe(plain));
http('domainProbeWrapped', outsideRequestDomain(probe(wrapped)));
http(
  'domainProbeRejects',
  outsideRequestDomain(async () => {
    await Promise.resolve();
    throw new Error('boom');
  }),
);

describe('outsideRequestDomain under the real Functions Framework', () => {
  test('the framework runs a plain function inside a domain (what the wrapper exists to leave)', async () => {
    const res = await request(getTestServer('domainProbePlain')).post('/').send({});
    expect(res.status).toBe(200);
    expect(plain.at(-1)?.atCall).not.toBeNull();
    expect(plain.at(-1)?.afterAwait).not.toBeNull();
  });

  test('a wrapped function runs outside it, also after an await', async () => {
    const res = await request(getTestServer('domainProbeWrapped')).post('/').send({});
    expect(res.status).toBe(200);
    expect(wrapped.at(-1)).toEqual({ atCall: null, afterAwait: null });
  });

  test('a rejection still reaches the framework: 500, never a 2xx', async () => {
    // The framework reports the crash on stderr; keep it out of the test output, and check it happened.
    const stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const res = await request(getTestServer('domainProbeRejects')).post('/').send({});
      expect(res.status).toBe(500);
      expect(stderr.mock.calls.flat().map(String).join(' ')).toContain('boom');
    } finally {
      stderr.mockRestore();
    }
  });
});
