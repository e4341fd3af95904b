import { ConfigError, loadConfig, requirePushAuth } from '../../functions/src/config';

describe('loadConfig', () => {
  const base = { GOOGLE_CLOUD_PROJECT: 'p', INBOX_PUSH_AUDIENCE: 'https://x', INBOX_PUSH_SERVICE_ACCOUNTS: 'push@p.iam.gserviceaccount.com' };

  test('defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({ projectId: 'p', maxDataBytes: 10 * 1024 * 1024, writeTimeoutMs: 8_000, shards: 16 });
    expect(config.pushAuth).toEqual({ mode: 'enabled', audience: 'https://x', allowedEmails: ['push@p.iam.gserviceaccount.com'] });
    expect(config.maxBodyBytes).toBeGreaterThan(config.maxDataBytes * 4 / 3);
  });

  test('auth can be disabled for the emulator, and then needs no audience', () => {
    expect(loadConfig({ GOOGLE_CLOUD_PROJECT: 'p', INBOX_PUSH_AUTH: 'disabled' }).pushAuth).toEqual({ mode: 'disabled' });
  });

  const bad: Array<[string, Record<string, string>, string]> = [
    ['missing project', { INBOX_PUSH_AUTH: 'disabled' }, 'GOOGLE_CLOUD_PROJECT'],
    ['bad auth mode', { ...base, INBOX_PUSH_AUTH: 'off' }, 'INBOX_PUSH_AUTH'],
    ['bad email', { ...base, INBOX_PUSH_SERVICE_ACCOUNTS: 'nobody' }, 'INBOX_PUSH_SERVICE_ACCOUNTS'],
    ['timeout not a number', { ...base, INBOX_WRITE_TIMEOUT_MS: 'soon' }, 'INBOX_WRITE_TIMEOUT_MS'],
    ['zero shards', { ...base, INBOX_SHARDS: '0' }, 'INBOX_SHARDS'],
  ];
  test.each([
    ['auth on without audience', { GOOGLE_CLOUD_PROJECT: 'p' }, 'INBOX_PUSH_AUDIENCE'],
    ['auth on without service accounts', { GOOGLE_CLOUD_PROJECT: 'p', INBOX_PUSH_AUDIENCE: 'a' }, 'INBOX_PUSH_SERVICE_ACCOUNTS'],
  ])('push endpoints: %s names the variable (other functions start without it)', (_name, env, variable) => {
    const config = loadConfig(env);
    expect(() => requirePushAuth(config)).toThrow(ConfigError);
    expect(() => requirePushAuth(config)).toThrow(variable);
  });

  test.each(bad)('%s names the variable', (_name, env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });
});
