/**
 * The Firebase CLI deploy path (`npm run firebase -- deploy --only firestore`, tools/firebase),
 * checked with firebase-tools' own code, not a re-implementation: how the CLI
 * loads firebase.json, how its Firestore deploy reads, validates and sends
 * firestore.indexes.json, and a rehearsal of the real command against a
 * stand-in for Google's APIs on 127.0.0.1 (test/support/firebase-api-stand-in.ts).
 * No emulator and no network beyond 127.0.0.1.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Config } from 'firebase-tools/lib/config';
import { getErrorMessage, getValidator } from 'firebase-tools/lib/firebaseConfigValidate';
import { FirestoreApi } from 'firebase-tools/lib/firestore/api';
import { getFirestoreConfig } from 'firebase-tools/lib/firestore/fsConfig';
import { loadCJSON } from 'firebase-tools/lib/loadCJSON';
import { loadRC } from 'firebase-tools/lib/rc';
import { type FirebaseApiStandIn, type RecordedCall, startFirebaseApiStandIn } from '../support/firebase-api-stand-in';
import { INDEXES, ROOT, sandbox, TTL_FIELDS, useSandbox } from './helpers';

useSandbox();

const PROJECT = 'demo-x';
const FIREBASE_JSON = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8')) as Record<string, unknown>;
const RULES = readFileSync(join(ROOT, 'firestore.rules'), 'utf8');

/** A project directory in the sandbox: firebase.json, the rules, and an indexes file (ours unless given). */
function projectDir(firebaseJson: unknown = FIREBASE_JSON, indexes?: unknown): string {
  const dir = mkdtempSync(join(sandbox(), 'project-'));
  writeFileSync(
    join(dir, 'firebase.json'),
    typeof firebaseJson === 'string' ? firebaseJson : JSON.stringify(firebaseJson),
  );
  copyFileSync(join(ROOT, 'firestore.rules'), join(dir, 'firestore.rules'));
  if (indexes === undefined) copyFileSync(join(ROOT, 'firestore.indexes.json'), join(dir, 'firestore.indexes.json'));
  else writeFileSync(join(dir, 'firestore.indexes.json'), JSON.stringify(indexes));
  return dir;
}

describe('firebase.json as the Firebase CLI loads it', () => {
  it('loads through Config.load (what every command runs) and passes firebase-tools’ own schema', () => {
    const config = Config.load({ cwd: ROOT });
    expect(config?.projectDir).toBe(ROOT);
    expect(config?.src).toEqual(FIREBASE_JSON);
    const validate = getValidator();
    expect(validate(FIREBASE_JSON)).toBe(true);
    expect(validate.errors ?? []).toEqual([]);
  });

  it.each([
    [
      'a misspelt key under firestore',
      { ...FIREBASE_JSON, firestore: { rules: 'firestore.rules', indexs: 'firestore.indexes.json' } },
      'indexs',
    ],
    ['an unknown top-level key', { ...FIREBASE_JSON, firestor: {} }, 'firestor'],
  ])('rejects %s with the message the CLI logs', (_what, bad, key) => {
    const validate = getValidator();
    expect(validate(bad)).toBe(false);
    const messages = (validate.errors ?? []).map(getErrorMessage);
    expect(
      messages.some((m) => m.includes('has unknown property') && m.includes(`"additionalProperty":"${key}"`)),
    ).toBe(true);
    // The CLI only logs these at debug level and carries on, which is why this test validates on its own.
    expect(Config.load({ cwd: projectDir(bad) })?.src).toEqual(bad);
  });

  it('refuses a firebase.json that is not JSON', () => {
    expect(() => Config.load({ cwd: projectDir('{"firestore": ') })).toThrow(
      /There was an error loading firebase\.json/,
    );
  });
});

