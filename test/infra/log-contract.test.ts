/**
 * The logging contract of the log-based metrics the last-resort alerts read:
 * each line is produced by the real handlers (in process) and held to the
 * filter of the metric that counts it, as the metric file states it
 * (test/support/log-filter.ts fails on any filter term it cannot evaluate).
 *
 * - every 4xx of both push endpoints: one `request rejected` line that
 *   inbox_push_rejections counts, with the function, status and reason the
 *   policy push-refused.json selects on (401/403/413 at the receiver, every
 *   refused push at receiveDeadLetter, which logs them at ERROR);
 * - a relay call that cannot read its gauges: its summary is not counted by
 *   the gauge metrics (so relay-gauges-missing.json sees their absence), and
 *   an ERROR line says why;
 * - the scheduled relay call's `waiting gauge` lines: one per waited message
 *   name, each one point of the waiting metrics under its messageName label,
 *   which the policy waiting-too-long.json groups by.
 */
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OAuth2Client } from 'google-auth-library';
import request from 'supertest';
import { createPushTokenVerifier } from '../../functions/src/auth/push-token';
import { loadConfig } from '../../functions/src/config';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import { receiveDeadLetterFunction, receivePubSubPushFunction } from '../../functions/src/wiring';
import { createRuntime } from '../../functions/src/runtime';
import { pushAuthCases, PUSHER } from '../support/auth-cases';
import { fixtureEngine } from '../support/engine';
import { FIXTURE_ENV } from '../support/app';
import type { Engine } from '../../functions/src/engine/engine';
import { freshFirestores } from '../support/firestore';
import { extractLabels, logMetric, parseFilter, UnsupportedFilterError, unmetTerms } from '../support/log-filter';
import { completionEnvelope } from '../support/push';
import { testDeadLetterReceiver, testReceiver } from '../support/receiver';
import { createSigner } from '../support/tokens';
import { MONITORING } from './helpers';

type Line = Record<string, unknown>;
const AUDIENCE = 'https://inbox.example.test/push';
const signer = createSigner();
const stranger = createSigner(signer.kid);
const db = freshFirestores()('log-contract');
const rejections = logMetric('inbox_push_rejections');

/** The label conditions of push-refused.json's condition for one function: which (status) lines would alert. */
function refusalCondition(fn: string): (labels: Readonly<Record<string, unknown>>) => boolean {
  const policy = JSON.parse(readFileSync(join(MONITORING, 'policies', 'push-refused.json'), 'utf8')) as {
    conditions: Array<{ conditionThreshold: { filter: string } }>;
  };
  const filters = policy.conditions
    .map((c) => c.conditionThreshold.filter)
    .filter((f) => f.includes(`metric.label.function="${fn}"`));
  expect(filters).toHaveLength(1);
  const checks = (filters[0] as string)
    .split(/\s+AND\s+/)
    .map((term): ((labels: Readonly<Record<string, unknown>>) => boolean) => {
      if (
        term === `metric.type="logging.googleapis.com/user/${rejections.name}"` ||
        term === 'resource.type="cloud_run_revision"'
      )
        return () => true;
      const equal = /^metric\.label\.([a-z]+)(!?=)"([^"]*)"$/.exec(term);
      if (equal !== null) return (labels) => (String(labels[equal[1] as string]) === equal[3]) === (equal[2] === '=');
      const regex = /^metric\.label\.([a-z]+)=monitoring\.regex\.full_match\("([^"]*)"\)$/.exec(term);
      if (regex !== null)
        return (labels) => new RegExp(`^(?:${regex[2] as string})$`).test(String(labels[regex[1] as string]));
      throw new UnsupportedFilterError(`push-refused.json condition term not evaluated here: ${term}`);
    });
  return (labels) => checks.every((check) => check(labels));
}

