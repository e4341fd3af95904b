import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import {
  CORRELATED_MESSAGES_KEPT,
  type ExecutionState,
  type Incident,
  type InstanceState,
  type JobState,
  type Transition,
  type WaitingPoint,
} from '../../functions/src/engine/state';
import { type IncidentState, resolveIncidents } from '../../functions/src/engine/incidents';
import {
  cancelToken,
  completeJob,
  deliverMessage,
  failJob,
  placeToken,
  startInstance,
} from '../../functions/src/engine/transitions';

const REPO = join(__dirname, '..', '..');
const t0 = new Date('2026-11-29T10:00:00Z');
const t1 = new Date('2026-11-29T10:05:00Z');
let fixtureProcess: ProcessModel;
let routing: ProcessModel;
let approval: ProcessModel;

beforeAll(async () => {
  fixtureProcess = await loadProcessModel(join(REPO, 'test', 'fixtures', 'app', 'bpmn', 'fixture-process.bpmn'));
  routing = await loadProcessModel(join(REPO, 'test', 'fixtures', 'bpmn', 'gateway.bpmn'));
  approval = await loadProcessModel(join(REPO, 'test', 'fixtures', 'bpmn', 'receive-task.bpmn'));
});

const only = <T>(items: readonly T[]): T => {
  expect(items).toHaveLength(1);
  return items[0] as T;
};
const start = (model: ProcessModel, variables: Record<string, unknown>): Transition =>
  startInstance(model, {}, { instanceId: 'i-1', executionId: 'e-1', businessKey: 'C-1', variables, now: t0 });
/** The one token after `t`, with the instance's tokens as the store passes them. */
const stateOf = (
  t: Transition,
): { instance: InstanceState; execution: ExecutionState; tokens: Record<string, ExecutionState> } => ({
  instance: t.instance,
  execution: only(t.executions),
  tokens: Object.fromEntries(t.executions.map((e) => [e.id, e])),
});