describe('firestore.indexes.json as `firebase deploy --only firestore` reads it', () => {
  const config = Config.load({ cwd: ROOT }) as Config;
  const options = {
    cwd: ROOT,
    project: PROJECT,
    projectId: PROJECT,
    only: 'firestore',
    nonInteractive: true,
    config,
    rc: loadRC({ cwd: ROOT }),
  };
  // deploy/firestore/prepare.js: loadCJSON of the configured file; deploy.js/api.js: upgradeOldSpec, then validateSpec.
  const readSpec = (file: string): ReturnType<FirestoreApi['upgradeOldSpec']> => {
    const raw = loadCJSON(file) as { indexes?: unknown; fieldOverrides?: unknown };
    return new FirestoreApi().upgradeOldSpec({ indexes: raw.indexes, fieldOverrides: raw.fieldOverrides ?? [] });
  };

  it('targets the (default) database with firestore.rules and firestore.indexes.json', () => {
    const targets = getFirestoreConfig(PROJECT, options);
    expect(targets).toEqual([{ database: '(default)', rules: 'firestore.rules', indexes: 'firestore.indexes.json' }]);
    for (const file of [targets[0]?.rules, targets[0]?.indexes])
      expect(existsSync(config.path(file ?? 'missing'))).toBe(true);
  });

  it('parses and validates as the deploy does: every composite index, and the TTLs on inbox, processedMessages, timers and userTasks', () => {
    const spec = readSpec(config.path('firestore.indexes.json'));
    expect(() => new FirestoreApi().validateSpec(spec)).not.toThrow();
    expect(spec.indexes).toEqual(
      INDEXES.indexes.map((i) => ({ collectionGroup: i.collectionGroup, queryScope: i.queryScope, fields: i.fields })),
    );
    expect(spec.fieldOverrides.filter((o) => o.ttl === true).map((o) => `${o.collectionGroup}.${o.fieldPath}`)).toEqual(
      ['inbox.expireAt', 'processedMessages.expireAt', 'timers.expireAt', 'userTasks.expireAt'],
    );
  });

  it.each([
    [
      'a ttl that is not a boolean',
      { fieldOverrides: [{ collectionGroup: 'inbox', fieldPath: 'expireAt', ttl: 'yes', indexes: [] }] },
      /Property "ttl" must be of type boolean/,
    ],
    [
      'an index field without order or arrayConfig',
      { indexes: [{ collectionGroup: 'inbox', queryScope: 'COLLECTION', fields: [{ fieldPath: 'shard' }] }] },
      /Must contain exactly one of "order,arrayConfig/,
    ],
    [
      'an unknown order',
      {
        indexes: [
          { collectionGroup: 'inbox', queryScope: 'COLLECTION', fields: [{ fieldPath: 'shard', order: 'ASC' }] },
        ],
      },
      /Field "order" must be one of ASCENDING, DESCENDING/,
    ],
    [
      'an override without indexes',
      { fieldOverrides: [{ collectionGroup: 'inbox', fieldPath: 'expireAt', ttl: true }] },
      /Must contain "indexes"/,
    ],
  ])('rejects %s', (_what, change, message) => {
    const file = join(projectDir(), 'firestore.indexes.json');
    writeFileSync(
      file,
      JSON.stringify({ indexes: INDEXES.indexes, fieldOverrides: INDEXES.fieldOverrides, ...change }),
    );
    expect(() => new FirestoreApi().validateSpec(readSpec(file))).toThrow(message);
  });

  it('refuses an indexes file that is not JSON', () => {
    const file = join(projectDir(), 'firestore.indexes.json');
    writeFileSync(file, '{"indexes": [');
    expect(() => loadCJSON(file)).toThrow(/Parse Error in .*firestore\.indexes\.json/);
  });

  describe('the request body of each field override (FirestoreApi.patchField)', () => {
    let standIn: FirebaseApiStandIn;
    beforeAll(async () => {
      standIn = await startFirebaseApiStandIn(PROJECT);
    });
    afterAll(() => standIn.close());

    it('sends inbox.expireAt with its index exemption and a ttlConfig, every other override its index config only', async () => {
      const saved = process.env.FIRESTORE_URL;
      process.env.FIRESTORE_URL = standIn.url;
      try {
        // The client takes its origin when constructed, as in deploy.js.
        const api = new FirestoreApi();
        for (const o of readSpec(config.path('firestore.indexes.json')).fieldOverrides)
          await api.patchField(PROJECT, o, '(default)');
      } finally {
        if (saved === undefined) delete process.env.FIRESTORE_URL;
        else process.env.FIRESTORE_URL = saved;
      }
      expect(standIn.unexpected).toEqual([]);
      expectFieldPatches(standIn.calls);
    });
  });
});

