/**
 * What the console's JSON API answers, for the browser tests of the page
 * alone (test/console/diagram.test.ts), before the real API and the pure
 * code of operations/ exist on this branch: an instance of the fixture
 * app's model, test/fixtures/app/bpmn/fixture-process.bpmn (its XML as
 * deployed, its node ids from the real parser) with explicit tokens,
 * timers, an incident and the overlays they make, plus the other views'
 * values. Explicit on purpose:
 * each value is what a test asserts the page shows. The end-to-end tests
 * against the local stack replace these with what the real operations read.
 */
import { modelNotes } from '../../functions/src/operations/model-notes';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { FIXTURE_APP_SUMMARY } from './app';
import type {
  DocumentRow,
  InstanceView,
  Overview,
  RepairOutcome,
  RepairRequest,
} from '../../functions/src/operations/types';

export const BPMN_PATH = join(__dirname, '..', 'fixtures', 'app', 'bpmn', 'fixture-process.bpmn');
export const INSTANCE_ID = 'pi-c-4711';
export const BUSINESS_KEY = 'C-4711';
export const TOKEN_A = 'ex-a1';
export const TOKEN_B = 'ex-b2';
/** The token whose cancel the fixture server refuses (409), as the engine refuses cancelling an ended token. */
export const REFUSED_TOKEN = TOKEN_B;
export const REFUSAL = `token ${REFUSED_TOKEN} is not live: nothing to cancel`;

/** The who-am-I answers of the two roles. */
export const WHOAMI = {
  localRepairer: {
    id: 'local operator',
    role: 'repairer',
    access: 'local',
    projectId: 'demo-inbox',
    app: FIXTURE_APP_SUMMARY,
  },
  iamViewer: {
    id: 'viewer@example.com',
    role: 'viewer',
    access: 'iam',
    projectId: 'demo-inbox',
    app: FIXTURE_APP_SUMMARY,
  },
} as const;

export async function fixtureModel(): Promise<{ xml: string; model: ProcessModel }> {
  const xml = readFileSync(BPMN_PATH, 'utf8');
  return { xml, model: await parseProcessModel(xml) };
}

function docRow(id: string, over: Partial<DocumentRow> = {}): DocumentRow {
  return {
    id,
    status: 'DONE',
    reason: null,
    messageName: 'TaskOpened',
    correlationKey: BUSINESS_KEY,
    attempts: 1,
    receivedAt: '2026-12-01T10:00:00.000Z',
    error: null,
    ...over,
  };
}

/** The instance with two tokens at the receive task: a duplicate waiting point, so an open incident there. */
export async function instanceView(): Promise<InstanceView> {
  const { xml, model } = await fixtureModel();
  const at = (id: string): string => {
    // The fixture names only elements the real model has.
    if (!(id in model.nodes)) throw new Error(`fixture names ${id}, which ${BPMN_PATH} does not have`);
    return id;
  };
  const wait = at('waitForCompletion');
  const timerAt = at('completionOverdue');
  return {
    row: {
      id: INSTANCE_ID,
      processKey: model.key,
      businessKey: BUSINESS_KEY,
      status: 'INCIDENT',
      createdAt: '2026-12-01T10:00:01.000Z',
      processVersion: model.version,
      activeTokens: 2,
      openIncidents: 1,
    },
    variables: { caseId: BUSINESS_KEY },
    tokens: [
      {
        id: TOKEN_A,
        activityId: wait,
        status: 'WAITING_MESSAGE',
        waitingFor: `TaskCompleted/${BUSINESS_KEY}`,
        calledInstanceId: null,
      },
      {
        id: TOKEN_B,
        activityId: wait,
        status: 'WAITING_MESSAGE',
        waitingFor: `TaskCompleted/${BUSINESS_KEY}`,
        calledInstanceId: null,
      },
    ],
    timers: [
      { id: 'tm-1', activityId: timerAt, status: 'PENDING', dueAt: '2026-12-15T10:00:01.000Z' },
      { id: 'tm-2', activityId: timerAt, status: 'PENDING', dueAt: '2026-12-15T10:00:02.000Z' },
    ],
    incidents: [
      {
        reason: 'DUPLICATE_WAITING_POINT',
        activityId: wait,
        executionId: TOKEN_B,
        message: `two tokens wait for TaskCompleted/${BUSINESS_KEY}`,
        createdAt: '2026-12-01T10:00:02.000Z',
        resolvedAt: null,
      },
    ],
    jobs: [{ id: 'job-1', activityId: at('handOver'), status: 'DONE', attempts: 1, lastError: null }],
    audit: [
      { inboxId: 'msg-released-1', row: docRow('msg-released-1') },
      { inboxId: 'msg-purged', row: null },
    ],
    parked: [
      docRow('msg-completed-9', {
        status: 'PARKED',
        reason: 'AMBIGUOUS',
        messageName: 'TaskCompleted',
        error: 'two tokens wait for this key',
      }),
    ],
    repairs: [
      {
        requestId: 'rq-old',
        kind: 'move-token',
        at: '2026-12-01T11:00:00.000Z',
        by: 'ops@example.com',
        via: 'console',
        details: { from: 'handOver', to: wait },
      },
    ],
    version: { id: model.version, deployed: model.version, drawn: 'own' },
    model: { processKey: model.key, version: model.version, xml, notes: modelNotes(model) },
    overlays: [
      { activityId: wait, tokens: 2, waiting: 2, timers: 0, incidents: 1 },
      { activityId: timerAt, tokens: 0, waiting: 0, timers: 2, incidents: 0 },
    ],
    calledBy: null,
    calls: [],
  };
}

export const OVERVIEW: Overview = {
  at: '2026-12-02T00:00:00.000Z',
  counts: { OPEN: 3, DONE: 120, PARKED: 7 },
  parkedByReason: { AMBIGUOUS: 2, INVALID: 5, NO_WAITING_POINT: 0 },
  oldestOpenAgeSeconds: 93,
  openIncidents: 1,
  failedJobs: 0,
  waitingAlertDays: 14,
  waiting: [{ kind: 'message', messageName: 'TaskCompleted', waitingOverThreshold: 0, oldestWaitingAgeSeconds: 3_600 }],
};

/** The basis every fixture outcome says it read: the page must send it back with its confirmation. */
export const FIXTURE_BASIS = {
  subject: 'token',
  facts: { at: 'Task_wait', step: '3', status: 'WAITING_MESSAGE' },
} as const;

/** In words, what the fixture server says a repair does (the real text comes from operations/repairs.ts). */
export function outcomeOf(request: RepairRequest, preview: boolean): RepairOutcome {
  const target =
    'instanceId' in request
      ? request.instanceId
      : 'id' in request
        ? request.id
        : `${request.processKey}@${request.version}`;
  const summary =
    request.kind === 'move-token'
      ? `moves token ${request.executionId ?? '(the only one)'} to ${request.activityId}`
      : request.kind === 'cancel-token'
        ? `cancels token ${request.executionId}`
        : `${request.kind} ${target}`;
  return {
    kind: request.kind,
    preview,
    target,
    summary,
    writes: [{ path: `processInstances/${target}`, op: 'set', fields: ['executions', 'repairs'] }],
    alreadyApplied: false,
    basis: FIXTURE_BASIS,
    expect: 'token:at=Task_wait;step=3;status=WAITING_MESSAGE',
    jobs: request.kind === 'move-token' ? 1 : 0,
    timers: 0,
    dispatched: preview ? 0 : request.kind === 'move-token' ? 1 : 0,
    timersDispatched: 0,
    by: 'local operator',
    at: '2026-12-02T00:00:05.000Z',
  };
}