describe('fixture-process', () => {
  test('start: the token stops at the async hand-over with one PENDING job', () => {
    const t = start(fixtureProcess, { caseId: 'C-1' });
    expect(t.instance).toMatchObject({
      status: 'RUNNING',
      activeExecutionIds: ['e-1'],
      processKey: 'fixture-process',
      businessKey: 'C-1',
    });
    const job = only(t.jobs);
    expect(job).toMatchObject({ activityId: 'handOver', status: 'PENDING', executionId: 'e-1', attempts: 0 });
    expect(only(t.executions)).toMatchObject({ activityId: 'handOver', status: 'WAITING_JOB', jobId: job.id });
    expect(t.subscribe).toEqual([]);
  });

  test('the whole path: hand-over → waiting point → correlation → settlement job → completed', () => {
    const started = start(fixtureProcess, { caseId: 'C-1' });
    const handOver = completeJob(
      fixtureProcess,
      {},
      { ...stateOf(started), job: only(started.jobs) },
      { handedOverMessageId: 'm-1' },
      t0,
    );
    expect(handOver.job.status).toBe('DONE');
    expect(only(handOver.subscribe)).toMatchObject({
      messageName: 'TaskCompleted',
      correlationKey: 'C-1',
      executionId: 'e-1',
      activityId: 'waitForCompletion',
    });
    expect(only(handOver.executions)).toMatchObject({
      status: 'WAITING_MESSAGE',
      waitingFor: { messageName: 'TaskCompleted', correlationKey: 'C-1' },
    });
    expect(handOver.instance.variables).toEqual({ caseId: 'C-1', handedOverMessageId: 'm-1' });

    const correlated = deliverMessage(fixtureProcess, {}, stateOf(handOver), { completedItems: 7 }, t1);
    expect(only(correlated.unsubscribe)).toMatchObject({ correlationKey: 'C-1', executionId: 'e-1' });
    const settlementJob = only(correlated.jobs);
    expect(settlementJob).toMatchObject({ activityId: 'settle' });
    // A second visit to an async task would get another job id: ids come from (execution, step).
    expect(settlementJob.id).not.toBe(only(started.jobs).id);

    const done = completeJob(
      fixtureProcess,
      {},
      { ...stateOf(correlated), job: settlementJob },
      { settlementId: 'C-1' },
      t1,
    );
    expect(done.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [], completedAt: t1 });
    expect(only(done.executions).status).toBe('ENDED');
    expect(done.jobs).toEqual([]);
  });

  test.each([
    ['missing', {}],
    ['empty', { caseId: '' }],
    ['an object', { caseId: { id: 1 } }],
  ])('a %s correlation variable raises MISSING_CORRELATION_KEY instead of waiting', (_name, variables) => {
    const started = start(fixtureProcess, variables);
    const t = completeJob(fixtureProcess, {}, { ...stateOf(started), job: only(started.jobs) }, {}, t0);
    expect(t.subscribe).toEqual([]);
    expect(t.instance.status).toBe('INCIDENT');
    expect(only(t.instance.incidents)).toMatchObject({
      reason: 'MISSING_CORRELATION_KEY',
      activityId: 'waitForCompletion',
    });
  });

  test('the audit trail: each delivered message id is appended, the last CORRELATED_MESSAGES_KEPT kept; a message without id leaves it alone', () => {
    const started = start(fixtureProcess, { caseId: 'C-1' });
    const waiting = completeJob(fixtureProcess, {}, { ...stateOf(started), job: only(started.jobs) }, {}, t0);
    expect(deliverMessage(fixtureProcess, {}, stateOf(waiting), {}, t1, 'inbox-1').instance.correlatedMessages).toEqual(
      ['inbox-1'],
    );
    expect(deliverMessage(fixtureProcess, {}, stateOf(waiting), {}, t1).instance.correlatedMessages).toBeUndefined();
    const long = Array.from({ length: CORRELATED_MESSAGES_KEPT }, (_, i) => `old-${i}`);
    const trail =
      deliverMessage(
        fixtureProcess,
        {},
        { ...stateOf(waiting), instance: { ...waiting.instance, correlatedMessages: long } },
        {},
        t1,
        'new',
      ).instance.correlatedMessages ?? [];
    expect(trail).toHaveLength(CORRELATED_MESSAGES_KEPT);
    expect(trail[0]).toBe('old-1');
    expect(trail.at(-1)).toBe('new');
  });

  test('a message for a token that does not wait is refused', () => {
    const started = start(fixtureProcess, { caseId: 'C-1' });
    expect(() => deliverMessage(fixtureProcess, {}, stateOf(started), {}, t0)).toThrow('does not wait for a message');
  });

  test('failJob: the job is FAILED, the token stays, the instance shows JOB_FAILED', () => {
    const started = start(fixtureProcess, { caseId: 'C-1' });
    const t = failJob({ ...stateOf(started), job: { ...only(started.jobs), attempts: 10 } }, 'provider down', t1);
    expect(t.job).toMatchObject({ status: 'FAILED', lastError: 'provider down' });
    expect(t.instance.status).toBe('INCIDENT');
    expect(only(t.instance.incidents)).toMatchObject({ reason: 'JOB_FAILED', activityId: 'handOver' });
    expect(only(t.executions)).toMatchObject({ status: 'WAITING_JOB', activityId: 'handOver' });
  });

  test('repairs: a token placed at the catch event waits there; cancelling it drops its waiting point', () => {
    const started = start(fixtureProcess, { caseId: 'C-1' });
    const second: ExecutionState = { ...only(started.executions), id: 'e-2', status: 'ACTIVE', step: 0 };
    const placed = placeToken(
      fixtureProcess,
      {},
      { instance: started.instance, execution: second, tokens: stateOf(started).tokens },
      'waitForCompletion',
      t1,
    );
    expect(only(placed.subscribe)).toMatchObject({ executionId: 'e-2', correlationKey: 'C-1' });
    expect(placed.instance.activeExecutionIds).toEqual(['e-1', 'e-2']);
    expect(() =>
      placeToken(
        fixtureProcess,
        {},
        { instance: started.instance, execution: second, tokens: stateOf(started).tokens },
        'noSuchActivity',
        t1,
      ),
    ).toThrow('noSuchActivity');

    const cancelled = cancelToken({ ...stateOf(placed) }, t1);
    expect(only(cancelled.unsubscribe)).toMatchObject({ executionId: 'e-2' });
    expect(only(cancelled.executions).status).toBe('CANCELLED');
    expect(cancelled.instance.activeExecutionIds).toEqual(['e-1']);
    expect(cancelled.instance.status).toBe('RUNNING');
  });
});