/** Every field override of the file was PATCHed once, the TTL fields with ttlConfig and no update mask. */
function expectFieldPatches(calls: readonly RecordedCall[]): void {
  const patches = calls.filter((c) => c.method === 'PATCH' && c.path.includes('/fields/'));
  expect(patches).toHaveLength(INDEXES.fieldOverrides.length);
  for (const o of INDEXES.fieldOverrides) {
    const mine = patches.filter(
      (c) =>
        c.path ===
        `/v1/projects/${PROJECT}/databases/(default)/collectionGroups/${o.collectionGroup}/fields/${o.fieldPath}`,
    );
    expect(mine).toHaveLength(1);
    const ttl = TTL_FIELDS.includes(o);
    expect({ field: o.fieldPath, body: mine[0]?.body, query: mine[0]?.query }).toEqual({
      field: o.fieldPath,
      body: { indexConfig: { indexes: o.indexes }, ...(ttl ? { ttlConfig: {} } : {}) },
      query: ttl ? {} : { updateMask: 'indexConfig' },
    });
  }
  expect(TTL_FIELDS.map((o) => `${o.collectionGroup}.${o.fieldPath}`)).toContain('inbox.expireAt');
}

/** The CLI as tools/firebase/firebase.sh installs it (jest maps the imports of firebase-tools there too). */
const CLI_HOME = join(ROOT, 'tools', 'firebase', 'node_modules', 'firebase-tools');
const FIREBASE_BIN = join(
  CLI_HOME,
  (JSON.parse(readFileSync(join(CLI_HOME, 'package.json'), 'utf8')) as { bin: { firebase: string } }).bin.firebase,
);

/**
 * Runs `firebase deploy --only firestore --project demo-x --non-interactive` in
 * `cwd` with every API it calls pointed at the stand-in by firebase-tools' own
 * origin overrides, and the stand-in as HTTP(S) proxy so that any other call
 * lands there too (and is refused). The environment is built from scratch: no
 * credentials, emulator hosts or config of this machine reach the CLI.
 * FIREBASE_TOKEN is a fake; over http the CLI sends no token anyway.
 */
