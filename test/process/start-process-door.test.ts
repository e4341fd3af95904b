import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { ModelError } from '../../functions/src/bpmn/model';
import { instanceId } from '../../functions/src/engine/ids';
import { refs } from '../../functions/src/engine/store/collections';
import { createLogger } from '../../functions/src/log';
import { createStartProcessHandler } from '../../functions/src/process/start-process';
import { MAX_VARIABLES_BYTES, MAX_VARIABLE_VALUES } from '../../functions/src/process/variables';
import type { Engine } from '../../functions/src/engine/engine';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';

/**
 * startProcess refuses at the door, with 400 and the reason, what could never
 * run or never be stored: a start without the variable the model correlates
 * on (which ends in INCIDENT / MISSING_CORRELATION_KEY), variables Firestore
 * cannot store (too large, nested arrays, field paths too long, lone
 * surrogates), and never answers such input as retryable.
 */
const PROCESS = 'fixture-process';
/** The jobs a start creates are not under test here (test/engine/happy-path.test.ts runs them). */
const noQueue: JobQueue = { enqueue: async () => 'CREATED' };
const db = freshFirestores()('start-door');
let server: ReturnType<typeof getTestServer>;

/** startProcess served by the Functions Framework, as deployed, with `engine` as its engine loader. */
function serve(name: string, loadEngine: () => Promise<Engine>) {
  http(
    name,
    createStartProcessHandler({
      db: () => db,
      engine: loadEngine,
      queue: () => noQueue,
      timerQueue: () => noQueue,
      log: createLogger(() => undefined),
      now: () => new Date(),
    }),
  );
  return getTestServer(name);
}

beforeAll(async () => {
  const engine = await fixtureEngine();
  server = serve('startProcessDoor', async () => engine);
});

const start = (body: unknown) =>
  request(server)
    .post('/')
    .send(body as object);
const stored = async (businessKey: string): Promise<boolean> =>
  (await refs.instance(db, instanceId(PROCESS, businessKey)).get()).exists;

/** A key of `n` bytes for nesting: Firestore counts a field path in UTF-8 bytes, dots included. */
const nested = (depth: number, keyBytes: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < depth; i++) value = { [`${i}`.padEnd(keyBytes, 'k')]: value };
  return value;
};

describe('startProcess: the variables the model correlates on are required', () => {
  test.each([
    ['missing', {}],
    ['an empty string', { caseId: '' }],
    ['a boolean', { caseId: true }],
    ['null', { caseId: null }],
    ['an object', { caseId: { id: 'C-1' } }],
  ])('caseId %s: 400 naming the variable and the waiting point, nothing stored', async (name, variables) => {
    const businessKey = `C-missing-${name.replace(/\W+/g, '-')}`;
    const res = await start({ processKey: PROCESS, businessKey, variables });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('variables.caseId');
    expect(res.body.error).toContain('waitForCompletion');
    expect(res.body.retry).toBeUndefined();
    expect(await stored(businessKey)).toBe(false);
  });

  test.each([
    ['whitespace around it', ' C-7 ', 'whitespace around it'],
    ['over the 256 characters a message key may have', 'W'.repeat(257), '257 characters long'],
  ])(
    'caseId with %s: 400, since no message could ever carry that key (the receiver trims and bounds keys)',
    async (_name, caseId, why) => {
      const businessKey = `C-unreachable-${caseId.length}`;
      const res = await start({ processKey: PROCESS, businessKey, variables: { caseId } });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('variables.caseId');
      expect(res.body.error).toContain(why);
      expect(await stored(businessKey)).toBe(false);
    },
  );

  test('a key of exactly 256 characters is the longest a message can carry, so it starts', async () => {
    const res = await start({ processKey: PROCESS, businessKey: 'C-256', variables: { caseId: 'W'.repeat(256) } });
    expect(res.status).toBe(201);
  });

  test('a number is a valid correlation key (the engine waits under its text)', async () => {
    const res = await start({ processKey: PROCESS, businessKey: 'C-number', variables: { caseId: 4711 } });
    expect(res.status).toBe(201);
  });
});