describe('jobs whose token leaves them are stale (staleJobs)', () => {
  const atHandOver = (): Transition => start(fixtureProcess, { caseId: 'C-1' });

  test('a repair that moves or cancels a token waiting for a job names that job; the job that finishes does not name itself', () => {
    const started = atHandOver();
    const job = only(started.jobs);
    expect(placeToken(fixtureProcess, {}, stateOf(started), 'waitForCompletion', t1).staleJobs).toEqual([job.id]);
    expect(cancelToken(stateOf(started), t1).staleJobs).toEqual([job.id]);
    expect(completeJob(fixtureProcess, {}, { ...stateOf(started), job }, {}, t1).staleJobs).toEqual([]);
  });

  test('a token waiting for a message holds no job: nothing is stale when it moves', () => {
    const started = atHandOver();
    const waiting = completeJob(fixtureProcess, {}, { ...stateOf(started), job: only(started.jobs) }, {}, t0);
    expect(deliverMessage(fixtureProcess, {}, stateOf(waiting), {}, t1).staleJobs).toEqual([]);
    expect(cancelToken(stateOf(waiting), t1).staleJobs).toEqual([]);
  });

  test('a token stopped by a FAILED job names it too (the store ends only PENDING ones)', () => {
    const started = atHandOver();
    const failed = failJob({ ...stateOf(started), job: only(started.jobs) }, 'boom', t1);
    expect(placeToken(fixtureProcess, {}, stateOf(failed), 'handOver', t1).staleJobs).toEqual([only(started.jobs).id]);
  });
});

describe('exclusive gateway (settlement-routing)', () => {
  test.each([
    ['items completed: the conditioned flow to the settlement', 5, 'settle', 'RUNNING'],
    ['nothing completed: the default flow to the end', 0, null, 'COMPLETED'],
    ['negative count: the default flow', -1, null, 'COMPLETED'],
  ])('%s', (_name, completedItems, jobActivity, status) => {
    const t = start(routing, { completedItems });
    expect(t.instance.status).toBe(status);
    expect(t.jobs.map((j: JobState) => j.activityId)).toEqual(jobActivity === null ? [] : [jobActivity]);
  });

  test('no condition holds and no default flow: NO_MATCHING_FLOW incident', () => {
    const gateway = routing.nodes['checkItems'];
    if (gateway?.kind !== 'exclusiveGateway') throw new Error('fixture changed');
    // The gateway keeps only its conditioned flow.
    const outgoing = gateway.outgoing.filter((id) => id !== gateway.defaultFlowId);
    const withoutDefault: ProcessModel = {
      ...routing,
      nodes: { ...routing.nodes, checkItems: { ...gateway, outgoing, defaultFlowId: null } },
    };
    const t = start(withoutDefault, { completedItems: 0 });
    expect(t.instance.status).toBe('INCIDENT');
    expect(only(t.instance.incidents)).toMatchObject({ reason: 'NO_MATCHING_FLOW', activityId: 'checkItems' });
  });
});