function firebaseDeploy(cwd: string, standIn: FirebaseApiStandIn): Promise<{ code: number | null; output: string }> {
  const home = mkdtempSync(join(sandbox(), 'home-'));
  const url = standIn.url;
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    // CI: no message-of-the-day fetch; NO_UPDATE_NOTIFIER: no npm registry look-up. A fresh HOME: no usage analytics.
    CI: 'true',
    NO_UPDATE_NOTIFIER: '1',
    FIREBASE_TOKEN: 'fake-token-for-the-stand-in',
    HTTPS_PROXY: url,
    HTTP_PROXY: url,
    FIRESTORE_URL: url,
    FIREBASE_RULES_URL: url,
    FIREBASE_SERVICE_USAGE_URL: url,
    FIREBASE_RESOURCEMANAGER_URL: url,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [FIREBASE_BIN, 'deploy', '--only', 'firestore', '--project', PROJECT, '--non-interactive'],
      { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    // A hung CLI must not outlive the test.
    const timer = setTimeout(() => child.kill('SIGKILL'), 80_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('rehearsal: firebase deploy --only firestore against a stand-in for the APIs', () => {
  let standIn: FirebaseApiStandIn;
  let first: { code: number | null; output: string };
  let firstCalls: RecordedCall[];
  beforeAll(async () => {
    standIn = await startFirebaseApiStandIn(PROJECT);
    first = await firebaseDeploy(projectDir(), standIn);
    firstCalls = [...standIn.calls];
  }, 90_000);
  afterAll(() => standIn.close());

  it('completes, calling only the APIs the stand-in serves', () => {
    // The CLI's output is part of what is compared, so a failure shows it.
    expect({ ...first, unexpected: standIn.unexpected }).toMatchObject({
      code: 0,
      output: expect.stringContaining('Deploy complete!'),
      unexpected: [],
    });
    for (const c of firstCalls) expect(c.authorization).toMatch(/^Bearer \S+/);
  });

  it('sends firestore.rules to the compile check, creates a ruleset from it and releases it as cloud.firestore', () => {
    const files = [{ name: 'firestore.rules', content: RULES }];
    const compile = firstCalls.findIndex((c) => c.method === 'POST' && c.path === `/v1/projects/${PROJECT}:test`);
    const creates = firstCalls.filter((c) => c.method === 'POST' && c.path === `/v1/projects/${PROJECT}/rulesets`);
    expect(compile).toBeGreaterThanOrEqual(0);
    expect(firstCalls[compile]?.body).toEqual({ source: { files } });
    expect(creates.map((c) => c.body)).toEqual([{ source: { files } }]);
    expect(firstCalls.indexOf(creates[0] as RecordedCall)).toBeGreaterThan(compile);
    expect([...standIn.state.rulesets.values()]).toEqual([{ files }]);
    expect(Object.fromEntries(standIn.state.releases)).toEqual({
      [`projects/${PROJECT}/releases/cloud.firestore`]: `projects/${PROJECT}/rulesets/rs-1`,
    });
  });

  it('creates each composite index of firestore.indexes.json once', () => {
    const creates = firstCalls.filter((c) => c.method === 'POST' && c.path.endsWith('/indexes'));
    expect(creates).toHaveLength(INDEXES.indexes.length);
    for (const index of INDEXES.indexes) {
      const path = `/v1/projects/${PROJECT}/databases/(default)/collectionGroups/${index.collectionGroup}/indexes`;
      expect(
        creates.filter(
          (c) =>
            c.path === path &&
            JSON.stringify(c.body) === JSON.stringify({ fields: index.fields, queryScope: index.queryScope }),
        ),
      ).toHaveLength(1);
    }
  });

  it('applies every field override, inbox.expireAt with a ttlConfig (a TTL policy)', () => {
    expectFieldPatches(firstCalls);
    expect(
      standIn.state.fields.get(`projects/${PROJECT}/databases/(default)/collectionGroups/inbox/fields/expireAt`)
        ?.ttlConfig,
    ).toEqual({ state: 'CREATING' });
  });

  it('changes nothing on a second deploy but re-pointing the release at the same ruleset', async () => {
    const from = standIn.calls.length;
    const second = await firebaseDeploy(projectDir(), standIn);
    expect({ ...second, unexpected: standIn.unexpected }).toMatchObject({ code: 0, unexpected: [] });
    const writes = standIn.calls
      .slice(from)
      .filter((c) => c.method !== 'GET' && !c.path.endsWith(':test') && !c.path.endsWith(':testIamPermissions'));
    expect(writes.map((c) => `${c.method} ${c.path}`)).toEqual([
      `PATCH /v1/projects/${PROJECT}/releases/cloud.firestore`,
    ]);
    expect(standIn.state.rulesets.size).toBe(1);
  }, 90_000);

  it('stops on an invalid indexes file before creating any index or field, and releases no rules', async () => {
    const fresh = await startFirebaseApiStandIn(PROJECT);
    try {
      const bad = {
        indexes: INDEXES.indexes,
        fieldOverrides: INDEXES.fieldOverrides.map((o) => (TTL_FIELDS.includes(o) ? { ...o, ttl: 'yes' } : o)),
      };
      const result = await firebaseDeploy(projectDir(FIREBASE_JSON, bad), fresh);
      expect(result.code).toBe(1);
      expect(result.output).toContain('Property "ttl" must be of type boolean');
      expect(fresh.unexpected).toEqual([]);
      expect({
        indexes: fresh.state.indexes,
        fields: fresh.state.fields.size,
        releases: fresh.state.releases.size,
      }).toEqual({ indexes: [], fields: 0, releases: 0 });
    } finally {
      await fresh.close();
    }
  }, 90_000);
});