describe('startProcess: a timer variable the model cannot read is refused', () => {
  test('completionDeadline that is no ISO 8601 duration: 400 naming the variable and the timer, nothing stored', async () => {
    const res = await start({
      processKey: PROCESS,
      businessKey: 'C-deadline-bad',
      variables: { caseId: 'C-deadline-bad', completionDeadline: 'in two weeks' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('variables.completionDeadline');
    expect(res.body.error).toContain('completionOverdue');
    expect(await stored('C-deadline-bad')).toBe(false);
  });

  test('a valid one starts', async () => {
    const res = await start({
      processKey: PROCESS,
      businessKey: 'C-deadline-ok',
      variables: { caseId: 'C-deadline-ok', completionDeadline: 'PT5S' },
    });
    expect(res.status).toBe(201);
  });
});

describe('startProcess: variables Firestore cannot store are refused with 400, never 5xx', () => {
  const base = { caseId: 'C-x' };
  test.each([
    [
      'a value over Firestore`s 1 MiB limit',
      { ...base, notes: 'x'.repeat(1_100_000) },
      `at most ${MAX_VARIABLES_BYTES} bytes`,
    ],
    [
      'variables over the bound, far below Firestore`s limit',
      { ...base, notes: 'x'.repeat(MAX_VARIABLES_BYTES) },
      `at most ${MAX_VARIABLES_BYTES} bytes`,
    ],
    [
      'more values than the bound',
      { ...base, list: Array.from({ length: MAX_VARIABLE_VALUES + 1 }, (_, i) => i % 2 === 0) },
      `at most ${MAX_VARIABLE_VALUES} values`,
    ],
    ['an array inside an array', { ...base, matrix: [[1, 2], [3]] }, 'variables.matrix[0] is an array inside an array'],
    ['a field path over 1,500 bytes', { ...base, deep: nested(3, 500) }, 'field path'],
    [
      'a short string with a lone surrogate',
      { ...base, note: 'a\ud800' },
      'variables.note is not valid Unicode (lone surrogate)',
    ],
    [
      'a long string with a lone surrogate',
      { ...base, note: `${'x'.repeat(200)}\udc00` },
      'variables.note is not valid Unicode (lone surrogate)',
    ],
    ['a key with a lone surrogate', { ...base, ['k\ud800']: 1 }, 'is not valid Unicode (lone surrogate)'],
    [
      'a lone surrogate in the correlation key',
      { caseId: 'C-\ud800' },
      'variables.caseId is not valid Unicode (lone surrogate)',
    ],
  ])('%s: 400 with the reason, nothing stored', async (name, variables, error) => {
    const businessKey = `C-store-${name.replace(/\W+/g, '-').slice(0, 40)}`;
    const res = await start({ processKey: PROCESS, businessKey, variables });
    expect({ status: res.status, retry: res.body.retry }).toEqual({ status: 400, retry: undefined });
    expect(res.body.error).toContain(error);
    expect(await stored(businessKey)).toBe(false);
  });

  test('a lone surrogate in the business key: 400 (two such keys would even share an instance id)', async () => {
    const res = await start({ processKey: PROCESS, businessKey: 'C-\udfff', variables: base });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('businessKey is not valid Unicode (lone surrogate)');
  });

  test('just inside every bound: 201, and the instance holds the variables unchanged', async () => {
    const variables = {
      ...base,
      caseId: 'C-inside',
      notes: 'ü'.repeat(20_000),
      deep: nested(3, 450),
      list: Array.from({ length: 1_000 }, (_, i) => i),
    };
    const res = await start({ processKey: PROCESS, businessKey: 'C-inside', variables });
    expect(res.status).toBe(201);
    const snap = await refs.instance(db, instanceId(PROCESS, 'C-inside')).get();
    expect(snap.get('variables')).toEqual(variables);
  });
});

describe('startProcess: a defect is 500 and not advertised as retryable', () => {
  const base = { caseId: 'C-broken' };
  test('an engine that cannot load: 500, retry false', async () => {
    const broken = serve('startProcessBrokenEngine', async () => {
      throw new ModelError('not readable as BPMN XML', 'fixture-process');
    });
    const res = await request(broken).post('/').send({ processKey: PROCESS, businessKey: 'C-broken', variables: base });
    expect(res.status).toBe(500);
    expect(res.body.retry).toBe(false);
  });
});
