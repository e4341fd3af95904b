/**
 * infra/deploy.sh and infra/monitoring/, without Google Cloud: the dry run
 * must print every command with the required flags and call no gcloud at
 * all (the real mode: deploy-fake-gcloud.test.ts). No emulator needed. The
 * default app (the work-order example) deploys under the names a deployment
 * from before apps has, so an upgrade renames nothing; another app
 * (test/fixtures/apps/minimal) gets its own names and none of the example's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULTS } from '../../functions/src/config';
import {
  commandsOf,
  DEFAULT_APP,
  deploy,
  deployEnv,
  envOf,
  fakeTools,
  flag,
  FUNCTIONS,
  INDEXES,
  MONITORING,
  only,
  PROJECT,
  PUBSUB_AGENT,
  REGION,
  ROOT,
  RULES_AUTH,
  sa,
  sandbox,
  SCRIPT,
  TTL_FIELDS,
  uploadIgnoreFile,
  useSandbox,
} from './helpers';

useSandbox();

describe('deploy.sh --dry-run', () => {
  let stdout: string;
  let commands: string[];
  let marker: string;

  beforeAll(() => {
    const tools = fakeTools();
    marker = tools.marker;
    // execFileSync throws on a non-zero exit, so reaching the assertions means exit 0.
    stdout = execFileSync('bash', [SCRIPT, '--project', PROJECT, '--region', REGION, '--dry-run'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: deployEnv({ PATH: `${tools.bin}:${process.env.PATH ?? ''}` }),
      timeout: 60_000,
    });
    commands = commandsOf(stdout);
  }, 60_000);

  it('calls no gcloud (nor curl, nor firebase) at all, and prints only commands and comments', () => {
    expect(existsSync(marker)).toBe(false);
    expect(commands.length).toBeGreaterThan(50);
    for (const line of stdout.split('\n'))
      expect(line === '' || line.startsWith('+ ') || line.startsWith('# ')).toBe(true);
    for (const c of commands) expect(c).toMatch(/^(gcloud|curl) /);
    // Every gcloud command names the project, but the token that the Rules API calls pipe into curl (a token is not per project).
    for (const c of commands.filter((x) => x.startsWith('gcloud ') && !x.startsWith(RULES_AUTH)))
      expect(c).toContain(`--project=${PROJECT}`);
  });

  it('enables the APIs gen2 functions and the rest need', () => {
    const enable = only(commands, (c) => c.startsWith('gcloud services enable '), 'services enable');
    for (const api of [
      'firestore',
      'pubsub',
      'cloudfunctions',
      'run',
      'cloudbuild',
      'artifactregistry',
      'cloudtasks',
      'cloudscheduler',
      'logging',
      'monitoring',
      'iam',
      'eventarc',
      'firebaserules',
      'storage',
      'cloudtrace',
    ]) {
      expect(enable).toContain(` ${api}.googleapis.com`);
    }
  });

  it('deploys all eight functions as private gen2 HTTP functions on nodejs22 with their own service accounts', () => {
    const deploys = commands.filter((c) => c.startsWith('gcloud functions deploy '));
    const serviceAccount: Record<(typeof FUNCTIONS)[number], string> = {
      receivePubSubPush: 'inbox-receiver',
      receiveDeadLetter: 'inbox-receiver',
      startProcess: 'inbox-jobs',
      runJob: 'inbox-jobs',
      fireTimer: 'inbox-jobs',
      sweepJobs: 'inbox-jobs',
      relayInbox: 'inbox-relay',
      inboxConsole: 'inbox-console',
    };
    for (const fn of FUNCTIONS) {
      const mine = deploys.filter((c) => c.startsWith(`gcloud functions deploy ${fn} `));
      expect(mine.length).toBeGreaterThanOrEqual(1);
      for (const c of mine) {
        expect(c).toContain(' --gen2');
        expect(c).toContain(' --runtime=nodejs22');
        expect(c).toContain(' --no-allow-unauthenticated');
        expect(c).toContain(' --trigger-http');
        expect(c).toContain(' --source=.');
        expect(c).toContain(` --entry-point=${fn}`);
        expect(c).toContain(` --region=${REGION}`);
        expect(flag(c, 'service-account')).toBe(sa(serviceAccount[fn]));
        // Built by the project's own build identity (newer projects have no usable default).
        expect(flag(c, 'build-service-account')).toBe(`projects/${PROJECT}/serviceAccounts/${sa('inbox-build')}`);
        // Cloud Build bundles the app the functions load (gcp-build reads INBOX_APP), from an upload that holds it.
        expect(flag(c, 'set-build-env-vars')).toBe(`INBOX_APP=${DEFAULT_APP}`);
        expect(flag(c, 'ignore-file')).toBe(uploadIgnoreFile(DEFAULT_APP));
        // Every Cloud Run setting is explicit (their values, as gcloud sends them: deploy-rehearsal.test.ts).
        for (const setting of ['memory', 'cpu', 'timeout', 'concurrency', 'max-instances', 'min-instances'])
          expect({ fn, setting, value: flag(c, setting) }).toEqual({
            fn,
            setting,
            value: expect.stringMatching(/^[0-9.]+(Mi|Gi|s)?$/),
          });
      }
      // The last deploy carries the real URLs (placeholders in a dry run).
      // "^|^": gcloud's alternate delimiter (INBOX_REFERENCE_BUCKETS is a comma list).
      const env = envOf(mine[mine.length - 1] as string);
      expect(env).toMatchObject({
        GOOGLE_CLOUD_PROJECT: PROJECT,
        INBOX_PUSH_AUDIENCE: `https://URL_OF_${fn}`,
        INBOX_PUSH_SERVICE_ACCOUNTS: sa('inbox-push'),
        INBOX_RUN_JOB_URL: 'https://URL_OF_runJob',
        INBOX_FIRE_TIMER_URL: 'https://URL_OF_fireTimer',
        INBOX_RELAY_URL: 'https://URL_OF_relayInbox',
        INBOX_TASKS_SERVICE_ACCOUNT: sa('inbox-tasks'),
        INBOX_RELAY_TASKS_SERVICE_ACCOUNT: sa('inbox-relay-tasks'),
        INBOX_TASKS_LOCATION: REGION,
        INBOX_TASKS_QUEUE: DEFAULTS.INBOX_TASKS_QUEUE,
        INBOX_TIMERS_QUEUE: DEFAULTS.INBOX_TIMERS_QUEUE,
        INBOX_RELAY_QUEUE: DEFAULTS.INBOX_RELAY_QUEUE,
        INBOX_APP: DEFAULTS.INBOX_APP,
        INBOX_JOB_MAX_ATTEMPTS: String(DEFAULTS.INBOX_JOB_MAX_ATTEMPTS),
        INBOX_JOBS_QUEUE_MAX_ATTEMPTS: String(DEFAULTS.INBOX_JOBS_QUEUE_MAX_ATTEMPTS),
        INBOX_WAITING_ALERT_DAYS: String(DEFAULTS.INBOX_WAITING_ALERT_DAYS),
        INBOX_PAYLOAD_BUCKET: `${PROJECT}-inbox-payloads`,
        INBOX_REFERENCE_BUCKETS: '',
      });
    }
    // The topic a step publishes to is the app's, not a setting.
    for (const c of deploys) expect(Object.keys(envOf(c))).not.toContain('INBOX_PROVIDER_TOPIC');
    const relayTimeout = Number.parseInt(
      flag(deploys.find((c) => c.includes(' relayInbox ')) as string, 'timeout') ?? '0',
      10,
    );
    expect(relayTimeout).toBeGreaterThanOrEqual(60);
    for (const c of commands) expect(c).not.toContain(' --allow-unauthenticated');
  });

  it('lets exactly the right identities invoke each function', () => {
    const bindings = commands.filter((c) => c.startsWith('gcloud functions add-invoker-policy-binding '));
    const pairs = bindings.map((c) => `${c.split(' ')[3]} ${flag(c, 'member')}`).sort();
    expect(pairs).toEqual(
      [
        `receivePubSubPush serviceAccount:${sa('inbox-push')}`,
        `receiveDeadLetter serviceAccount:${sa('inbox-push')}`,
        `runJob serviceAccount:${sa('inbox-tasks')}`,
        `fireTimer serviceAccount:${sa('inbox-tasks')}`,
        `relayInbox serviceAccount:${sa('inbox-relay-tasks')}`,
        `relayInbox serviceAccount:${sa('inbox-scheduler')}`,
        `sweepJobs serviceAccount:${sa('inbox-scheduler')}`,
      ].sort(),
    );
  });

  it('keeps the task identities apart: the receiver can sign only fast-path tasks, which may invoke only relayInbox', () => {
    const actAs = commands
      .filter(
        (c) =>
          c.startsWith('gcloud iam service-accounts add-iam-policy-binding ') &&
          flag(c, 'role') === 'roles/iam.serviceAccountUser',
      )
      .map((c) => `${(flag(c, 'member') ?? '').replace('serviceAccount:', '')} -> ${c.split(' ')[4] ?? ''}`)
      .sort();
    // The console dispatches the jobs and timers of a repair, signed as inbox-tasks like the relay's and the job functions'.
    expect(actAs).toEqual(
      [
        `${sa('inbox-jobs')} -> ${sa('inbox-tasks')}`,
        `${sa('inbox-console')} -> ${sa('inbox-tasks')}`,
        `${sa('inbox-receiver')} -> ${sa('inbox-relay-tasks')}`,
        `${sa('inbox-relay')} -> ${sa('inbox-tasks')}`,
      ].sort(),
    );
    // Enqueue rights: the receiver only on the fast-path queue.
    const enqueue = commands
      .filter((c) => c.startsWith('gcloud tasks queues add-iam-policy-binding '))
      .map((c) => `${c.split(' ')[4] ?? ''} ${flag(c, 'member') ?? ''}`);
    expect(enqueue.filter((e) => e.includes('inbox-receiver@'))).toEqual([
      `inbox-relay serviceAccount:${sa('inbox-receiver')}`,
    ]);
    // Every function that moves a token may set a timer: the relay's and the job functions' identities enqueue on both process queues.
    expect(enqueue.filter((e) => !e.includes('inbox-receiver@')).sort()).toEqual(
      ['process-jobs', 'process-timers']
        .flatMap((q) => [
          `${q} serviceAccount:${sa('inbox-jobs')}`,
          `${q} serviceAccount:${sa('inbox-relay')}`,
          `${q} serviceAccount:${sa('inbox-console')}`,
        ])
        .sort(),
    );
    // An upgrade removes what an earlier version granted (the real look-up decides: deploy-fake-gcloud.test.ts).
    only(
      commands,
      (c) =>
        c.startsWith(`gcloud iam service-accounts remove-iam-policy-binding ${sa('inbox-tasks')} `) &&
        flag(c, 'member') === `serviceAccount:${sa('inbox-receiver')}`,
      'stale actAs removal',
    );
    only(
      commands,
      (c) =>
        c.startsWith('gcloud functions remove-invoker-policy-binding relayInbox ') &&
        flag(c, 'member') === `serviceAccount:${sa('inbox-tasks')}`,
      'stale invoker removal',
    );
  });

  it('lets every function identity write spans to Cloud Trace, and nothing more of it', () => {
    const traced = commands
      .filter(
        (c) =>
          c.startsWith(`gcloud projects add-iam-policy-binding ${PROJECT} `) &&
          flag(c, 'role') === 'roles/cloudtrace.agent',
      )
      .map((c) => flag(c, 'member'));
    expect(traced.sort()).toEqual(
      ['inbox-console', 'inbox-jobs', 'inbox-receiver', 'inbox-relay'].map((s) => `serviceAccount:${sa(s)}`).sort(),
    );
  });

  it('gives the build identity what Cloud Build needs, on the project', () => {
    const roles = commands
      .filter(
        (c) =>
          c.startsWith(`gcloud projects add-iam-policy-binding ${PROJECT} `) &&
          flag(c, 'member') === `serviceAccount:${sa('inbox-build')}`,
      )
      .map((c) => flag(c, 'role'));
    expect(roles.sort()).toEqual([
      'roles/artifactregistry.writer',
      'roles/logging.logWriter',
      'roles/storage.objectAdmin',
    ]);
    // Granted before the first build.
    const firstDeploy = commands.findIndex((c) => c.startsWith('gcloud functions deploy '));
    for (const c of commands.filter((x) => flag(x, 'member') === `serviceAccount:${sa('inbox-build')}`))
      expect(commands.indexOf(c)).toBeLessThan(firstDeploy);
  });

  it('creates the dedicated service accounts', () => {
    for (const name of [
      'inbox-receiver',
      'inbox-relay',
      'inbox-jobs',
      'inbox-push',
      'inbox-tasks',
      'inbox-relay-tasks',
      'inbox-scheduler',
      'inbox-build',
    ]) {
      only(commands, (c) => c.startsWith(`gcloud iam service-accounts create ${name} `), `service account ${name}`);
    }
  });

  it('pushes the completion topic to the receiver with OIDC, retry backoff and a dead-letter policy', () => {
    const sub = only(
      commands,
      (c) => c.startsWith('gcloud pubsub subscriptions create work-order-completed-push '),
      'completion subscription',
    );
    expect(flag(sub, 'topic')).toBe('work-order-completed');
    expect(flag(sub, 'push-endpoint')).toBe('https://URL_OF_receivePubSubPush');
    expect(flag(sub, 'push-auth-service-account')).toBe(sa('inbox-push'));
    expect(flag(sub, 'push-auth-token-audience')).toBe(flag(sub, 'push-endpoint'));
    expect(sub).toContain(' --min-retry-delay=10s');
    expect(sub).toContain(' --max-retry-delay=600s');
    expect(sub).toContain(' --dead-letter-topic=work-order-completed-dlt');
    expect(sub).toContain(' --max-delivery-attempts=10');
    expect(sub).toContain(' --message-retention-duration=7d');
    // The ack deadline must stay above the receiver's write deadline.
    expect(Number(flag(sub, 'ack-deadline')) * 1000).toBeGreaterThan(DEFAULTS.INBOX_WRITE_TIMEOUT_MS);
  });

  it('pushes the release topic to the receiver exactly as the completion topic: only the name and topic differ', () => {
    const [completion, release] = ['work-order-completed', 'work-order-released'].map((topic) =>
      only(commands, (c) => c.startsWith(`gcloud pubsub subscriptions create ${topic}-push `), `${topic}-push`),
    );
    expect(flag(release as string, 'topic')).toBe('work-order-released');
    const settings = (c: string): string[] =>
      c
        .split(' ')
        .slice(5)
        .filter((word) => !word.startsWith('--topic='));
    expect(settings(release as string)).toEqual(settings(completion as string));
  });

  it('pushes the dead-letter topic to receiveDeadLetter and keeps it 31 days', () => {
    const sub = only(
      commands,
      (c) => c.startsWith('gcloud pubsub subscriptions create work-order-completed-dlt-push '),
      'dead-letter subscription',
    );
    expect(flag(sub, 'topic')).toBe('work-order-completed-dlt');
    expect(flag(sub, 'push-endpoint')).toBe('https://URL_OF_receiveDeadLetter');
    expect(flag(sub, 'push-auth-service-account')).toBe(sa('inbox-push'));
    expect(flag(sub, 'push-auth-token-audience')).toBe('https://URL_OF_receiveDeadLetter');
    expect(sub).toContain(' --message-retention-duration=31d');
    expect(sub).not.toContain('--dead-letter-topic');
    // receiveDeadLetter writes with the same deadline as the receiver: the ack deadline must stay above it.
    expect(Number(flag(sub, 'ack-deadline')) * 1000).toBeGreaterThan(DEFAULTS.INBOX_WRITE_TIMEOUT_MS);
  });

  it('lets the Pub/Sub service agent publish to the dead-letter topic and ack each source subscription', () => {
    const publisher = only(
      commands,
      (c) => c.startsWith('gcloud pubsub topics add-iam-policy-binding work-order-completed-dlt '),
      'DLT publisher binding',
    );
    expect(flag(publisher, 'member')).toBe(PUBSUB_AGENT);
    expect(flag(publisher, 'role')).toBe('roles/pubsub.publisher');
    for (const source of ['work-order-completed-push', 'work-order-released-push']) {
      const subscriber = only(
        commands,
        (c) => c.startsWith(`gcloud pubsub subscriptions add-iam-policy-binding ${source} `),
        `subscriber binding on ${source}`,
      );
      expect(flag(subscriber, 'member')).toBe(PUBSUB_AGENT);
      expect(flag(subscriber, 'role')).toBe('roles/pubsub.subscriber');
      // The binding needs the subscription.
      expect(commands.indexOf(subscriber)).toBeGreaterThan(
        commands.findIndex((c) => c.startsWith(`gcloud pubsub subscriptions create ${source} `)),
      );
    }
  });

  it('creates the three queues with their retry configuration, process-jobs above INBOX_JOB_MAX_ATTEMPTS', () => {
    const jobs = only(commands, (c) => c.startsWith('gcloud tasks queues create process-jobs '), 'process-jobs queue');
    expect(flag(jobs, 'location')).toBe(REGION);
    expect(Number(flag(jobs, 'max-attempts'))).toBe(20);
    // runJob is told the same number: its last-attempt check depends on it.
    expect(Number(flag(jobs, 'max-attempts'))).toBe(DEFAULTS.INBOX_JOBS_QUEUE_MAX_ATTEMPTS);
    expect(Number(flag(jobs, 'max-attempts'))).toBeGreaterThan(DEFAULTS.INBOX_JOB_MAX_ATTEMPTS);
    expect(jobs).toContain(' --min-backoff=1s');
    expect(jobs).toContain(' --max-backoff=300s');
    expect(jobs).toContain(' --max-doublings=5');
    const relay = only(commands, (c) => c.startsWith('gcloud tasks queues create inbox-relay '), 'inbox-relay queue');
    expect(flag(relay, 'location')).toBe(REGION);
    expect(relay).toContain(' --max-attempts=5');
    expect(relay).toContain(' --min-backoff=1s');
    expect(relay).toContain(' --max-backoff=60s');
    // The fast path's rate brake (see platform.sh): a burst cannot correlate faster than this.
    expect(relay).toContain(' --max-dispatches-per-second=100');
    const timers = only(
      commands,
      (c) => c.startsWith(`gcloud tasks queues create ${DEFAULTS.INBOX_TIMERS_QUEUE} `),
      'process-timers queue',
    );
    expect(flag(timers, 'location')).toBe(REGION);
    expect(timers).toContain(' --max-attempts=20');
    expect(timers).toContain(' --min-backoff=1s');
    expect(timers).toContain(' --max-backoff=60s');
    expect(timers).toContain(' --max-dispatches-per-second=100');
  });

  it('schedules the relay and the job sweep every minute with an OIDC token of inbox-scheduler', () => {
    for (const [job, fn] of [
      ['inbox-relay', 'relayInbox'],
      ['inbox-sweep-jobs', 'sweepJobs'],
    ] as const) {
      const c = only(
        commands,
        (x) => x.startsWith(`gcloud scheduler jobs create http ${job} `),
        `scheduler job ${job}`,
      );
      expect(c).toContain("'--schedule=* * * * *'");
      expect(flag(c, 'uri')).toBe(`https://URL_OF_${fn}`);
      expect(flag(c, 'oidc-service-account-email')).toBe(sa('inbox-scheduler'));
      expect(flag(c, 'oidc-token-audience')).toBe(`https://URL_OF_${fn}`);
      expect(flag(c, 'location')).toBe(REGION);
      expect(flag(c, 'attempt-deadline')).toMatch(/^(60|90)s$/);
    }
  });

  it('creates one composite index command per index of firestore.indexes.json', () => {
    const creates = commands.filter((c) => c.startsWith('gcloud firestore indexes composite create '));
    expect(creates).toHaveLength(INDEXES.indexes.length);
    for (const index of INDEXES.indexes) {
      const fieldConfigs = index.fields
        .map(
          (f) =>
            `--field-config=field-path=${f.fieldPath},${f.arrayConfig === undefined ? `order=${(f.order ?? '').toLowerCase()}` : `array-config=${f.arrayConfig.toLowerCase()}`}`,
        )
        .join(' ');
      only(
        creates,
        // The whole list of field configs, from the scope before it to the flag after it: one index's fields may be the tail of another's.
        (c) =>
          c.includes(`--collection-group=${index.collectionGroup} `) &&
          c.includes(`--query-scope=${index.queryScope.toLowerCase()} ${fieldConfigs} --async`),
        `index ${index.collectionGroup} ${fieldConfigs}`,
      );
    }
  });

  it('creates the (default) database in Native mode at the region (the default Firestore location)', () => {
    const create = only(commands, (c) => c.startsWith('gcloud firestore databases create '), 'databases create');
    expect(create).toContain(" '--database=(default)' ");
    expect(flag(create, 'location')).toBe(REGION);
    expect(flag(create, 'type')).toBe('firestore-native');
  });

  it('deploys firestore.rules through the Firebase Rules API: a ruleset, then the cloud.firestore release, without the firebase CLI', () => {
    const auth = `${RULES_AUTH}curl -H @- `;
    const ruleset = only(
      commands,
      (c) => c.startsWith(auth) && c.endsWith(` https://firebaserules.googleapis.com/v1/projects/${PROJECT}/rulesets`),
      'ruleset create',
    );
    expect(ruleset).toContain(' -X POST ');
    expect(ruleset).toMatch(/ --data-binary @\S+ruleset\.json /);
    const release = only(
      commands,
      (c) => c.startsWith(auth) && c.endsWith(` https://firebaserules.googleapis.com/v1/projects/${PROJECT}/releases`),
      'release create',
    );
    expect(release).toContain(' -X POST ');
    expect(stdout).toContain(
      `"name":"projects/${PROJECT}/releases/cloud.firestore","rulesetName":"projects/${PROJECT}/rulesets/RULESET_ID"`,
    );
    expect(stdout).toContain(
      `PATCH https://firebaserules.googleapis.com/v1/projects/${PROJECT}/releases/cloud.firestore`,
    );
    // The ruleset comes before its release, and the rules API is enabled before both.
    expect(commands.indexOf(ruleset)).toBeLessThan(commands.indexOf(release));
    expect(commands.findIndex((c) => c.startsWith('gcloud services enable '))).toBeLessThan(commands.indexOf(ruleset));
    expect(stdout).not.toContain('firebase deploy');
  });

  it('applies the field overrides, and a TTL on every field firestore.indexes.json marks "ttl": true', () => {
    const updates = commands.filter((c) => c.startsWith('gcloud firestore indexes fields update '));
    expect(updates).toHaveLength(INDEXES.fieldOverrides.length);
    for (const o of INDEXES.fieldOverrides) {
      const c = only(
        updates,
        (x) =>
          x.startsWith(`gcloud firestore indexes fields update ${o.fieldPath} `) &&
          x.includes(`--collection-group=${o.collectionGroup} `),
        `override ${o.fieldPath}`,
      );
      if (o.indexes.length === 0) expect(c).toContain(' --disable-indexes');
    }
    // The relay sets expireAt on DONE documents, a firing on FIRED timers; without their TTL they would pile up.
    expect(TTL_FIELDS.map((o) => `${o.collectionGroup}.${o.fieldPath}`)).toEqual(
      expect.arrayContaining(['inbox.expireAt', 'timers.expireAt']),
    );
    const ttls = commands.filter((c) => c.startsWith('gcloud firestore fields ttls update '));
    expect(ttls).toHaveLength(TTL_FIELDS.length);
    for (const o of TTL_FIELDS) {
      const ttl = only(
        ttls,
        (c) =>
          c.startsWith(`gcloud firestore fields ttls update ${o.fieldPath} `) &&
          c.includes(` --collection-group=${o.collectionGroup} `),
        `TTL ${o.fieldPath}`,
      );
      expect(ttl).toContain(' --enable-ttl');
    }
  });

  it('applies every log-based metric, alert policy and dashboard under infra/monitoring', () => {
    for (const file of readdirSync(join(MONITORING, 'metrics'))) {
      const name = file.replace(/\.json$/, '');
      only(
        commands,
        (c) =>
          c.startsWith(`gcloud logging metrics create ${name} `) &&
          c.includes(`--config-from-file=infra/monitoring/metrics/${file}`),
        `metric ${name}`,
      );
    }
    for (const file of readdirSync(join(MONITORING, 'policies'))) {
      only(
        commands,
        (c) =>
          c.startsWith('gcloud alpha monitoring policies create ') &&
          c.includes(`--policy-from-file=infra/monitoring/policies/${file}`),
        `policy ${file}`,
      );
    }
    for (const file of readdirSync(join(MONITORING, 'dashboards'))) {
      only(
        commands,
        (c) =>
          c.startsWith('gcloud monitoring dashboards create ') &&
          c.includes(`--config-from-file=infra/monitoring/dashboards/${file}`),
        `dashboard ${file}`,
      );
    }
  });

  it('creates an email notification channel with --alert-email', () => {
    const result = deploy(['--project', PROJECT, '--dry-run', '--alert-email', 'oncall@example.com']);
    expect(result.status).toBe(0);
    only(
      commandsOf(result.stdout),
      (c) =>
        c.startsWith('gcloud beta monitoring channels create ') &&
        c.includes('--channel-labels=email_address=oncall@example.com'),
      'channel',
    );
    expect(result.stdout).toContain('"notificationChannels": ["projects/demo-proj/notificationChannels/CHANNEL_ID"]');
  }, 60_000);

  it('puts a non-default --region everywhere a location goes, and --firestore-location on the database', () => {
    const other = 'us-east4';
    const result = deploy(['--project', PROJECT, '--dry-run', '--region', other]);
    expect(result.status).toBe(0);
    const cs = commandsOf(result.stdout);
    expect(result.stdout).not.toContain(REGION);
    for (const c of cs.filter((x) => x.startsWith('gcloud functions deploy '))) {
      expect(flag(c, 'region')).toBe(other);
      expect(flag(c, 'set-env-vars')).toContain(`INBOX_TASKS_LOCATION=${other}`);
    }
    for (const c of cs.filter((x) => x.startsWith('gcloud functions add-invoker-policy-binding ')))
      expect(flag(c, 'region')).toBe(other);
    for (const c of cs.filter((x) => x.startsWith('gcloud tasks queues ') || x.startsWith('gcloud scheduler jobs ')))
      expect(flag(c, 'location')).toBe(other);
    expect(
      cs.filter((x) => x.startsWith('gcloud tasks queues create ') || x.startsWith('gcloud scheduler jobs create '))
        .length,
    ).toBe(5);
    expect(
      flag(
        only(cs, (c) => c.startsWith('gcloud firestore databases create '), 'databases create'),
        'location',
      ),
    ).toBe(other);

    const located = deploy(['--project', PROJECT, '--dry-run', '--region', other, '--firestore-location', 'nam5']);
    expect(located.status).toBe(0);
    expect(
      flag(
        only(commandsOf(located.stdout), (c) => c.startsWith('gcloud firestore databases create '), 'databases create'),
        'location',
      ),
    ).toBe('nam5');
    expect(
      flag(
        only(commandsOf(located.stdout), (c) => c.startsWith('gcloud tasks queues create process-jobs '), 'queue'),
        'location',
      ),
    ).toBe(other);
  }, 60_000);

  it('without --runbook-url applies the policy files as they are: texts that name their runbook section and need no link', () => {
    expect(stdout).toContain('# no --runbook-url: the alert texts name their runbook section');
    expect(stdout).not.toContain('runbook links:');
    for (const file of readdirSync(join(MONITORING, 'policies'))) {
      const content = (
        JSON.parse(readFileSync(join(MONITORING, 'policies', file), 'utf8')) as { documentation: { content: string } }
      ).documentation.content;
      expect({ file, links: /\]\(|https?:\/\//.test(content) }).toEqual({ file, links: false });
    }
  });

  it('with --runbook-url renders every docs/runbook.md#anchor of every policy as URL#anchor', () => {
    const url = 'https://github.com/example/inbox/blob/main/docs/runbook.md';
    const result = deploy(['--project', PROJECT, '--dry-run', `--runbook-url=${url}`]);
    expect(result.status).toBe(0);
    expect(result.stdout).not.toContain('# no --runbook-url');
    for (const file of readdirSync(join(MONITORING, 'policies'))) {
      const content = (
        JSON.parse(readFileSync(join(MONITORING, 'policies', file), 'utf8')) as { documentation: { content: string } }
      ).documentation.content;
      const anchors = [...content.matchAll(/docs\/runbook\.md#([a-z0-9-]+)/g)].map((m) => `${url}#${m[1] as string}`);
      expect(anchors.length).toBeGreaterThan(0);
      const note = result.stdout
        .split('\n')
        .find((l) => l.startsWith(`# infra/monitoring/policies/${file}: runbook links: `));
      expect(note?.split(': runbook links: ')[1]?.trim().split(' ')).toEqual(anchors);
    }
  }, 60_000);

  it.each([
    'ftp://example.com/runbook.md',
    'https://github.com/example/inbox/blob/main/docs/runbook.md#alerts',
    'docs/runbook.md',
  ])(
    '--runbook-url %s is refused (exit 2) before anything is created',
    (url) => {
      const result = deploy(['--project', PROJECT, '--dry-run', '--runbook-url', url]);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('--runbook-url must be an http(s) URL of docs/runbook.md without a #fragment');
      expect(commandsOf(result.stdout)).toEqual([]);
    },
    60_000,
  );

  it("--console-viewers / --console-repairers: run.invoker for each (user: or serviceAccount:), their lists and audiences in the console's settings only", () => {
    const bot = `console-bot@${PROJECT}.iam.gserviceaccount.com`;
    const result = deploy([
      '--project',
      PROJECT,
      '--dry-run',
      `--console-viewers=ann@example.com, ${bot}`,
      '--console-repairers',
      'ops@example.com',
    ]);
    expect(result.status).toBe(0);
    const cs = commandsOf(result.stdout);
    const members = cs
      .filter((c) => c.startsWith('gcloud functions add-invoker-policy-binding inboxConsole '))
      .map((c) => flag(c, 'member'));
    expect(members.sort()).toEqual(['user:ann@example.com', `serviceAccount:${bot}`, 'user:ops@example.com'].sort());
    const consoleDeploys = cs.filter((c) => c.startsWith('gcloud functions deploy inboxConsole '));
    expect(envOf(consoleDeploys[consoleDeploys.length - 1] as string)).toMatchObject({
      INBOX_CONSOLE_VIEWERS: `ann@example.com,${bot}`,
      INBOX_CONSOLE_REPAIRERS: 'ops@example.com',
      // gcloud's client id (a user's token, as `inbox console` sends it) and the console's own URL.
      INBOX_CONSOLE_AUDIENCES: `${DEFAULTS.INBOX_CONSOLE_AUDIENCES},https://URL_OF_inboxConsole`,
    });
    for (const c of cs.filter(
      (x) => x.startsWith('gcloud functions deploy ') && !x.startsWith('gcloud functions deploy inboxConsole '),
    ))
      expect(c).not.toContain('INBOX_CONSOLE_');
  }, 60_000);

  it('--console-repairers with something that is no e-mail is refused (exit 2) before anything is created', () => {
    const result = deploy(['--project', PROJECT, '--dry-run', '--console-repairers=user:ops@example.com']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("--console-repairers: 'user:ops@example.com' is not an e-mail address");
    expect(commandsOf(result.stdout)).toEqual([]);
  }, 60_000);

  it('passes --max-delivery-attempts through', () => {
    const result = deploy(['--project', PROJECT, '--dry-run', '--max-delivery-attempts=25']);
    expect(result.status).toBe(0);
    // On both receiver subscriptions.
    expect(result.stdout.match(/ --max-delivery-attempts=25 /g)).toHaveLength(2);
  }, 60_000);
});

describe('deploy.sh argument errors exit 2 before doing anything', () => {
  it.each([
    [
      ['--project', PROJECT, '--dry-run', '--max-delivery-attempts=4'],
      /--max-delivery-attempts must be a whole number from 5 to 100.*got '4'/,
    ],
    [
      ['--project', PROJECT, '--dry-run', '--max-delivery-attempts', '101'],
      /--max-delivery-attempts must be a whole number from 5 to 100/,
    ],
    [
      ['--project', PROJECT, '--dry-run', '--max-delivery-attempts', 'ten'],
      /--max-delivery-attempts must be a whole number/,
    ],
    [['--dry-run'], /--project is required/],
    [['--region', REGION], /--project is required/],
    [['--project', PROJECT, '--dry-run', '--bogus'], /unknown option: --bogus/],
    [['--project', PROJECT, '--region'], /--region needs a value/],
    [['--project', 'Not_A_Project', '--dry-run'], /is not a project id/],
  ])('%j', (args, message) => {
    const { bin, marker } = fakeTools();
    const result = spawnSync('bash', [SCRIPT, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: deployEnv({ PATH: `${bin}:${process.env.PATH ?? ''}` }),
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(commandsOf(result.stdout)).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it('--help prints the usage and exits 0', () => {
    const result = deploy(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Usage: infra/deploy.sh --project PROJECT_ID');
  });
});

it('deploy.sh and its libraries pass shellcheck', () => {
  // Fails rather than skips without shellcheck: a skipped check reads as a passed one. .ci/run installs it.
  const installed = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' }).status === 0;
  if (!installed)
    throw new Error(
      'shellcheck is not installed: apt-get install shellcheck (Debian/Ubuntu; .ci/run installs it when missing)',
    );
  // Each library is named: -x follows `source` for definitions only and reports nothing inside a sourced file.
  const libraries = readdirSync(join(ROOT, 'infra', 'lib'))
    .filter((f) => f.endsWith('.sh'))
    .map((f) => `infra/lib/${f}`);
  expect(libraries.length).toBeGreaterThanOrEqual(4);
  const result = spawnSync('shellcheck', ['-x', 'infra/deploy.sh', ...libraries], { cwd: ROOT, encoding: 'utf8' });
  expect(result.stdout).toBe('');
  expect(result.status).toBe(0);
});

describe('json-tool ttls (the TTL fields deploy.sh enables)', () => {
  const ttls = (fieldOverrides: unknown): ReturnType<typeof spawnSync> => {
    const file = join(sandbox(), `indexes-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ indexes: [], fieldOverrides }));
    return spawnSync('node', [join(ROOT, 'infra', 'lib', 'json-tool.js'), 'ttls', file], { encoding: 'utf8' });
  };

  it('lists every override with "ttl": true and skips false and absent', () => {
    const result = ttls([
      { collectionGroup: 'inbox', fieldPath: 'expireAt', ttl: true, indexes: [] },
      { collectionGroup: 'jobs', fieldPath: 'purgeAt', ttl: true, indexes: [] },
      { collectionGroup: 'inbox', fieldPath: 'receivedAt', ttl: false, indexes: [] },
      { collectionGroup: 'inbox', fieldPath: 'payload', indexes: [] },
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('inbox expireAt\njobs purgeAt\n');
  });

  it('rejects a ttl that is not a boolean, as the Firebase CLI does', () => {
    const result = ttls([{ collectionGroup: 'inbox', fieldPath: 'expireAt', ttl: 'true', indexes: [] }]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('field override inbox.expireAt: "ttl" must be true or false, got "true"');
    expect(result.stdout).toBe('');
  });
});
