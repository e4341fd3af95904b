/**
 * infra/deploy.sh and infra/monitoring/, without Google Cloud: the dry run
 * must print every command with the required flags and call no gcloud at
 * all; the real mode is driven by a fake gcloud to check "create if missing,
 * else update". No emulator needed.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { DEFAULTS } from '../../functions/src/config';

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'infra', 'deploy.sh');
const MONITORING = join(ROOT, 'infra', 'monitoring');
const PROJECT = 'demo-proj';
const REGION = 'europe-west1';
const FUNCTIONS = ['receivePubSubPush', 'receiveDeadLetter', 'startProcess', 'runJob', 'sweepJobs', 'relayInbox'] as const;
const sa = (name: string): string => `${name}@${PROJECT}.iam.gserviceaccount.com`;
const PUBSUB_AGENT = 'serviceAccount:service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com';

interface IndexField {
  fieldPath: string;
  order?: string;
  arrayConfig?: string;
}
interface IndexesFile {
  indexes: { collectionGroup: string; queryScope: string; fields: IndexField[] }[];
  fieldOverrides: { collectionGroup: string; fieldPath: string; indexes: unknown[] }[];
}
const INDEXES = JSON.parse(readFileSync(join(ROOT, 'firestore.indexes.json'), 'utf8')) as IndexesFile;

let sandbox: string;

/** A directory with fake gcloud and firebase that leave a marker when called, first on PATH. */
function fakeTools(): { bin: string; marker: string } {
  const bin = mkdtempSync(join(sandbox, 'bin-'));
  const marker = join(bin, 'CALLED');
  for (const tool of ['gcloud', 'firebase']) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> '${marker}'\nexit 1\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  return { bin, marker };
}

function deploy(args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const { bin } = fakeTools();
  return spawnSync('bash', [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, ...env }, timeout: 60_000 });
}

/** Printed commands ("+ gcloud ..." lines, without the "+ "). */
const commandsOf = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith('+ ')).map((l) => l.slice(2));

/** The value of --flag=VALUE in a printed command (unquoted). */
function flag(command: string, name: string): string | undefined {
  const match = new RegExp(`(?:^| )'?--${name}=([^' ]+|[^']*)'?(?= |$)`).exec(command);
  return match?.[1];
}

function only(commands: readonly string[], predicate: (c: string) => boolean, what: string): string {
  const found = commands.filter(predicate);
  if (found.length !== 1) throw new Error(`expected exactly one ${what}, found ${found.length}:\n${found.join('\n')}`);
  return found[0] as string;
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? jsonFiles(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : []));
}

/** GitHub's heading anchors. */
const slug = (heading: string): string => heading.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');

