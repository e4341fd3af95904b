import { ConfigError, defaultPayloadBucket, loadConfig } from '../../functions/src/config';
import { requireFireTimerUrl, requirePushAuth } from '../../functions/src/config-requirements';

describe('loadConfig', () => {
  const base = {
    GOOGLE_CLOUD_PROJECT: 'p',
    INBOX_PUSH_AUDIENCE: 'https://x',
    INBOX_PUSH_SERVICE_ACCOUNTS: 'push@p.iam.gserviceaccount.com',
  };

  test('defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({ projectId: 'p', maxDataBytes: 10 * 1024 * 1024, writeTimeoutMs: 8_000, shards: 16 });
    expect(config.pushAuth).toEqual({
      mode: 'enabled',
      audience: 'https://x',
      allowedEmails: ['push@p.iam.gserviceaccount.com'],
    });
    expect(config.maxBodyBytes).toBeGreaterThan((config.maxDataBytes * 4) / 3);
  });

  test('relay defaults, in full', () => {
    expect(loadConfig(base).relay).toEqual({
      budgetMs: 50_000, // below Cloud Scheduler's 90 s attempt deadline, with the grace and the gauge reads
      graceMs: 5_000,
      parallelism: 8,
      batchSize: 200,
      url: null, // no fast path: the schedule alone relays
      queue: 'inbox-relay',
      tasksServiceAccount: null, // no OIDC token on fast-path tasks (the local emulator)
      policy: {
        backoffBaseMs: 5_000,
        backoffCapMs: 15 * 60_000,
        bufferWindowMs: 24 * 60 * 60_000,
        errorAfterAttempts: 5,
      },
      retentionMs: 7 * 24 * 60 * 60_000,
      // Processed records outlive a replay: 31 days, the longest Pub/Sub keeps a message.
      recordRetentionMs: 31 * 24 * 60 * 60_000,
      transactionTimeoutMs: 20_000,
      // Tokens that waited this many days count in the waiting gauge the waiting-too-long alert reads.
      waitingAlertDays: 15,
    });
  });

  test('timers: their own queue (default process-timers) and the fireTimer URL, required by the functions that move tokens', () => {
    const config = loadConfig(base);
    expect(config.tasks).toMatchObject({ timersQueue: 'process-timers', fireTimerUrl: null });
    expect(() => requireFireTimerUrl(config)).toThrow(
      new ConfigError(
        'invalid configuration:\n  INBOX_FIRE_TIMER_URL: required by functions that move tokens, which may set timers (the URL of fireTimer)',
      ),
    );
    const set = loadConfig({ ...base, INBOX_TIMERS_QUEUE: 'my-timers', INBOX_FIRE_TIMER_URL: 'https://fire.example/' });
    expect(set.tasks).toMatchObject({ timersQueue: 'my-timers', fireTimerUrl: 'https://fire.example/' });
    expect(requireFireTimerUrl(set)).toBe('https://fire.example/');
    expect(() => loadConfig({ ...base, INBOX_TIMERS_QUEUE: 'no_underscores' })).toThrow(
      /INBOX_TIMERS_QUEUE: letters, digits and hyphens/,
    );
    expect(() => loadConfig({ ...base, INBOX_FIRE_TIMER_URL: 'not a url' })).toThrow(/INBOX_FIRE_TIMER_URL/);
  });

  test('relay settings are read from the environment', () => {
    const relay = loadConfig({
      ...base,
      INBOX_RELAY_BUDGET_MS: '1000',
      INBOX_RELAY_GRACE_MS: '200',
      INBOX_DONE_RETENTION_DAYS: '2',
      INBOX_DEDUP_RETENTION_DAYS: '40',
      INBOX_ERROR_AFTER_ATTEMPTS: '9',
      INBOX_WAITING_ALERT_DAYS: '3',
    }).relay;
    expect(relay).toMatchObject({
      budgetMs: 1_000,
      graceMs: 200,
      retentionMs: 2 * 24 * 60 * 60_000,
      recordRetentionMs: 40 * 24 * 60 * 60_000,
      policy: { errorAfterAttempts: 9 },
      waitingAlertDays: 3,
    });
  });

  test('auth can be disabled for the emulator, and then needs no audience', () => {
    expect(loadConfig({ GOOGLE_CLOUD_PROJECT: 'p', INBOX_PUSH_AUTH: 'disabled' }).pushAuth).toEqual({
      mode: 'disabled',
    });
  });

  const bad: Array<[string, Record<string, string>, string]> = [
    ['missing project', { INBOX_PUSH_AUTH: 'disabled' }, 'GOOGLE_CLOUD_PROJECT'],
    ['bad auth mode', { ...base, INBOX_PUSH_AUTH: 'off' }, 'INBOX_PUSH_AUTH'],
    ['bad email', { ...base, INBOX_PUSH_SERVICE_ACCOUNTS: 'nobody' }, 'INBOX_PUSH_SERVICE_ACCOUNTS'],
    ['timeout not a number', { ...base, INBOX_WRITE_TIMEOUT_MS: 'soon' }, 'INBOX_WRITE_TIMEOUT_MS'],
    ['zero shards', { ...base, INBOX_SHARDS: '0' }, 'INBOX_SHARDS'],
    ['negative relay grace', { ...base, INBOX_RELAY_GRACE_MS: '-1' }, 'INBOX_RELAY_GRACE_MS'],
    ['dedup retention of no days', { ...base, INBOX_DEDUP_RETENTION_DAYS: '0' }, 'INBOX_DEDUP_RETENTION_DAYS'],
    ['a waiting alert of half a day', { ...base, INBOX_WAITING_ALERT_DAYS: '0.5' }, 'INBOX_WAITING_ALERT_DAYS'],
  ];
  test.each([
    ['auth on without audience', { GOOGLE_CLOUD_PROJECT: 'p' }, 'INBOX_PUSH_AUDIENCE'],
    [
      'auth on without service accounts',
      { GOOGLE_CLOUD_PROJECT: 'p', INBOX_PUSH_AUDIENCE: 'a' },
      'INBOX_PUSH_SERVICE_ACCOUNTS',
    ],
  ])('push endpoints: %s names the variable (other functions start without it)', (_name, env, variable) => {
    const config = loadConfig(env);
    expect(() => requirePushAuth(config)).toThrow(ConfigError);
    expect(() => requirePushAuth(config)).toThrow(variable);
  });

  test.each(bad)('%s names the variable', (_name, env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(variable);
  });

  describe('INBOX_PUSH_AUTH=disabled on Cloud Run', () => {
    const off = { GOOGLE_CLOUD_PROJECT: 'p', INBOX_PUSH_AUTH: 'disabled' };

    test('is refused at start-up when K_SERVICE is set (Cloud Run sets it in every instance), naming both variables', () => {
      const start = (): unknown => loadConfig({ ...off, K_SERVICE: 'receivepubsubpush' });
      expect(start).toThrow(ConfigError);
      expect(start).toThrow(/INBOX_PUSH_AUTH: 'disabled' is refused on Cloud Run \(K_SERVICE=receivepubsubpush/);
      expect(start).toThrow('INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN=intended');
    });

    test('starts when a second variable says it is intended, and only with its one value', () => {
      expect(
        loadConfig({ ...off, K_SERVICE: 'x', INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN: 'intended' }).pushAuth,
      ).toEqual({ mode: 'disabled' });
      expect(() => loadConfig({ ...off, K_SERVICE: 'x', INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN: 'yes' })).toThrow(
        'INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN',
      );
    });

    test('auth on is unaffected by K_SERVICE', () => {
      expect(loadConfig({ ...base, K_SERVICE: 'x' }).pushAuth.mode).toBe('enabled');
    });
  });

  test('fast-path tasks are signed as their own account, falling back to the jobs account', () => {
    const jobs = 'inbox-tasks@p.iam.gserviceaccount.com';
    const relay = 'inbox-relay-tasks@p.iam.gserviceaccount.com';
    expect(
      loadConfig({ ...base, INBOX_TASKS_SERVICE_ACCOUNT: jobs, INBOX_RELAY_TASKS_SERVICE_ACCOUNT: relay }),
    ).toMatchObject({ tasks: { serviceAccount: jobs }, relay: { tasksServiceAccount: relay } });
    expect(loadConfig({ ...base, INBOX_TASKS_SERVICE_ACCOUNT: jobs }).relay.tasksServiceAccount).toBe(jobs);
    expect(() => loadConfig({ ...base, INBOX_RELAY_TASKS_SERVICE_ACCOUNT: 'relay' })).toThrow(
      'INBOX_RELAY_TASKS_SERVICE_ACCOUNT',
    );
  });

  describe("the issuer of the job tasks' OIDC tokens (INBOX_TASKS_OIDC_*)", () => {
    test("is Google's, with Google's keys, unless set", () => {
      expect(loadConfig(base).tasks.oidc).toEqual({
        issuer: 'https://accounts.google.com',
        certsUrl: 'https://www.googleapis.com/oauth2/v1/certs',
      });
    });

    test('another issuer (the local Cloud Tasks emulator) comes with its own keys, served over https or on this machine', () => {
      const local = {
        INBOX_TASKS_OIDC_ISSUER: 'http://127.0.0.1:4100',
        INBOX_TASKS_OIDC_CERTS_URL: 'http://127.0.0.1:4100/oauth2/v1/certs',
      };
      expect(loadConfig({ ...base, ...local }).tasks.oidc).toEqual({
        issuer: 'http://127.0.0.1:4100',
        certsUrl: 'http://127.0.0.1:4100/oauth2/v1/certs',
      });
      expect(
        loadConfig({
          ...base,
          INBOX_TASKS_OIDC_ISSUER: 'https://issuer.example',
          INBOX_TASKS_OIDC_CERTS_URL: 'https://issuer.example/certs',
        }).tasks.oidc.certsUrl,
      ).toBe('https://issuer.example/certs');
      expect(() => loadConfig({ ...base, INBOX_TASKS_OIDC_ISSUER: 'https://issuer.example' })).toThrow(
        /INBOX_TASKS_OIDC_CERTS_URL: set it to the keys of INBOX_TASKS_OIDC_ISSUER/,
      );
      for (const url of ['http://issuer.example/certs', 'ftp://127.0.0.1/certs', 'not a url']) {
        expect(() => loadConfig({ ...base, ...local, INBOX_TASKS_OIDC_CERTS_URL: url })).toThrow(
          'INBOX_TASKS_OIDC_CERTS_URL',
        );
      }
    });
  });

  describe('claim checks', () => {
    test("defaults: the project's payload bucket, 512 KiB, no sender bucket", () => {
      expect(loadConfig(base).claims).toEqual({
        payloadBucket: 'p-inbox-payloads',
        offloadBytes: 512 * 1024,
        referenceBuckets: [],
      });
    });
    test('set: a bucket, a threshold, a list with blanks and spaces', () => {
      const claims = loadConfig({
        ...base,
        INBOX_PAYLOAD_BUCKET: 'my-inbox',
        INBOX_OFFLOAD_BYTES: '1000',
        INBOX_REFERENCE_BUCKETS: ' a-reports , b.reports,, ',
      }).claims;
      expect(claims).toEqual({
        payloadBucket: 'my-inbox',
        offloadBytes: 1000,
        referenceBuckets: ['a-reports', 'b.reports'],
      });
    });
    test.each([
      ['INBOX_PAYLOAD_BUCKET', 'Not_A_Bucket'],
      ['INBOX_REFERENCE_BUCKETS', 'good-bucket,Bad Bucket'],
      ['INBOX_OFFLOAD_BYTES', String(900 * 1024 + 1)],
      ['INBOX_OFFLOAD_BYTES', '0'],
    ])('%s=%j is refused, naming the variable', (variable, value) => {
      expect(() => loadConfig({ ...base, [variable]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, [variable]: value })).toThrow(variable);
    });
    test('the default bucket is a valid name for any project id', () => {
      expect(defaultPayloadBucket('My_Project')).toBe('my-project-inbox-payloads');
      expect(defaultPayloadBucket('a'.repeat(60))).toBe(`${'a'.repeat(48)}-inbox-payloads`);
      expect(defaultPayloadBucket('example.com:legacy-project')).toBe('example-com-legacy-project-inbox-payloads');
    });
  });

  describe('the console (INBOX_CONSOLE_*)', () => {
    test("defaults: iam, gcloud's OAuth client id as the audience, Google's issuer and keys, nobody listed", () => {
      expect(loadConfig(base).console).toEqual({
        access: {
          mode: 'iam',
          audiences: ['32555940559.apps.googleusercontent.com'],
          oidc: { issuer: 'https://accounts.google.com', certsUrl: 'https://www.googleapis.com/oauth2/v1/certs' },
        },
        viewers: [],
        repairers: [],
      });
    });

    test('set: audiences and lists with blanks, e-mails lower-cased; local access', () => {
      const config = loadConfig({
        ...base,
        INBOX_CONSOLE_AUDIENCES: ' a , https://console.example ,',
        INBOX_CONSOLE_VIEWERS: 'Ann@Example.com, ',
        INBOX_CONSOLE_REPAIRERS: '',
      });
      expect(config.console).toMatchObject({
        access: { mode: 'iam', audiences: ['a', 'https://console.example'] },
        viewers: ['ann@example.com'],
        repairers: [],
      });
      expect(loadConfig({ ...base, INBOX_CONSOLE_ACCESS: 'local' }).console.access).toEqual({ mode: 'local' });
    });

    test.each([
      [{ INBOX_CONSOLE_ACCESS: 'open' }, 'INBOX_CONSOLE_ACCESS'],
      [{ INBOX_CONSOLE_AUDIENCES: ' , ' }, 'INBOX_CONSOLE_AUDIENCES: name at least one audience'],
      [{ INBOX_CONSOLE_VIEWERS: 'ann@example.com,user:bob@example.com' }, 'INBOX_CONSOLE_VIEWERS'],
      [{ INBOX_CONSOLE_REPAIRERS: 'nobody' }, 'INBOX_CONSOLE_REPAIRERS'],
      [
        { INBOX_CONSOLE_OIDC_ISSUER: 'https://issuer.example' },
        'INBOX_CONSOLE_OIDC_CERTS_URL: set it to the keys of INBOX_CONSOLE_OIDC_ISSUER',
      ],
      [
        {
          INBOX_CONSOLE_OIDC_ISSUER: 'http://127.0.0.1:4100',
          INBOX_CONSOLE_OIDC_CERTS_URL: 'http://keys.example/certs',
        },
        'INBOX_CONSOLE_OIDC_CERTS_URL',
      ],
      [
        { INBOX_CONSOLE_ACCESS: 'local', K_SERVICE: 'inboxconsole' },
        "INBOX_CONSOLE_ACCESS: 'local' is refused on Cloud Run",
      ],
    ])('%j is refused at start-up, naming the variable', (env, message) => {
      expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, ...env })).toThrow(message);
    });

    test('another issuer with its keys on this machine (a test signer) is taken', () => {
      const oidc = { issuer: 'http://127.0.0.1:4100', certsUrl: 'http://127.0.0.1:4100/certs' };
      expect(
        loadConfig({ ...base, INBOX_CONSOLE_OIDC_ISSUER: oidc.issuer, INBOX_CONSOLE_OIDC_CERTS_URL: oidc.certsUrl })
          .console.access,
      ).toMatchObject({ mode: 'iam', oidc });
    });
  });
});