const verifier = createPushTokenVerifier({
  audience: AUDIENCE,
  allowedEmails: [PUSHER],
  client: new OAuth2Client(),
  certs: async () => signer.certs,
});
const ENDPOINTS = [
  { fn: 'receivePubSubPush', severity: 'WARNING', serve: testReceiver },
  { fn: 'receiveDeadLetter', severity: 'ERROR', serve: testDeadLetterReceiver },
] as const;

/** One refused request: how it is sent, and what the endpoint must answer and log. */
interface Refused {
  readonly name: string;
  readonly send: (server: Parameters<typeof request>[0]) => Promise<request.Response>;
  readonly status: number;
  readonly reason: string;
}
const post = (authorization: string | undefined, body: unknown) => (server: Parameters<typeof request>[0]) => {
  const call = request(server).post('/');
  return (authorization === undefined ? call : call.set('authorization', authorization)).send(body as object);
};
const valid = `Bearer ${signer.token({ aud: AUDIENCE })}`;
const refusedRequests: Refused[] = [
  ...pushAuthCases(signer, stranger, AUDIENCE).map((c) => ({
    name: c.name,
    send: post(c.authorization, completionEnvelope({ caseId: 'C-contract' })),
    status: c.status,
    reason: c.failure,
  })),
  {
    name: 'body over the limit',
    send: post(valid, completionEnvelope({ caseId: 'C-contract-big', eventId: 'x'.repeat(4_000) })),
    status: 413,
    reason: 'BODY_TOO_LARGE',
  },
  { name: 'not a push envelope', send: post(valid, { hello: 'world' }), status: 400, reason: 'NOT_A_PUSH_ENVELOPE' },
  {
    name: 'not a POST',
    send: (server) => request(server).get('/').set('authorization', valid),
    status: 405,
    reason: 'METHOD_NOT_ALLOWED',
  },
];

describe.each(ENDPOINTS)('$fn: every refusal is one line inbox_push_rejections counts', ({ fn, severity, serve }) => {
  const logs: Line[] = [];
  // The function name comes from the logger's base fields, as in functions/src/wiring.ts (checked below).
  const { server } = serve(db, {
    verifier: async () => verifier,
    maxBodyBytes: 2_048,
    log: createLogger((l) => logs.push(JSON.parse(l) as Line), { function: fn }),
  });
  const alerts = refusalCondition(fn);

  test.each(refusedRequests)('$name: $status $reason', async ({ send, status, reason }) => {
    logs.length = 0;
    const res = await send(server);
    expect(res.status).toBe(status);
    const lines = logs.filter((l) => l.message === 'request rejected');
    expect(lines).toHaveLength(1);
    const line = lines[0] as Line;
    // A request that is not a POST carries no message: a WARNING even at the last stop.
    expect(line.severity).toBe(status === 405 ? 'WARNING' : severity);
    expect(unmetTerms(rejections.filter, line)).toEqual([]);
    const labels = extractLabels(rejections, line);
    expect(labels).toEqual({ function: fn, status, reason });
    // The receiver pages on configuration faults only; the last stop on every refused push.
    const shouldAlert = fn === 'receiveDeadLetter' ? status !== 405 : [401, 403, 413].includes(status);
    expect(alerts(labels)).toBe(shouldAlert);
  });

  test('an accepted message is no refusal: not counted', async () => {
    logs.length = 0;
    const res = await post(valid, completionEnvelope({ caseId: `C-contract-ok-${fn}` }))(server);
    expect(res.status).toBe(200);
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) expect(unmetTerms(rejections.filter, line)).not.toEqual([]);
  });
});

/** relayInbox served by the Functions Framework under `name`, its log lines parsed into `logs`, queues that take every task. */
function servedRelay(name: string, engine: () => Promise<Engine>, logs: Line[]): ReturnType<typeof getTestServer> {
  http(
    name,
    createRelayHandler({
      db: () => db,
      engine,
      queue: () => ({ enqueue: async () => 'CREATED' }),
      timerQueue: () => ({ enqueue: async () => 'CREATED' }),
      log: createLogger((l) => logs.push(JSON.parse(l) as Line), { function: 'relayInbox' }),
      relay: loadConfig({ GOOGLE_CLOUD_PROJECT: 'demo-log-contract', INBOX_PUSH_AUTH: 'disabled' }).relay,
      shards: 16,
      now: () => new Date(),
      random: Math.random,
    }),
  );
  return getTestServer(name);
}