beforeAll(() => {
  sandbox = mkdtempSync(join(tmpdir(), 'infra-test-'));
});
afterAll(() => {
  rmSync(sandbox, { recursive: true, force: true });
});

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
      env: { ...process.env, PATH: `${tools.bin}:${process.env.PATH ?? ''}` },
      timeout: 60_000,
    });
    commands = commandsOf(stdout);
  }, 60_000);

  it('calls no gcloud (nor firebase) at all, and prints only commands and comments', () => {
    expect(existsSync(marker)).toBe(false);
    expect(commands.length).toBeGreaterThan(50);
    for (const line of stdout.split('\n')) expect(line === '' || line.startsWith('+ ') || line.startsWith('# ')).toBe(true);
    for (const c of commands) expect(c).toMatch(/^(gcloud|firebase) /);
    for (const c of commands.filter((x) => x.startsWith('gcloud '))) expect(c).toContain(`--project=${PROJECT}`);
  });

  it('enables the APIs gen2 functions and the rest need', () => {
    const enable = only(commands, (c) => c.startsWith('gcloud services enable '), 'services enable');
    for (const api of ['firestore', 'pubsub', 'cloudfunctions', 'run', 'cloudbuild', 'artifactregistry', 'cloudtasks', 'cloudscheduler', 'logging', 'monitoring', 'iam', 'eventarc']) {
      expect(enable).toContain(` ${api}.googleapis.com`);
    }
  });

  it('deploys all six functions as private gen2 HTTP functions on nodejs22 with their own service accounts', () => {
    const deploys = commands.filter((c) => c.startsWith('gcloud functions deploy '));
    const serviceAccount: Record<(typeof FUNCTIONS)[number], string> = {
      receivePubSubPush: 'inbox-receiver',
      receiveDeadLetter: 'inbox-receiver',
      startProcess: 'inbox-jobs',
      runJob: 'inbox-jobs',
      sweepJobs: 'inbox-jobs',
      relayInbox: 'inbox-relay',
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
        expect(flag(c, 'memory')).toMatch(/^(256|512)Mi$/);
        expect(flag(c, 'timeout')).toMatch(/^\d+s$/);
      }
      // The last deploy carries the real URLs (placeholders in a dry run).
      const env = Object.fromEntries((flag(mine[mine.length - 1] as string, 'set-env-vars') ?? '').split(',').map((kv) => kv.split('=', 2) as [string, string]));
      expect(env).toMatchObject({
        GOOGLE_CLOUD_PROJECT: PROJECT,
        INBOX_PUSH_AUDIENCE: `https://URL_OF_${fn}`,
        INBOX_PUSH_SERVICE_ACCOUNTS: sa('inbox-push'),
        INBOX_RUN_JOB_URL: 'https://URL_OF_runJob',
        INBOX_RELAY_URL: 'https://URL_OF_relayInbox',
        INBOX_TASKS_SERVICE_ACCOUNT: sa('inbox-tasks'),
        INBOX_TASKS_LOCATION: REGION,
        INBOX_TASKS_QUEUE: DEFAULTS.INBOX_TASKS_QUEUE,
        INBOX_RELAY_QUEUE: DEFAULTS.INBOX_RELAY_QUEUE,
        INBOX_PROVIDER_TOPIC: DEFAULTS.INBOX_PROVIDER_TOPIC,
        INBOX_JOB_MAX_ATTEMPTS: String(DEFAULTS.INBOX_JOB_MAX_ATTEMPTS),
        INBOX_JOBS_QUEUE_MAX_ATTEMPTS: String(DEFAULTS.INBOX_JOBS_QUEUE_MAX_ATTEMPTS),
      });
    }
    const relayTimeout = Number.parseInt(flag(deploys.find((c) => c.includes(' relayInbox ')) as string, 'timeout') ?? '0', 10);
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
        `relayInbox serviceAccount:${sa('inbox-tasks')}`,
        `relayInbox serviceAccount:${sa('inbox-scheduler')}`,
        `sweepJobs serviceAccount:${sa('inbox-scheduler')}`,
      ].sort(),
    );
  });

  it('creates the topics and the dedicated service accounts', () => {
    for (const topic of ['work-order-completed', 'work-order-completed-dlt', 'work-orders']) only(commands, (c) => c.startsWith(`gcloud pubsub topics create ${topic} `), `topic ${topic}`);
    for (const name of ['inbox-receiver', 'inbox-relay', 'inbox-jobs', 'inbox-push', 'inbox-tasks', 'inbox-scheduler']) {
      only(commands, (c) => c.startsWith(`gcloud iam service-accounts create ${name} `), `service account ${name}`);
    }
  });

  it('pushes the completion topic to the receiver with OIDC, retry backoff and a dead-letter policy', () => {
    const sub = only(commands, (c) => c.startsWith('gcloud pubsub subscriptions create work-order-completed-push '), 'completion subscription');
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

  it('pushes the dead-letter topic to receiveDeadLetter and keeps it 31 days', () => {
    const sub = only(commands, (c) => c.startsWith('gcloud pubsub subscriptions create work-order-completed-dlt-push '), 'dead-letter subscription');
    expect(flag(sub, 'topic')).toBe('work-order-completed-dlt');
    expect(flag(sub, 'push-endpoint')).toBe('https://URL_OF_receiveDeadLetter');
    expect(flag(sub, 'push-auth-service-account')).toBe(sa('inbox-push'));
    expect(flag(sub, 'push-auth-token-audience')).toBe('https://URL_OF_receiveDeadLetter');
    expect(sub).toContain(' --message-retention-duration=31d');
    expect(sub).not.toContain('--dead-letter-topic');
  });

  it('lets the Pub/Sub service agent publish to the dead-letter topic and ack the source subscription', () => {
    const publisher = only(commands, (c) => c.startsWith('gcloud pubsub topics add-iam-policy-binding work-order-completed-dlt '), 'DLT publisher binding');
    expect(flag(publisher, 'member')).toBe(PUBSUB_AGENT);
    expect(flag(publisher, 'role')).toBe('roles/pubsub.publisher');
    const subscriber = only(commands, (c) => c.startsWith('gcloud pubsub subscriptions add-iam-policy-binding work-order-completed-push '), 'subscriber binding');
    expect(flag(subscriber, 'member')).toBe(PUBSUB_AGENT);
    expect(flag(subscriber, 'role')).toBe('roles/pubsub.subscriber');
    // The binding needs the subscription.
    expect(commands.indexOf(subscriber)).toBeGreaterThan(commands.findIndex((c) => c.startsWith('gcloud pubsub subscriptions create work-order-completed-push ')));
  });

  it('creates both queues with their retry configuration, process-jobs above INBOX_JOB_MAX_ATTEMPTS', () => {
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
  });

  it('schedules the relay and the job sweep every minute with an OIDC token of inbox-scheduler', () => {
    for (const [job, fn] of [
      ['inbox-relay', 'relayInbox'],
      ['inbox-sweep-jobs', 'sweepJobs'],
    ] as const) {
      const c = only(commands, (x) => x.startsWith(`gcloud scheduler jobs create http ${job} `), `scheduler job ${job}`);
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
      const fieldConfigs = index.fields.map((f) => `--field-config=field-path=${f.fieldPath},order=${(f.order ?? '').toLowerCase()}`).join(' ');
      only(creates, (c) => c.includes(`--collection-group=${index.collectionGroup} `) && c.includes(fieldConfigs), `index ${index.collectionGroup} ${fieldConfigs}`);
    }
  });

  it('applies the field overrides and the TTL on inbox.expireAt, and says how to deploy the rules', () => {
    const updates = commands.filter((c) => c.startsWith('gcloud firestore indexes fields update '));
    expect(updates).toHaveLength(INDEXES.fieldOverrides.length);
    for (const o of INDEXES.fieldOverrides) {
      const c = only(updates, (x) => x.startsWith(`gcloud firestore indexes fields update ${o.fieldPath} `) && x.includes(`--collection-group=${o.collectionGroup} `), `override ${o.fieldPath}`);
      if (o.indexes.length === 0) expect(c).toContain(' --disable-indexes');
    }
    const ttl = only(commands, (c) => c.startsWith('gcloud firestore fields ttls update expireAt '), 'TTL');
    expect(ttl).toContain(' --collection-group=inbox ');
    expect(ttl).toContain(' --enable-ttl');
    expect(stdout).toContain('firebase deploy --only firestore:rules');
  });

  it('applies every log-based metric, alert policy and dashboard under infra/monitoring', () => {
    for (const file of readdirSync(join(MONITORING, 'metrics'))) {
      const name = file.replace(/\.json$/, '');
      only(commands, (c) => c.startsWith(`gcloud logging metrics create ${name} `) && c.includes(`--config-from-file=infra/monitoring/metrics/${file}`), `metric ${name}`);
    }
    for (const file of readdirSync(join(MONITORING, 'policies'))) {
      only(commands, (c) => c.startsWith('gcloud alpha monitoring policies create ') && c.includes(`--policy-from-file=infra/monitoring/policies/${file}`), `policy ${file}`);
    }
    for (const file of readdirSync(join(MONITORING, 'dashboards'))) {
      only(commands, (c) => c.startsWith('gcloud monitoring dashboards create ') && c.includes(`--config-from-file=infra/monitoring/dashboards/${file}`), `dashboard ${file}`);
    }
  });

  it('creates an email notification channel with --alert-email', () => {
    const result = deploy(['--project', PROJECT, '--dry-run', '--alert-email', 'oncall@example.com']);
    expect(result.status).toBe(0);
    only(commandsOf(result.stdout), (c) => c.startsWith('gcloud beta monitoring channels create ') && c.includes('--channel-labels=email_address=oncall@example.com'), 'channel');
    expect(result.stdout).toContain('"notificationChannels": ["projects/demo-proj/notificationChannels/CHANNEL_ID"]');
  }, 60_000);

  it('passes --max-delivery-attempts through', () => {
    const result = deploy(['--project', PROJECT, '--dry-run', '--max-delivery-attempts=25']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(' --max-delivery-attempts=25 ');
  }, 60_000);
});

describe('deploy.sh argument errors exit 2 before doing anything', () => {
  it.each([
    [['--project', PROJECT, '--dry-run', '--max-delivery-attempts=4'], /--max-delivery-attempts must be a whole number from 5 to 100.*got '4'/],
    [['--project', PROJECT, '--dry-run', '--max-delivery-attempts', '101'], /--max-delivery-attempts must be a whole number from 5 to 100/],
    [['--project', PROJECT, '--dry-run', '--max-delivery-attempts', 'ten'], /--max-delivery-attempts must be a whole number/],
    [['--dry-run'], /--project is required/],
    [['--region', REGION], /--project is required/],
    [['--project', PROJECT, '--dry-run', '--bogus'], /unknown option: --bogus/],
    [['--project', PROJECT, '--region'], /--region needs a value/],
    [['--project', 'Not_A_Project', '--dry-run'], /is not a project id/],
  ])('%j', (args, message) => {
    const { bin, marker } = fakeTools();
    const result = spawnSync('bash', [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` }, timeout: 60_000 });
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

/**
 * A fake gcloud for the real mode: SCENARIO=fresh (nothing exists) or
 * existing (everything does, one index and the TTL included). It logs every
 * call and answers the look-ups the script makes.
 */
const FAKE_GCLOUD = String.raw`#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
args="$*"
fn=$3
case "$args" in
  "projects describe"*) echo 123456789 ;;
  "functions describe"*)
    if [[ $SCENARIO == existing || -f "$FAKE_STATE/deployed-$fn" ]]; then echo "https://$(printf '%s' "$fn" | tr '[:upper:]' '[:lower:]')-abc-ew.a.run.app"; else exit 1; fi ;;
  "functions deploy"*) touch "$FAKE_STATE/deployed-$fn" ;;
  "firestore indexes composite list"*)
    if [[ $SCENARIO == existing ]]; then
      echo '[{"name":"projects/p/databases/(default)/collectionGroups/inbox/indexes/A1","queryScope":"COLLECTION","fields":[{"fieldPath":"shard","order":"ASCENDING"},{"fieldPath":"status","order":"ASCENDING"},{"fieldPath":"nextAttemptAt","order":"ASCENDING"},{"fieldPath":"__name__","order":"ASCENDING"}]}]'
    else echo '[]'; fi ;;
  "firestore indexes fields describe"*) if [[ $SCENARIO == existing ]]; then echo ACTIVE; fi ;;
  "alpha monitoring policies list"*) if [[ $SCENARIO == existing ]]; then echo projects/p/alertPolicies/42; fi ;;
  "alpha monitoring policies describe"*) echo '{"notificationChannels":["projects/p/notificationChannels/7"]}' ;;
  "alpha monitoring policies"*) for a in "$@"; do case $a in --policy-from-file=*) cat "$(printf '%s' "$a" | cut -d= -f2-)" >> "$FAKE_STATE/policies.json" ;; esac; done ;;
  "monitoring dashboards list"*) if [[ $SCENARIO == existing ]]; then echo projects/1/dashboards/d1; fi ;;
  "monitoring dashboards describe"*) echo etag-1 ;;
  *" describe "*) if [[ $SCENARIO != existing ]]; then exit 1; fi ;;
