/**
 * infra/deploy.sh takes every topic and subscription from the app (--app,
 * INBOX_APP). The default app, the work-order example, gets exactly the
 * names a deployment from before apps has (an upgrade renames nothing);
 * another app (the claims example, test/fixtures/apps/minimal) gets
 * exactly its own and none of the work-order example's; the upload carries
 * the app's models and the files its bundle takes; an app that is no app,
 * or does not load, stops the script before it prints a command. No Google
 * Cloud, no emulator (the rest of the dry run: deploy-dry-run.test.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  appView,
  BROKEN_APP,
  CLAIMS_APP,
  commandsOf,
  DEFAULT_APP,
  deploy,
  deployEnv,
  envOf,
  fakeTools,
  FIXTURE_APP,
  flag,
  FUNCTIONS,
  only,
  PROJECT,
  PUBSUB_AGENT,
  REFUSED_MODELS_APP,
  ROOT,
  sa,
  sandbox,
  SCRIPT,
  subscriptionsOf,
  topicsOf,
  uploadIgnoreFile,
  useSandbox,
} from './helpers';

useSandbox();

describe('deploy.sh --dry-run with the default app, the work-order example', () => {
  let commands: string[];

  beforeAll(() => {
    const tools = fakeTools();
    commands = commandsOf(
      execFileSync('bash', [SCRIPT, '--project', PROJECT, '--dry-run'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: deployEnv({ PATH: `${tools.bin}:${process.env.PATH ?? ''}` }),
        timeout: 60_000,
      }),
    );
  }, 60_000);

  it('creates exactly the topics and subscriptions a deployment from before apps has: an upgrade renames nothing', () => {
    const created = (kind: string): string[] =>
      commands
        .filter((c) => c.startsWith(`gcloud pubsub ${kind} create `))
        .map((c) => c.split(' ')[4] ?? '')
        .sort();
    expect(created('topics')).toEqual([
      'work-order-completed',
      'work-order-completed-dlt',
      'work-order-released',
      'work-orders',
    ]);
    expect(created('subscriptions')).toEqual([
      'work-order-completed-dlt-push',
      'work-order-completed-push',
      'work-order-released-push',
    ]);
    // Labelled with the app they serve.
    for (const c of commands.filter((x) => x.startsWith('gcloud pubsub subscriptions create ')))
      expect(flag(c, 'labels')).toBe('inbox-app=work-orders');
    // Publishing: the jobs' account on the topic the example's steps publish to, the service agent on the dead-letter topic; nothing else.
    const publishers = commands
      .filter((c) => c.startsWith('gcloud pubsub topics add-iam-policy-binding '))
      .map((c) => `${c.split(' ')[4] ?? ''} ${flag(c, 'member') ?? ''} ${flag(c, 'role') ?? ''}`);
    expect(publishers.sort()).toEqual([
      `work-order-completed-dlt ${PUBSUB_AGENT} roles/pubsub.publisher`,
      `work-orders serviceAccount:${sa('inbox-jobs')} roles/pubsub.publisher`,
    ]);
  });

  it('uploads its models and the files its bundle takes, not its tests, benchmarks or tooling', () => {
    const ignore = readFileSync(join(ROOT, uploadIgnoreFile(DEFAULT_APP)), 'utf8');
    // Its models are the repository's top-level bpmn/ (examples/work-orders/index.ts), let back in first.
    expect(ignore.trimEnd().split('\n').slice(-9)).toEqual([
      '!/bpmn',
      '!/examples',
      '/examples/*',
      '!/examples/work-orders',
      '/examples/work-orders/*',
      '!/examples/work-orders/billing.ts',
      '!/examples/work-orders/index.ts',
      '!/examples/work-orders/messages.ts',
      '!/examples/work-orders/steps.ts',
    ]);
  });
});

describe("deploy.sh --dry-run --app examples/claims: exactly the claims example's topics and subscriptions", () => {
  let stdout: string;
  let commands: string[];
  const created = (kind: string): string[] =>
    commands
      .filter((c) => c.startsWith(`gcloud pubsub ${kind} create `))
      .map((c) => c.split(' ')[4] ?? '')
      .sort();

  beforeAll(() => {
    const tools = fakeTools();
    stdout = execFileSync('bash', [SCRIPT, '--project', PROJECT, '--dry-run', '--app', CLAIMS_APP], {
      cwd: ROOT,
      encoding: 'utf8',
      env: deployEnv({ PATH: `${tools.bin}:${process.env.PATH ?? ''}` }),
      timeout: 60_000,
    });
    commands = commandsOf(stdout);
  }, 60_000);

  it('creates its three inbound topics, its dead-letter topic and the two it publishes to, and no other', () => {
    expect(created('topics')).toEqual([
      'claims-dlt',
      'claims-documents',
      'claims-notices',
      'claims-review-requests',
      'claims-reviews',
      'claims-submitted',
    ]);
  });

  it('creates a push subscription per inbound topic and one for its dead letters, and no other', () => {
    expect(created('subscriptions')).toEqual([
      'claims-dlt-push',
      'claims-documents-push',
      'claims-reviews-push',
      'claims-submitted-push',
    ]);
    for (const topic of ['claims-submitted', 'claims-documents', 'claims-reviews']) {
      const sub = only(
        commands,
        (c) => c.startsWith(`gcloud pubsub subscriptions create ${topic}-push `),
        `${topic}-push`,
      );
      expect([
        flag(sub, 'topic'),
        flag(sub, 'push-endpoint'),
        flag(sub, 'dead-letter-topic'),
        flag(sub, 'labels'),
      ]).toEqual([topic, 'https://URL_OF_receivePubSubPush', 'claims-dlt', 'inbox-app=claims']);
    }
    const dlt = only(
      commands,
      (c) => c.startsWith('gcloud pubsub subscriptions create claims-dlt-push '),
      'dead-letter subscription',
    );
    expect([flag(dlt, 'topic'), flag(dlt, 'push-endpoint')]).toEqual([
      'claims-dlt',
      'https://URL_OF_receiveDeadLetter',
    ]);
  });

  it("lets the jobs' account publish to the two topics its steps publish to, and nowhere else", () => {
    const publishers = commands
      .filter((c) => c.startsWith('gcloud pubsub topics add-iam-policy-binding '))
      .map((c) => `${c.split(' ')[4] ?? ''} ${flag(c, 'member') ?? ''}`);
    expect(publishers.sort()).toEqual([
      `claims-dlt ${PUBSUB_AGENT}`,
      `claims-notices serviceAccount:${sa('inbox-jobs')}`,
      `claims-review-requests serviceAccount:${sa('inbox-jobs')}`,
    ]);
  });

  it('names no work order anywhere, and runs and builds the functions with INBOX_APP=examples/claims', () => {
    expect(stdout.split('\n').filter((l) => /work[\s_-]?orders?/i.test(l))).toEqual([]);
    for (const c of commands.filter((x) => x.startsWith('gcloud functions deploy '))) {
      expect([envOf(c).INBOX_APP, flag(c, 'set-build-env-vars')]).toEqual([CLAIMS_APP, `INBOX_APP=${CLAIMS_APP}`]);
    }
  });

  it('uploads its models and the four files its bundle takes: not its tests, nor its README', () => {
    const ignore = readFileSync(join(ROOT, uploadIgnoreFile(CLAIMS_APP)), 'utf8');
    expect(ignore.trimEnd().split('\n').slice(-9)).toEqual([
      '!/examples',
      '/examples/*',
      '!/examples/claims',
      '/examples/claims/*',
      '!/examples/claims/bpmn',
      '!/examples/claims/index.ts',
      '!/examples/claims/messages.ts',
      '!/examples/claims/payout.ts',
      '!/examples/claims/steps.ts',
    ]);
  });
});

describe("deploy.sh --dry-run --app test/fixtures/apps/minimal: every topic and subscription is the app's", () => {
  let stdout: string;
  let commands: string[];
  let marker: string;
  const created = (kind: string): string[] =>
    commands
      .filter((c) => c.startsWith(`gcloud pubsub ${kind} create `))
      .map((c) => c.split(' ')[4] ?? '')
      .sort();

  beforeAll(() => {
    const tools = fakeTools();
    marker = tools.marker;
    // A trailing slash is the same folder.
    stdout = execFileSync('bash', [SCRIPT, '--project', PROJECT, '--dry-run', '--app', `${FIXTURE_APP}/`], {
      cwd: ROOT,
      encoding: 'utf8',
      env: deployEnv({ PATH: `${tools.bin}:${process.env.PATH ?? ''}` }),
      timeout: 60_000,
    });
    commands = commandsOf(stdout);
  }, 60_000);

  it("creates exactly the app's topics, and its topology says the same", () => {
    expect(existsSync(marker)).toBe(false);
    expect(created('topics')).toEqual(['minimal-answers', 'minimal-dlt', 'minimal-requests', 'minimal-start']);
    expect(created('topics')).toEqual(topicsOf(appView(FIXTURE_APP).topology).sort());
  });

  it('pushes each inbound topic to the receiver under the subscription the app names, dead-lettered to its own topic', () => {
    expect(created('subscriptions')).toEqual(['minimal-dlt-push', 'minimal-start-push', 'minimal.answers-inbox']);
    for (const [name, topic] of [
      ['minimal-start-push', 'minimal-start'],
      // Named by the app, not TOPIC-push.
      ['minimal.answers-inbox', 'minimal-answers'],
    ] as const) {
      const sub = only(commands, (c) => c.startsWith(`gcloud pubsub subscriptions create ${name} `), name);
      expect(flag(sub, 'topic')).toBe(topic);
      expect(flag(sub, 'push-endpoint')).toBe('https://URL_OF_receivePubSubPush');
      expect(flag(sub, 'push-auth-service-account')).toBe(sa('inbox-push'));
      expect(flag(sub, 'push-auth-token-audience')).toBe('https://URL_OF_receivePubSubPush');
      expect(flag(sub, 'dead-letter-topic')).toBe('minimal-dlt');
      expect(flag(sub, 'max-delivery-attempts')).toBe('10');
      expect(flag(sub, 'message-retention-duration')).toBe('7d');
      expect(flag(sub, 'labels')).toBe('inbox-app=minimal');
      const subscriber = only(
        commands,
        (c) => c.startsWith(`gcloud pubsub subscriptions add-iam-policy-binding ${name} `),
        `subscriber binding on ${name}`,
      );
      expect(flag(subscriber, 'member')).toBe(PUBSUB_AGENT);
    }
    const dlt = only(
      commands,
      (c) => c.startsWith('gcloud pubsub subscriptions create minimal-dlt-push '),
      'dead-letter subscription',
    );
    expect(flag(dlt, 'topic')).toBe('minimal-dlt');
    expect(flag(dlt, 'push-endpoint')).toBe('https://URL_OF_receiveDeadLetter');
    expect(flag(dlt, 'message-retention-duration')).toBe('31d');
    expect(flag(dlt, 'labels')).toBe('inbox-app=minimal');
  });

  it("lets the jobs' account publish to the topic the app's step publishes to, and the service agent to its dead-letter topic, nothing else", () => {
    const publishers = commands
      .filter((c) => c.startsWith('gcloud pubsub topics add-iam-policy-binding '))
      .map((c) => `${c.split(' ')[4] ?? ''} ${flag(c, 'member') ?? ''} ${flag(c, 'role') ?? ''}`);
    expect(publishers.sort()).toEqual([
      `minimal-dlt ${PUBSUB_AGENT} roles/pubsub.publisher`,
      `minimal-requests serviceAccount:${sa('inbox-jobs')} roles/pubsub.publisher`,
    ]);
  });

  it("gives every function INBOX_APP at run time and at build time, from an upload that lets the app's models and code back in", () => {
    const deploys = commands.filter((c) => c.startsWith('gcloud functions deploy '));
    expect(deploys.length).toBe(2 * FUNCTIONS.length);
    for (const c of deploys) {
      expect(envOf(c).INBOX_APP).toBe(FIXTURE_APP);
      expect(flag(c, 'set-build-env-vars')).toBe(`INBOX_APP=${FIXTURE_APP}`);
      expect(flag(c, 'ignore-file')).toBe(uploadIgnoreFile(FIXTURE_APP));
    }
    // infra/gcloudignore, then the app's models and its one file let back in level by level (what gcloud makes of it: deploy-rehearsal.test.ts).
    const ignore = readFileSync(join(ROOT, uploadIgnoreFile(FIXTURE_APP)), 'utf8');
    expect(ignore).toContain(readFileSync(join(ROOT, 'infra', 'gcloudignore'), 'utf8'));
    expect(ignore.trimEnd().split('\n').slice(-10)).toEqual([
      '!/test',
      '/test/*',
      '!/test/fixtures',
      '/test/fixtures/*',
      '!/test/fixtures/apps',
      '/test/fixtures/apps/*',
      '!/test/fixtures/apps/minimal',
      '/test/fixtures/apps/minimal/*',
      '!/test/fixtures/apps/minimal/bpmn',
      '!/test/fixtures/apps/minimal/index.ts',
    ]);
  });

  it("names none of the work-order example's topics or subscriptions, nor the example at all", () => {
    const example = appView(DEFAULT_APP).topology;
    const names = [...topicsOf(example), ...subscriptionsOf(example)];
    expect(names.length).toBeGreaterThanOrEqual(5);
    expect(names.filter((n) => stdout.includes(n))).toEqual([]);
    expect(stdout.split('\n').filter((l) => /work[\s_-]?orders?/i.test(l))).toEqual([]);
  });

  it("fills the app's subscriptions into the monitoring files' filters and texts", () => {
    const note = stdout.split('\n').find((l) => l.startsWith("# the app's names in the files below"));
    expect(note).toContain('PUSH_SUBSCRIPTIONS_REGEX=minimal-start-push|minimal[.]answers-inbox;');
    expect(note).toContain('DEAD_LETTER_SUBSCRIPTION=minimal-dlt-push;');
    expect(note).toContain('DEAD_LETTER_TOPIC=minimal-dlt');
  });

  it('takes the app from INBOX_APP without --app, and --app over INBOX_APP', () => {
    const byEnv = deploy(['--project', PROJECT, '--dry-run'], { INBOX_APP: FIXTURE_APP });
    expect(byEnv.status).toBe(0);
    expect(
      commandsOf(byEnv.stdout)
        .filter((c) => c.startsWith('gcloud pubsub subscriptions create '))
        .map((c) => c.split(' ')[4]),
    ).toEqual(['minimal-dlt-push', 'minimal-start-push', 'minimal.answers-inbox']);
    const byFlag = deploy(['--project', PROJECT, '--dry-run', `--app=${FIXTURE_APP}`], {
      INBOX_APP: 'examples/no-such-app',
    });
    expect(byFlag.status).toBe(0);
    expect(envOf(commandsOf(byFlag.stdout).find((c) => c.startsWith('gcloud functions deploy ')) ?? '').INBOX_APP).toBe(
      FIXTURE_APP,
    );
  }, 120_000);
});

describe('deploy.sh with an app it cannot deploy stops before anything', () => {
  it.each([
    [
      ['--app', 'examples/no-such-app'],
      {},
      2,
      "--app 'examples/no-such-app': there is no examples/no-such-app/index.ts in the repository",
    ],
    [
      ['--app=../elsewhere'],
      {},
      2,
      "--app '../elsewhere' is not an app folder: give its path relative to the repository root",
    ],
    [['--app', '/abs/app'], {}, 2, "--app '/abs/app' is not an app folder"],
    [
      [],
      { INBOX_APP: 'examples/no-such-app' },
      2,
      "INBOX_APP 'examples/no-such-app': there is no examples/no-such-app/index.ts",
    ],
    // Loads, but its model has an async task without a handler: the CLI's check, with its line.
    [
      ['--app', BROKEN_APP],
      {},
      1,
      `the app ${BROKEN_APP} does not load, nothing was deployed: inbox: ${BROKEN_APP}/index.ts: task minimal/ask is async but steps has no handler ask`,
    ],
  ] as const)(
    '%j %j exits %d',
    (args, env, status, message) => {
      const { bin, marker } = fakeTools();
      const result = spawnSync('bash', [SCRIPT, '--project', PROJECT, '--dry-run', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        env: deployEnv({ PATH: `${bin}:${process.env.PATH ?? ''}`, ...env }),
        timeout: 60_000,
      });
      expect({ status: result.status, stderr: result.stderr }).toEqual({
        status,
        stderr: expect.stringContaining(message),
      });
      expect(result.stdout).toBe('');
      expect(existsSync(marker)).toBe(false);
    },
    60_000,
  );

  it("refused for a model: the CLI's line, then every model of its folder by `inbox model check`, each with its element and kind", () => {
    const { bin, marker } = fakeTools();
    const result = spawnSync('bash', [SCRIPT, '--project', PROJECT, '--dry-run', '--app', REFUSED_MODELS_APP], {
      cwd: ROOT,
      encoding: 'utf8',
      env: deployEnv({ PATH: `${bin}:${process.env.PATH ?? ''}` }),
      timeout: 60_000,
    });
    const models = `${REFUSED_MODELS_APP}/bpmn`;
    const lines = result.stderr.trimEnd().split('\n');
    expect({ status: result.status, stdout: result.stdout, first: lines[0] }).toEqual({
      status: 1,
      stdout: '',
      // Which refused file `inbox app` names first is the parser's race; the lines below name both.
      first: expect.stringMatching(
        new RegExp(
          `^error: the app ${REFUSED_MODELS_APP} does not load, nothing was deployed: inbox: ${REFUSED_MODELS_APP}/index\\.ts: ${models}/(approval|merge)\\.bpmn: `,
        ),
      ),
    });
    expect(lines.slice(1)).toEqual([
      `  every model of ${models} (inbox model check):`,
      expect.stringMatching(
        new RegExp(
          `^    ${models}/approval\\.bpmn: refused: transaction approve: unsupported element transaction; supported are`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^    ${models}/merge\\.bpmn: refused: complexGateway join: unsupported element complexGateway; supported are`,
        ),
      ),
      `    ${models}/work.bpmn: loads, process work-only`,
      '    3 files: 1 loads, 2 refused',
    ]);
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});

describe('json-tool app-topology (what deploy.sh takes of `inbox --json app`)', () => {
  const VALID = {
    folder: 'apps/p',
    topology: {
      app: 'pp',
      inbound: [{ topic: 'p-in', subscription: 'p-in-push', messages: ['M'] }],
      deadLetter: { topic: 'p-dlt', subscription: 'p-dlt-push' },
      publishes: ['p-out', 'p.out+2'],
      collections: [],
    },
  };
  const topology = (view: unknown): ReturnType<typeof spawnSync> => {
    const file = join(sandbox(), `app-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(view));
    return spawnSync('node', [join(ROOT, 'infra', 'lib', 'json-tool.js'), 'app-topology', file], { encoding: 'utf8' });
  };

  it('prints the folder, the name, each inbound topic with its subscription, the dead letters and each topic published to', () => {
    const result = topology(VALID);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      'folder apps/p\nname pp\ninbound p-in p-in-push\ndead-letter p-dlt p-dlt-push\npublishes p-out\npublishes p.out+2\n',
    );
  });

  it.each([
    [
      'a subscription with blanks',
      { ...VALID, topology: { ...VALID.topology, inbound: [{ topic: 'p-in', subscription: 'p in push' }] } },
      'topology.inbound[0].subscription "p in push" is no Pub/Sub name',
    ],
    [
      'a topic Pub/Sub reserves',
      { ...VALID, topology: { ...VALID.topology, publishes: ['goog-out'] } },
      'topology.publishes[0] "goog-out" is no Pub/Sub name',
    ],
    [
      'no dead-letter subscription',
      { ...VALID, topology: { ...VALID.topology, deadLetter: { topic: 'p-dlt' } } },
      'topology.deadLetter.subscription undefined is no Pub/Sub name',
    ],
    [
      'no inbound topic',
      { ...VALID, topology: { ...VALID.topology, inbound: [] } },
      'topology.inbound: no topic the app receives messages on',
    ],
    [
      'an app name no label takes',
      { ...VALID, topology: { ...VALID.topology, app: 'P p' } },
      'topology.app "P p" is no app name',
    ],
    [
      'a folder that leaves the repository',
      { ...VALID, folder: 'apps/../../etc' },
      'folder "apps/../../etc" is no folder relative to the repository root',
    ],
    ['an absolute folder', { ...VALID, folder: '/etc' }, 'folder "/etc" is no folder relative to the repository root'],
    ['no topology at all', { app: 'p' }, 'no "topology" (is this the output of `inbox --json app`?)'],
  ])('refuses %s, naming the field', (_what, view, message) => {
    const result = topology(view);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});
