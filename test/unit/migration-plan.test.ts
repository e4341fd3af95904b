/**
 * engine/migration/: the plan of a migration from one version to another,
 * on the fixtures of issue 40 (v1: prepare → waitApproval with a reminder
 * timer → pay; v2: the wait renamed waitDecision, audit before pay) and on
 * variants of them drawn here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import {
  fingerprint,
  formatMigrationExpect,
  migrationBasis,
  parseMigrationExpect,
} from '../../functions/src/engine/migration/expect';
import { type ElementMapping, mappingErrors, planMigration } from '../../functions/src/engine/migration/plan';
import type { ExecutionState, InstanceState, JobState, TimerState } from '../../functions/src/engine/state';

const DIR = join(__dirname, '..', 'fixtures', 'bpmn-versions');
const V1 = readFileSync(join(DIR, 'v1.bpmn'), 'utf8');
const V2 = readFileSync(join(DIR, 'v2.bpmn'), 'utf8');
const t0 = new Date('2026-12-07T10:00:00Z');
const now = new Date('2026-12-07T10:20:00Z');
let v1: ProcessModel;
let v2: ProcessModel;

beforeAll(async () => {
  v1 = await parseProcessModel(V1);
  v2 = await parseProcessModel(V2);
});

const instance = (version: string, ids: string[]): InstanceState => ({
  id: 'i-1',
  processKey: 'case-handling',
  processVersion: version,
  businessKey: 'C-1',
  status: 'RUNNING',
  variables: { caseId: 'C-1' },
  activeExecutionIds: ids,
  incidents: [],
  createdAt: t0,
  updatedAt: t0,
  completedAt: null,
});
const token = (over: Partial<ExecutionState>): ExecutionState => ({
  id: 'e-1',
  processInstanceId: 'i-1',
  activityId: 'waitApproval',
  status: 'WAITING_MESSAGE',
  step: 3,
  jobId: null,
  waitingFor: { messageName: 'Approved', correlationKey: 'C-1' },
  createdAt: t0,
  updatedAt: t0,
  ...over,
});
const remind: TimerState = {
  id: 'timer-remind',
  processInstanceId: 'i-1',
  executionId: 'e-1',
  activityId: 'remind',
  waitingAt: 'waitApproval',
  step: 3,
  dueAt: new Date('2026-12-07T11:00:00Z'),
  occurrence: 1,
  repetitionsLeft: 0,
  intervalMs: null,
  status: 'PENDING',
  createdAt: t0,
  firedAt: null,
};
const atWait = token({ timerIds: [remind.id] });

const plan = (
  source: ProcessModel,
  target: ProcessModel,
  tokens: ExecutionState[],
  mapping: ElementMapping = {},
  extra: { jobs?: Record<string, JobState>; timers?: TimerState[] } = {},
) =>
  planMigration({
    instance: instance(
      source.version,
      tokens.map((t) => t.id),
    ),
    tokens: Object.fromEntries(tokens.map((t) => [t.id, t])),
    jobs: extra.jobs ?? {},
    timers: Object.fromEntries((extra.timers ?? [remind]).map((t) => [t.id, t])),
    source,
    target,
    mapping,
    now,
  });

test('a token at a wait that the target renamed has no target without a mapping, and the refusal says what to map', () => {
  const p = plan(v1, v2, [atWait]);
  expect(p.refusals).toHaveLength(1);
  expect(p.refusals[0]).toMatch(
    /no target: the target version draws no waitApproval; map it with --map waitApproval=TARGET/,
  );
});

test('mapped to the renamed wait (same message, same key), the token moves, its point follows and its reminder keeps its due time', () => {
  const p = plan(v1, v2, [atWait], { waitApproval: 'waitDecision' });
  expect(p.refusals).toEqual([]);
  expect(p.moves).toEqual([
    expect.objectContaining({
      executionId: 'e-1',
      from: 'waitApproval',
      to: 'waitDecision',
      status: 'WAITING_MESSAGE',
    }),
  ]);
  expect(p.changes.instance.processVersion).toBe(v2.version);
  expect(p.changes.executions[0]).toMatchObject({ activityId: 'waitDecision', timerIds: ['timer-remind'] });
  expect(p.changes.keepTimers).toEqual([{ id: 'timer-remind', activityId: 'remind', waitingAt: 'waitDecision' }]);
  expect(p.changes.cancelTimers).toEqual([]);
  expect(p.changes.createTimers).toEqual([]);
  expect(p.changes.points).toEqual([
    {
      op: 'rewrite',
      correlationKey: 'C-1',
      executionId: 'e-1',
      activityId: 'waitApproval',
      to: { activityId: 'waitDecision' },
    },
  ]);
  expect(p.moves[0]?.effects.join('; ')).toContain('stays due at 2026-12-07T11:00:00.000Z');
});

test('a wait mapped to an element of another kind is refused', () => {
  const p = plan(v1, v2, [atWait], { waitApproval: 'audit' });
  expect(p.refusals[0]).toMatch(/waitApproval is a receiveTask and audit a serviceTask; an element never changes kind/);
});

test('a wait whose message changes in the target is refused: its point would be filed under the wrong message', async () => {
  const renamed = await parseProcessModel(V2.replace('name="Approved"', 'name="Decided"'));
  const p = plan(v1, renamed, [atWait], { waitApproval: 'waitDecision' });
  expect(p.refusals[0]).toMatch(/waits for Approved under caseId, and waitDecision for Decided under caseId/);
});

test('a wait whose correlation key changes in the target is refused', async () => {
  const rekeyed = await parseProcessModel(
    V2.replace('inbox:correlationKey="caseId"', 'inbox:correlationKey="orderId"'),
  );
  expect(plan(v1, rekeyed, [atWait], { waitApproval: 'waitDecision' }).refusals[0]).toMatch(
    /under caseId, and waitDecision for Approved under orderId/,
  );
});

test('a job in flight stays with its task of the same id; mapped to a task with another handler, it is refused', () => {
  const job: JobState = {
    id: 'job-1',
    processInstanceId: 'i-1',
    executionId: 'e-2',
    activityId: 'prepare',
    status: 'PENDING',
    attempts: 0,
    lastError: null,
    createdAt: t0,
    finishedAt: null,
  };
  const atPrepare = token({
    id: 'e-2',
    activityId: 'prepare',
    status: 'WAITING_JOB',
    jobId: 'job-1',
    waitingFor: null,
  });
  const same = plan(v1, v2, [atPrepare], {}, { jobs: { 'job-1': job }, timers: [] });
  expect(same.refusals).toEqual([]);
  expect(same.moves[0]).toMatchObject({ from: 'prepare', to: 'prepare' });
  expect(same.changes.jobs).toEqual([]);
  const other = plan(v1, v2, [atPrepare], { prepare: 'audit' }, { jobs: { 'job-1': job }, timers: [] });
  expect(other.refusals[0]).toMatch(/its job runs the handler prepare, and audit would run audit/);
});

test('a token waiting at a join half reached is refused', () => {
  const joined = token({ id: 'e-3', activityId: 'prepare', status: 'WAITING_JOIN', arrivedBy: 'f1', waitingFor: null });
  expect(plan(v1, v1, [joined], {}, { timers: [] }).refusals[0]).toMatch(
    /waits at a join half reached \(arrived by f1\)/,
  );
});

test('a boundary timer only the source draws is removed; one only the target draws is set from now', async () => {
  const bare = await parseProcessModel(
    V2.replace(/<bpmn:boundaryEvent[\s\S]*?<\/bpmn:boundaryEvent>/, '')
      .replace(/<bpmn:sequenceFlow id="f5"[^>]*\/>/, '')
      .replace(/<bpmn:serviceTask id="nudge"[^>]*\/>\s*<bpmn:endEvent id="nudged" \/>/, '')
      .replace(/<bpmn:sequenceFlow id="f6"[^>]*\/>/, ''),
  );
  const removed = plan(v1, bare, [atWait], { waitApproval: 'waitDecision' });
  expect(removed.refusals).toEqual([]);
  expect(removed.changes.cancelTimers).toEqual(['timer-remind']);
  expect(removed.changes.executions[0]?.timerIds).toBeUndefined();
  const added = plan(
    bare,
    v1,
    [token({ activityId: 'waitDecision' })],
    { waitDecision: 'waitApproval' },
    { timers: [] },
  );
  expect(added.refusals).toEqual([]);
  expect(added.changes.createTimers).toEqual([
    expect.objectContaining({
      activityId: 'remind',
      waitingAt: 'waitApproval',
      executionId: 'e-1',
      dueAt: new Date(now.getTime() + 3_600_000),
    }),
  ]);
  expect(added.changes.executions[0]?.timerIds).toEqual([added.changes.createTimers[0]?.id]);
});

test('mapping entries that name no element are errors of the run', () => {
  expect(mappingErrors(v1, v2, { waitApproval: 'waitDecision' })).toEqual([]);
  expect(mappingErrors(v1, v2, { nowhere: 'waitDecision', prepare: 'gone' })).toEqual([
    '--map nowhere=waitDecision: the source version draws no element nowhere',
    '--map prepare=gone: the target version draws no element gone',
  ]);
});

test('the expect line lists each instance with the fingerprint of its basis; a token that moved changes it', () => {
  const a = fingerprint(migrationBasis(instance(v1.version, ['e-1']), { 'e-1': atWait }));
  const b = fingerprint(migrationBasis(instance(v1.version, ['e-1']), { 'e-1': { ...atWait, step: 4 } }));
  expect(a).not.toBe(b);
  const line = formatMigrationExpect(
    new Map([
      ['i-2', b],
      ['i-1', a],
    ]),
  );
  expect(line).toBe(`migration:i-1=${a},i-2=${b}`);
  expect(parseMigrationExpect(line)).toEqual(
    new Map([
      ['i-1', a],
      ['i-2', b],
    ]),
  );
  expect(parseMigrationExpect('tokens:status=RUNNING')).toBeNull();
  expect(parseMigrationExpect('migration:i-1=xyz')).toBeNull();
});

const CALL = readFileSync(join(__dirname, '..', 'fixtures', 'bpmn-call', 'order.bpmn'), 'utf8');
const ITEMS = readFileSync(join(__dirname, '..', 'fixtures', 'bpmn-items', 'inspection.bpmn'), 'utf8');
const onlyToken = async (sourceXml: string, targetXml: string, t: ExecutionState, mapping: ElementMapping = {}) => {
  const source = await parseProcessModel(sourceXml);
  const target = await parseProcessModel(targetXml);
  return planMigration({
    instance: { ...instance(source.version, [t.id]), processKey: source.key },
    tokens: { [t.id]: t },
    jobs: {},
    timers: {},
    source,
    target,
    mapping,
    now,
  });
};

test('a call in flight moves like for like, and its called instance then names the new element; another called process is refused', async () => {
  const atShip = token({ activityId: 'ship', status: 'WAITING_CALL', calledInstanceId: 'child-1', waitingFor: null });
  const renamed = CALL.replace(/"ship"/g, '"send"');
  const moved = await onlyToken(CALL, renamed, atShip, { ship: 'send' });
  expect(moved.refusals).toEqual([]);
  expect(moved.changes.callers).toEqual([{ instanceId: 'child-1', activityId: 'send' }]);
  expect(moved.moves[0]?.effects[0]).toMatch(/its called instance child-1 goes on unchanged/);
  const other = await onlyToken(
    CALL,
    CALL.replace('calledElement="fixture-shipment"', 'calledElement="fixture-notice"'),
    atShip,
  );
  expect(other.refusals[0]).toMatch(/it called fixture-shipment, and ship calls fixture-notice/);
});

test('a multi-instance activity in flight keeps its id and its characteristics, or is refused', async () => {
  const atItems = token({ activityId: 'inspect', status: 'WAITING_ITEMS', waitingFor: null });
  expect((await onlyToken(ITEMS, ITEMS, atItems)).refusals).toEqual([]);
  const sequential = ITEMS.replace(
    '<bpmn:multiInstanceLoopCharacteristics ',
    '<bpmn:multiInstanceLoopCharacteristics isSequential="true" ',
  );
  expect((await onlyToken(ITEMS, sequential, atItems)).refusals[0]).toMatch(
    /multi-instance characteristics of inspect change/,
  );
  const renamed = ITEMS.replace(/"inspect"/g, '"check"');
  expect((await onlyToken(ITEMS, renamed, atItems, { inspect: 'check' })).refusals[0]).toMatch(
    /a multi-instance activity in flight keeps its id/,
  );
  const plain = ITEMS.replace(/<bpmn:multiInstanceLoopCharacteristics[^>]*\/>/, '');
  expect((await onlyToken(ITEMS, plain, atItems)).refusals[0]).toMatch(
    /one of inspect and inspect is a multi-instance activity/,
  );
});

test('a token at an event-based gateway is refused', () => {
  const atGateway = token({ status: 'WAITING_EVENT', waitingFor: null });
  expect(plan(v1, v1, [atGateway], {}, { timers: [] }).refusals[0]).toMatch(/event-based gateway/);
});