esac
exit 0
`;

describe('deploy.sh against a fake gcloud (create if missing, else update)', () => {
  function realRun(scenario: 'fresh' | 'existing'): { calls: string[]; stdout: string; policies: string } {
    const dir = mkdtempSync(join(sandbox, `${scenario}-`));
    writeFileSync(join(dir, 'gcloud'), FAKE_GCLOUD);
    chmodSync(join(dir, 'gcloud'), 0o755);
    const log = join(dir, 'calls.log');
    const result = spawnSync('bash', [SCRIPT, '--project', PROJECT], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dir}:${dirname(process.execPath)}:/usr/bin:/bin`, SCENARIO: scenario, FAKE_LOG: log, FAKE_STATE: dir },
      timeout: 60_000,
    });
    if (result.status !== 0) throw new Error(`deploy.sh failed (${String(result.status)}):\n${result.stderr}`);
    const policies = existsSync(join(dir, 'policies.json')) ? readFileSync(join(dir, 'policies.json'), 'utf8') : '';
    return { calls: readFileSync(log, 'utf8').trim().split('\n'), stdout: result.stdout, policies };
  }

  it('creates everything in a new project, deploying each function twice (URLs exist only after the first deploy)', () => {
    const { calls } = realRun('fresh');
    for (const fn of FUNCTIONS) {
      const deploys = calls.filter((c) => c.startsWith(`functions deploy ${fn} `));
      expect(deploys).toHaveLength(2);
      expect(deploys[0]).toContain(`INBOX_PUSH_AUDIENCE=https://pending.invalid/${fn}`);
      expect(deploys[1]).toContain(`INBOX_PUSH_AUDIENCE=https://${fn.toLowerCase()}-abc-ew.a.run.app`);
    }
    expect(calls.filter((c) => c.startsWith('firestore indexes composite create '))).toHaveLength(INDEXES.indexes.length);
    expect(calls.some((c) => c.startsWith('firestore fields ttls update expireAt '))).toBe(true);
    expect(calls.some((c) => c.startsWith('pubsub subscriptions create work-order-completed-push ') && c.includes('--push-endpoint=https://receivepubsubpush-abc-ew.a.run.app'))).toBe(true);
    expect(calls.some((c) => c.includes('service-123456789@gcp-sa-pubsub.iam.gserviceaccount.com'))).toBe(true);
    expect(calls.filter((c) => c.startsWith('alpha monitoring policies create '))).toHaveLength(readdirSync(join(MONITORING, 'policies')).length);
  }, 60_000);

  it('updates instead of creating when everything exists, and keeps the alert channels set by hand', () => {
    const { calls, policies } = realRun('existing');
    const creates = calls.filter((c) => / create( |$)/.test(c) && !c.startsWith('firestore indexes composite create ') && !c.startsWith('beta services identity create '));
    expect(creates).toEqual([]);
    for (const fn of FUNCTIONS) expect(calls.filter((c) => c.startsWith(`functions deploy ${fn} `))).toHaveLength(1);
    // Only the indexes that are not there yet (the fake has the first one).
    expect(calls.filter((c) => c.startsWith('firestore indexes composite create '))).toHaveLength(INDEXES.indexes.length - 1);
    expect(calls.some((c) => c.startsWith('firestore fields ttls update'))).toBe(false);
    for (const prefix of ['pubsub subscriptions update work-order-completed-push ', 'pubsub subscriptions update work-order-completed-dlt-push ', 'tasks queues update process-jobs ', 'tasks queues update inbox-relay ', 'scheduler jobs update http inbox-relay ', 'scheduler jobs update http inbox-sweep-jobs ', 'monitoring dashboards update projects/1/dashboards/d1 ']) {
      expect(calls.some((c) => c.startsWith(prefix))).toBe(true);
    }
    expect(calls.filter((c) => c.startsWith('logging metrics update '))).toHaveLength(readdirSync(join(MONITORING, 'metrics')).length);
    expect(calls.filter((c) => c.startsWith('alpha monitoring policies update projects/p/alertPolicies/42 '))).toHaveLength(readdirSync(join(MONITORING, 'policies')).length);
    expect(policies).toContain('projects/p/notificationChannels/7');
  }, 60_000);
});