describe('the deployed wiring (functions/src/wiring.ts) logs refusals the same way', () => {
  /** The lines the functions write to stdout (their real sink) while `work` runs. */
  async function stdoutLines(work: () => Promise<unknown>): Promise<Line[]> {
    const write = process.stdout.write.bind(process.stdout);
    let text = '';
    process.stdout.write = (chunk: string | Uint8Array) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    };
    try {
      await work();
    } finally {
      process.stdout.write = write;
    }
    return text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  }

  const config = loadConfig({
    GOOGLE_CLOUD_PROJECT: 'demo-log-contract',
    ...FIXTURE_ENV,
    INBOX_PUSH_AUTH: 'enabled',
    INBOX_PUSH_AUDIENCE: AUDIENCE,
    INBOX_PUSH_SERVICE_ACCOUNTS: PUSHER,
  });
  const runtime = createRuntime(config);
  test.each([
    { fn: 'receivePubSubPush', factory: receivePubSubPushFunction, severity: 'WARNING' },
    { fn: 'receiveDeadLetter', factory: receiveDeadLetterFunction, severity: 'ERROR' },
  ] as const)(
    '$fn: a request without a token is 401 MISSING_TOKEN, logged at $severity with the function name',
    async ({ fn, factory, severity }) => {
      http(`${fn}Wired`, factory(config, runtime));
      const lines = await stdoutLines(async () =>
        expect(
          (
            await request(getTestServer(`${fn}Wired`))
              .post('/')
              .send(completionEnvelope({ caseId: 'C-wired' }))
          ).status,
        ).toBe(401),
      );
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ severity, message: 'request rejected', function: fn });
      expect(unmetTerms(rejections.filter, lines[0] as Line)).toEqual([]);
      expect(extractLabels(rejections, lines[0] as Line)).toEqual({
        function: fn,
        status: 401,
        reason: 'MISSING_TOKEN',
      });
    },
  );
});

describe('relayInbox: a summary without gauges is what relay-gauges-missing.json sees as absent', () => {
  const GAUGE_METRICS = [
    'inbox_gauge_open',
    'inbox_gauge_parked',
    'inbox_gauge_open_incidents',
    'inbox_gauge_failed_jobs',
    'inbox_gauge_oldest_open_age_seconds',
    'inbox_gauge_waiting_over_threshold',
    'inbox_gauge_oldest_waiting_age_seconds',
  ];

  test('gauges read: counted by inbox_gauge_open; gauges not read: by none of the gauge metrics, and an ERROR line says why', async () => {
    const logs: Line[] = [];
    const relay = servedRelay('relayLogContract', fixtureEngine, logs);
    const summaries = (): Line[] => logs.filter((l) => l.message === 'relay summary');

    expect((await request(relay).post('/').send({})).status).toBe(200);
    const healthy = summaries()[0] as Line;
    expect(unmetTerms(logMetric('inbox_relay_summaries').filter, healthy)).toEqual([]);
    expect(unmetTerms(logMetric('inbox_gauge_open').filter, healthy)).toEqual([]);

    // A real failure of the gauge read, not of the relay's work: an OPEN document edited by hand so that its
    // receivedAt is not a timestamp (the oldest-OPEN query returns it, the gauge cannot read its age); due
    // far in the future, so the relay's candidate query does not pick it up.
    await db
      .collection(INBOX)
      .doc('corrupt-received-at')
      .set({ status: 'OPEN', shard: 0, receivedAt: 'yesterday', nextAttemptAt: new Date(Date.now() + 86_400_000) });
    logs.length = 0;
    expect((await request(relay).post('/').send({})).status).toBe(200);
    const blind = summaries()[0] as Line;
    expect(blind.gauges).toBeNull();
    // Still a summary (the relay-silent condition stays quiet), but no gauge metric has a point from it.
    expect(unmetTerms(logMetric('inbox_relay_summaries').filter, blind)).toEqual([]);
    for (const name of GAUGE_METRICS)
      expect({ name, unmet: unmetTerms(logMetric(name).filter, blind).length > 0 }).toEqual({ name, unmet: true });
    // Nor any waiting gauge line: the waiting-too-long level keeps its state, relay-gauges-missing fires.
    expect(logs.filter((l) => l.message === 'waiting gauge')).toEqual([]);
    const why = logs.filter((l) => l.message === 'relay gauges not read');
    expect(why).toEqual([
      expect.objectContaining({
        severity: 'ERROR',
        function: 'relayInbox',
        error: expect.stringContaining('toMillis'),
      }),
    ]);
    expect(unmetTerms(logMetric('inbox_errors').filter, why[0] as Line)).toEqual([]);
    await db.collection(INBOX).doc('corrupt-received-at').delete();
  });
});

