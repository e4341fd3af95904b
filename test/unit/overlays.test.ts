import { overlaysOf, type WaitingAt } from '../../functions/src/operations/overlays';
import type { ElementOverlay, IncidentView, TimerView, TokenView } from '../../functions/src/operations/types';

const token = (id: string, activityId: string, status = 'WAITING_MESSAGE'): TokenView => ({
  id,
  activityId,
  status,
  waitingFor: status === 'WAITING_MESSAGE' ? 'TaskCompleted' : null,
  calledInstanceId: null,
});
const timer = (id: string, activityId: string, status = 'PENDING'): TimerView => ({
  id,
  activityId,
  status,
  dueAt: '2026-12-01T00:00:00.000Z',
});
const incident = (activityId: string | null, resolvedAt: string | null = null): IncidentView => ({
  reason: 'DUPLICATE_WAITING_POINT',
  activityId,
  executionId: 'e1',
  message: 'two tokens',
  createdAt: '2026-12-01T00:00:00.000Z',
  resolvedAt,
});
const at = (activityId: string, o: Partial<ElementOverlay>): ElementOverlay => ({
  activityId,
  tokens: 0,
  waiting: 0,
  timers: 0,
  incidents: 0,
  ...o,
});

type Case = [string, TokenView[], TimerView[], IncidentView[], WaitingAt[], ElementOverlay[]];
const cases: Case[] = [
  ['nothing: no overlays', [], [], [], [], []],
  [
    'one waiting token',
    [token('t1', 'wait')],
    [],
    [],
    [{ activityId: 'wait' }],
    [at('wait', { tokens: 1, waiting: 1 })],
  ],
  [
    'a double token: counts 2, with its open incident',
    [token('t1', 'wait'), token('t2', 'wait')],
    [],
    [incident('wait')],
    [{ activityId: 'wait' }, { activityId: 'wait' }],
    [at('wait', { tokens: 2, waiting: 2, incidents: 1 })],
  ],
  [
    'finished tokens put nothing on the diagram',
    [token('t1', 'end', 'ENDED'), token('t2', 'task', 'CANCELLED')],
    [],
    [],
    [],
    [],
  ],
  [
    'a PENDING timer on its boundary event; a FIRED one not',
    [token('t1', 'task', 'WAITING_JOB')],
    [timer('x1', 'deadline'), timer('x2', 'deadline', 'FIRED')],
    [],
    [],
    [at('deadline', { timers: 1 }), at('task', { tokens: 1 })],
  ],
  [
    'a resolved incident and one without an activity show nowhere',
    [],
    [],
    [incident('wait', '2026-12-01T01:00:00.000Z'), incident(null)],
    [],
    [],
  ],
  [
    'several elements in activity-id order',
    [token('t1', 'b'), token('t2', 'a', 'WAITING_EVENT')],
    [],
    [],
    [{ activityId: 'c' }, { activityId: 'b' }],
    [at('a', { tokens: 1 }), at('b', { tokens: 1, waiting: 1 }), at('c', { waiting: 1 })],
  ],
];

describe('overlaysOf', () => {
  test.each(cases)('%s', (_name, tokens, timers, incidents, waiting, expected) => {
    expect(overlaysOf(tokens, timers, incidents, waiting)).toEqual(expected);
  });
});

test('a called instance’s open incidents count on the call activity', () => {
  const incident: IncidentView = {
    reason: 'JOB_FAILED',
    activityId: 'pack',
    executionId: 'c-e',
    message: 'failed',
    createdAt: null,
    resolvedAt: null,
  };
  const call = { executionId: 'e', activityId: 'ship', instanceId: 'c', processKey: 'child', status: 'INCIDENT' };
  expect(
    overlaysOf(
      [{ ...token('e', 'ship', 'WAITING_CALL'), calledInstanceId: 'c' }],
      [],
      [],
      [],
      [{ ...call, openIncidents: [incident, incident] }],
    ),
  ).toEqual([{ activityId: 'ship', tokens: 1, waiting: 0, timers: 0, incidents: 2 }]);
  expect(overlaysOf([], [], [], [], [{ ...call, openIncidents: [] }])).toEqual([]);
});
