import { parseConsoleUrl, parsePort } from '../../functions/src/cli/console-command';
import {
  cachedTokens,
  expiryOf,
  GcloudError,
  gcloudIdTokens,
  REFRESH_MARGIN_MS,
  type RunFile,
} from '../../functions/src/cli/id-token';
import { UsageError } from '../../functions/src/cli/parse';

/**
 * The pure parts of `inbox console`: its flags, and the ID tokens it adds
 * (gcloud's, asked for without a shell, kept until shortly before they
 * expire). gcloud itself is a function here; test/console/console-proxy.test.ts
 * runs the command with a gcloud of its own on PATH.
 */
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A JWT-shaped token expiring at `exp` (seconds); its signature does not matter here (the console verifies). */
const jwt = (exp: number, email = 'ann@example.com'): string => `${b64({ alg: 'RS256' })}.${b64({ exp, email })}.sig`;

describe('flags', () => {
  test.each([
    [undefined, 8080],
    ['0', 0],
    ['9090', 9090],
    ['65535', 65535],
  ])('--port %s → %d', (text, port) => {
    expect(parsePort(text)).toBe(port);
  });

  test.each([['-1'], ['65536'], ['80x'], [''], ['1.5']])('--port %s: a usage error naming the flag', (text) => {
    expect(() => parsePort(text)).toThrow(UsageError);
    expect(() => parsePort(text)).toThrow(/--port/);
  });

  test.each([
    ['https://inboxconsole-abc-ew.a.run.app'],
    ['https://inboxconsole-abc-ew.a.run.app/'],
    ['http://127.0.0.1:9000'],
    ['http://localhost:9000/prefix'],
  ])('--url %s is taken', (text) => {
    expect(parseConsoleUrl(text).href).toBe(new URL(text).href);
  });

  test.each([
    ['http://inboxconsole-abc-ew.a.run.app', /https:\/\//],
    ['http://rebound.example:8080', /https:\/\//],
    ['ftp://example.com', /https:\/\//],
    ['inboxconsole', /the console's URL/],
    ['https://user:secret@inboxconsole.a.run.app', /without credentials/],
    ['https://inboxconsole.a.run.app/?x=1', /without credentials, query/],
  ])('--url %s: refused', (text, why) => {
    expect(() => parseConsoleUrl(text)).toThrow(why);
  });
});

describe("gcloud's ID token", () => {
  test('asks `gcloud auth print-identity-token` (program and arguments apart: no shell) and trims its line', async () => {
    const calls: Array<readonly [string, readonly string[]]> = [];
    const token = jwt(2_000_000_000);
    const run: RunFile = async (file, args) => {
      calls.push([file, args]);
      return `${token}\n`;
    };
    await expect(gcloudIdTokens(run)()).resolves.toBe(token);
    expect(calls).toEqual([['gcloud', ['auth', 'print-identity-token']]]);
  });

  test('gcloud failing, or printing no token: an error that says to sign in', async () => {
    const failing: RunFile = async () => {
      throw new GcloudError(
        '`gcloud auth print-identity-token` failed: ERROR: (gcloud.auth.print-identity-token) You do not currently have an active account selected.',
      );
    };
    await expect(gcloudIdTokens(failing)()).rejects.toThrow(/active account selected.*gcloud auth login/);
    await expect(gcloudIdTokens(async () => 'not a token\n')()).rejects.toThrow(
      /printed no ID token: sign in with `gcloud auth login`/,
    );
  });

  test('expiryOf reads exp (ms); null for what is no JWT', () => {
    expect(expiryOf(jwt(1_700_000_000))).toBe(1_700_000_000_000);
    expect(expiryOf('a.b')).toBeNull();
    expect(expiryOf(`${b64({})}.${b64({ exp: 'soon' })}.x`)).toBeNull();
  });
});

describe('cachedTokens: one token until shortly before it expires', () => {
  test('kept while valid beyond the margin; renewed inside it; one fetch for requests that wait together', async () => {
    let now = 1_000_000_000_000;
    let fetched = 0;
    const held: Array<() => void> = [];
    const release = (): void => held.shift()?.();
    const tokens = cachedTokens(
      async () => {
        fetched += 1;
        await new Promise<void>((go) => held.push(go));
        return jwt(Math.floor(now / 1000) + 3600, `n${fetched}@example.com`);
      },
      () => now,
    );
    const both = Promise.all([tokens(), tokens()]);
    release();
    const [a, b] = await both;
    expect(a).toBe(b);
    expect(fetched).toBe(1);

    now += 3_600_000 - REFRESH_MARGIN_MS - 1_000;
    await expect(tokens()).resolves.toBe(a);
    expect(fetched).toBe(1);

    now += 2_000;
    const renewed = tokens();
    release();
    expect(await renewed).not.toBe(a);
    expect(fetched).toBe(2);
  });

  test('a failed renewal uses the old token while it is valid, then fails; a failure is not kept', async () => {
    let now = 1_000_000_000_000;
    let fail = false;
    const tokens = cachedTokens(
      async () => {
        if (fail) throw new GcloudError('offline');
        return jwt(Math.floor(now / 1000) + 3600);
      },
      () => now,
    );
    const first = await tokens();
    fail = true;
    now += 3_600_000 - 60_000;
    await expect(tokens()).resolves.toBe(first);
    now += 120_000;
    await expect(tokens()).rejects.toThrow('offline');
    fail = false;
    await expect(tokens()).resolves.not.toBe(first);
  });

  test('a source that throws at once is asked again next time', async () => {
    let calls = 0;
    const tokens = cachedTokens(() => {
      calls += 1;
      if (calls === 1) throw new GcloudError('not yet');
      return Promise.resolve(jwt(2_000_000_000));
    });
    await expect(tokens()).rejects.toThrow('not yet');
    await expect(tokens()).resolves.toBe(jwt(2_000_000_000));
  });
});