describe('infra/monitoring files', () => {
  const files = jsonFiles(MONITORING);
  const parse = (file: string): Record<string, unknown> => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const metricNames = readdirSync(join(MONITORING, 'metrics')).map((f) => f.replace(/\.json$/, ''));

  it('are all valid JSON', () => {
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(() => parse(file)).not.toThrow();
  });

  it('name each log-based metric after its file and extract only fields the functions log', () => {
    const source = readSources(join(ROOT, 'functions', 'src'));
    for (const name of metricNames) {
      const metric = parse(join(MONITORING, 'metrics', `${name}.json`));
      expect(metric.name).toBe(name);
      expect(typeof metric.filter).toBe('string');
      for (const [, field] of JSON.stringify(metric).matchAll(/jsonPayload\.([A-Za-z]+)/g)) expect(source).toContain(field);
    }
  });

  it('point every alert policy at its runbook section, and use only metrics defined here', () => {
    const runbook = readFileSync(join(ROOT, 'docs', 'runbook.md'), 'utf8');
    const anchors = new Set([...runbook.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] as string)));
    const policies = readdirSync(join(MONITORING, 'policies'));
    expect(policies.length).toBeGreaterThanOrEqual(6);
    for (const file of policies) {
      const policy = parse(join(MONITORING, 'policies', file)) as { displayName?: string; documentation?: { content?: string }; conditions?: unknown[] };
      expect(policy.displayName).toMatch(/^Inbox: /);
      expect(policy.conditions?.length).toBeGreaterThan(0);
      const content = policy.documentation?.content ?? '';
      expect(content).toContain('docs/runbook.md');
      const anchor = /docs\/runbook\.md#([a-z0-9-]+)/.exec(content)?.[1];
      expect(anchor !== undefined && anchors.has(anchor)).toBe(true);
      expect(runbook).toContain(file);
    }
    for (const file of [...policies.map((f) => join(MONITORING, 'policies', f)), ...jsonFiles(join(MONITORING, 'dashboards'))]) {
      for (const [, used] of readFileSync(file, 'utf8').matchAll(/logging\.googleapis\.com\/user\/([a-z0-9_]+)/g)) {
        expect({ file: relative(ROOT, file), metric: used, defined: metricNames.includes(used as string) }).toMatchObject({ defined: true });
      }
    }
  });
});

function readSources(dir: string): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? readSources(join(dir, e.name)) : e.name.endsWith('.ts') ? readFileSync(join(dir, e.name), 'utf8') : ''))
    .join('\n');
}

const shellcheck = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' }).status === 0;
(shellcheck ? it : it.skip)('deploy.sh and its libraries pass shellcheck (skipped where shellcheck is not installed)', () => {
  // -x follows the sourced infra/lib/*.sh files.
  const result = spawnSync('shellcheck', ['-x', 'infra/deploy.sh'], { cwd: ROOT, encoding: 'utf8' });
  expect(result.stdout).toBe('');
  expect(result.status).toBe(0);
});