describe('relayInbox: each `waiting gauge` line is one point of the waiting metrics, labelled by its message name', () => {
  test('a token waiting 16 days: counted over the threshold, with its age, under messageName=TaskCompleted', async () => {
    const engine = await fixtureEngine();
    const at = new Date(Date.now() - 16 * 86_400_000);
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-contract-waiting',
      variables: { caseId: 'C-contract-waiting' },
      now: at,
    });
    await completeJobRun(db, engine, started.jobs[0]!, {}, at);
    const logs: Line[] = [];
    const relay = servedRelay('relayWaitingContract', async () => engine, logs);
    expect((await request(relay).post('/').send({})).status).toBe(200);
    const lines = logs.filter((l) => l.message === 'waiting gauge');
    expect(lines).toHaveLength(1);
    const line = lines[0] as Line;
    for (const name of ['inbox_gauge_waiting_over_threshold', 'inbox_gauge_oldest_waiting_age_seconds']) {
      const metric = logMetric(name);
      expect({ name, unmet: unmetTerms(metric.filter, line) }).toEqual({ name, unmet: [] });
      expect(extractLabels(metric, line)).toEqual({ messageName: 'TaskCompleted' });
    }
    expect(line.waitingGauge).toMatchObject({ waitingOverThreshold: 1, oldestWaitingAgeSeconds: expect.any(Number) });
    // The alert groups by exactly that label, so each message name is an incident of its own.
    const policy = JSON.parse(readFileSync(join(MONITORING, 'policies', 'waiting-too-long.json'), 'utf8')) as {
      conditions: Array<{ conditionThreshold: { filter: string; aggregations: Array<{ groupByFields: string[] }> } }>;
    };
    expect(
      policy.conditions.map((c) => [c.conditionThreshold.filter, c.conditionThreshold.aggregations[0]?.groupByFields]),
    ).toEqual([
      [
        'metric.type="logging.googleapis.com/user/inbox_gauge_waiting_over_threshold" AND resource.type="cloud_run_revision"',
        ['metric.label.messageName'],
      ],
    ]);
    // The summary line is counted by neither waiting metric (it carries the gauges as a list, which no metric can read).
    const summary = logs.find((l) => l.message === 'relay summary') as Line;
    expect(unmetTerms(logMetric('inbox_gauge_waiting_over_threshold').filter, summary)).not.toEqual([]);
  });
});

describe('the filter evaluator fails loudly on what it cannot evaluate', () => {
  test.each([
    ['OR and parentheses', logMetric('inbox_dead_lettered').filter],
    ['a request-log field', logMetric('inbox_receiver_5xx').filter],
    ['an unknown operator', 'jsonPayload.status<500'],
  ])('%s', (_what, filter) => {
    expect(() => parseFilter(filter)).toThrow(UnsupportedFilterError);
  });
});