describe('receive task (order-approval)', () => {
  test('the token waits at the receive task; the correlated message moves it on to the next step', () => {
    const started = start(approval, { orderId: 4711 });
    expect(started.instance.status).toBe('RUNNING');
    expect(started.jobs).toEqual([]);
    // A number is a valid key: it is waited for as its string.
    expect(only(started.subscribe)).toMatchObject({
      messageName: 'ApprovalGiven',
      correlationKey: '4711',
      executionId: 'e-1',
      activityId: 'receiveApproval',
    });
    expect(only(started.executions)).toMatchObject({
      activityId: 'receiveApproval',
      status: 'WAITING_MESSAGE',
      waitingFor: { messageName: 'ApprovalGiven', correlationKey: '4711' },
    });

    const approved = deliverMessage(approval, {}, stateOf(started), { approvedBy: 'ops' }, t1, 'inbox-1');
    expect(only(approved.unsubscribe)).toMatchObject({
      messageName: 'ApprovalGiven',
      correlationKey: '4711',
      executionId: 'e-1',
      activityId: 'receiveApproval',
    });
    expect(approved.subscribe).toEqual([]);
    expect(only(approved.jobs)).toMatchObject({ activityId: 'shipOrder', status: 'PENDING', executionId: 'e-1' });
    expect(only(approved.executions)).toMatchObject({
      activityId: 'shipOrder',
      status: 'WAITING_JOB',
      waitingFor: null,
    });
    expect(approved.instance).toMatchObject({
      status: 'RUNNING',
      variables: { orderId: 4711, approvedBy: 'ops' },
      correlatedMessages: ['inbox-1'],
    });

    const shipped = completeJob(approval, {}, { ...stateOf(approved), job: only(approved.jobs) }, {}, t1);
    expect(shipped.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
  });

  test('without its correlation variable the receive task raises MISSING_CORRELATION_KEY', () => {
    const t = start(approval, {});
    expect(t.subscribe).toEqual([]);
    expect(only(t.instance.incidents)).toMatchObject({
      reason: 'MISSING_CORRELATION_KEY',
      activityId: 'receiveApproval',
    });
  });
});

describe('resolveIncidents: an operator closes the incidents once their cause is gone', () => {
  const t2 = new Date('2026-11-29T11:00:00Z');
  const incident = (reason: Incident['reason'], extra: Partial<Incident> = {}): Incident => ({
    reason,
    executionId: 'e-1',
    activityId: 'x',
    message: 'm',
    at: t0,
    ...extra,
  });
  // A literal, not start(): the tables below are built before beforeAll loads the models.
  const instance = (changes: Partial<InstanceState>): InstanceState => ({
    id: 'i-1',
    processKey: 'fixture-process',
    processVersion: 'v',
    businessKey: 'C-1',
    status: 'INCIDENT',
    variables: { caseId: 'C-1' },
    activeExecutionIds: ['e-1'],
    incidents: [incident('JOB_FAILED')],
    createdAt: t0,
    updatedAt: t0,
    completedAt: null,
    ...changes,
  });
  const token = (changes: Partial<ExecutionState>): ExecutionState => ({
    id: 'e-1',
    processInstanceId: 'i-1',
    activityId: 'handOver',
    status: 'WAITING_JOB',
    step: 1,
    jobId: 'j-1',
    waitingFor: null,
    createdAt: t0,
    updatedAt: t0,
    ...changes,
  });
  const job = (status: JobState['status']): JobState => ({
    id: 'j-1',
    processInstanceId: 'i-1',
    executionId: 'e-1',
    activityId: 'handOver',
    status,
    attempts: 1,
    lastError: null,
    createdAt: t0,
    finishedAt: null,
  });
  const point = (executionId: string, processInstanceId = 'i-1'): WaitingPoint => ({
    messageName: 'TaskCompleted',
    correlationKey: 'C-1',
    processInstanceId,
    executionId,
    activityId: 'waitForCompletion',
    createdAt: t0,
  });
  const waitingToken = token({
    activityId: 'waitForCompletion',
    status: 'WAITING_MESSAGE',
    jobId: null,
    waitingFor: { messageName: 'TaskCompleted', correlationKey: 'C-1' },
  });
  const state = (changes: Partial<IncidentState>): IncidentState => ({
    instance: instance({}),
    executions: [],
    jobs: {},
    waiting: {},
    ...changes,
  });

  test.each<[string, IncidentState, string]>([
    [
      'nothing open: a RUNNING instance without incidents',
      state({ instance: instance({ status: 'RUNNING', incidents: [] }) }),
      'has no open incident',
    ],
    [
      'nothing open: every incident resolved already',
      state({ instance: instance({ status: 'RUNNING', incidents: [incident('JOB_FAILED', { resolvedAt: t1 })] }) }),
      'has no open incident',
    ],
    [
      'a token stopped by the incident (ACTIVE)',
      state({ executions: [token({ status: 'ACTIVE', activityId: 'checkItems', jobId: null })] }),
      'token e-1 is stopped at checkItems',
    ],
    [
      'the token still waits for its FAILED job',
      state({ executions: [token({})], jobs: { 'j-1': job('FAILED') } }),
      'waits at handOver for FAILED job j-1',
    ],
    [
      'another token waits for the same message and key',
      state({ executions: [waitingToken], waiting: { 'C-1': [point('e-1'), point('e-9', 'i-9')] } }),
      'and so does e-9 of i-9: cancel one',
    ],
  ])('refused: %s', (_name, s, cause) => {
    const r = resolveIncidents(s, 'note', t2);
    expect(r.kind).toBe('REFUSED');
    expect(r.kind === 'REFUSED' ? r.causes.join('; ') : '').toContain(cause);
  });

  test.each<[string, InstanceState['status'], IncidentState]>([
    [
      'the job was re-run (a new PENDING job)',
      'RUNNING',
      state({ executions: [token({ jobId: 'j-2' })], jobs: { 'j-2': { ...job('PENDING'), id: 'j-2' } } }),
    ],
    ['the failed job is PENDING again', 'RUNNING', state({ executions: [token({})], jobs: { 'j-1': job('PENDING') } })],
    [
      'one waiting point left for the key',
      'RUNNING',
      state({
        instance: instance({ incidents: [incident('DUPLICATE_WAITING_POINT')] }),
        executions: [waitingToken],
        waiting: { 'C-1': [point('e-1')] },
      }),
    ],
    [
      'the other waiting point is for another message',
      'RUNNING',
      state({
        executions: [waitingToken],
        waiting: { 'C-1': [point('e-1'), { ...point('e-9', 'i-9'), messageName: 'Other' }] },
      }),
    ],
    [
      'every token ended while INCIDENT',
      'COMPLETED',
      state({ instance: instance({ activeExecutionIds: [], completedAt: t1 }) }),
    ],
  ])('resolved: %s → %s', (_name, status, s) => {
    const r = resolveIncidents(s, 'fixed the topic', t2);
    if (r.kind !== 'RESOLVED') throw new Error(`refused: ${r.causes.join('; ')}`);
    expect(r.resolved).toBe(1);
    expect(r.instance.status).toBe(status);
    expect(r.instance.completedAt).toEqual(status === 'COMPLETED' ? t1 : null);
    expect(only(r.instance.incidents)).toMatchObject({ resolvedAt: t2, resolution: 'fixed the topic' });
    expect(r.instance.resolvedIncidents).toBe(1);
    expect(r.instance.updatedAt).toBe(t2);
  });

  test('only open incidents are resolved: an earlier resolution keeps its time and note; the count adds up', () => {
    const earlier = incident('DUPLICATE_WAITING_POINT', { resolvedAt: t0, resolution: 'first' });
    const r = resolveIncidents(
      state({
        instance: instance({
          incidents: [earlier, incident('JOB_FAILED')],
          resolvedIncidents: 1,
          activeExecutionIds: [],
          completedAt: null,
        }),
      }),
      null,
      t2,
    );
    if (r.kind !== 'RESOLVED') throw new Error('refused');
    expect(r.resolved).toBe(1);
    expect(r.instance.incidents).toEqual([
      earlier,
      expect.objectContaining({ reason: 'JOB_FAILED', resolvedAt: t2, resolution: null }),
    ]);
    expect(r.instance).toMatchObject({ resolvedIncidents: 2, status: 'COMPLETED', completedAt: t2 });
  });
});
