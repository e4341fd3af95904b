import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { completeCall, terminateInstance } from '../../functions/src/engine/call-transitions';
import { Engine } from '../../functions/src/engine/engine';
import { MAX_CALL_DEPTH, type Transition } from '../../functions/src/engine/state';
import { startInstance } from '../../functions/src/engine/transitions';
import { asyncTask, bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const timer = (d: string) =>
  `<bpmn:timerEventDefinition><bpmn:timeDuration>${d}</bpmn:timeDuration></bpmn:timerEventDefinition>`;
const model = (body: string, id = 'p') => parseProcessModel(bpmnDocument(body).replace('id="p"', `id="${id}"`));
/** start → call (calls `child`) → done, with `extra` (boundary events) beside it. */
const caller = (extra = '', called = 'child') =>
  model(
    element('startEvent', 'start') +
      element('callActivity', 'call', `calledElement="${called}"`) +
      element('endEvent', 'done') +
      extra +
      chain('start', 'call', 'done'),
  );
const child = () =>
  model(
    element('startEvent', 'cs') + asyncTask('work') + element('endEvent', 'ce') + chain('cs', 'work', 'ce'),
    'child',
  );

describe('call activity, the pure core', () => {
  test('entering it asks for the child, with the caller’s variables and business key; the token waits WAITING_CALL', async () => {
    const sim = new CoreSim(await caller());
    const t = sim.start({ orderId: 'O-1' });
    const token = sim.tokenAt('call');
    expect(token).toMatchObject({ status: 'WAITING_CALL' });
    expect(t.calls).toEqual([
      {
        instanceId: token.calledInstanceId,
        processKey: 'child',
        businessKey: 'B-1',
        variables: { orderId: 'O-1' },
        calledBy: { instanceId: 'i-1', executionId: token.id, activityId: 'call', depth: 1 },
      },
    ]);
  });

  test('the child’s end merges all its variables and moves the caller on; a second end is refused', async () => {
    const sim = new CoreSim(await caller());
    sim.start({ orderId: 'O-1' });
    const token = sim.tokenAt('call');
    const call = sim.log[0]?.calls[0];
    if (call === undefined) throw new Error('no call');
    const childStart = startInstance(
      await child(),
      {},
      {
        instanceId: call.instanceId,
        executionId: 'c-1',
        businessKey: call.businessKey,
        variables: call.variables,
        now: sim.now,
        calledBy: call.calledBy,
      },
    );
    expect(childStart.instance.calledBy).toEqual(call.calledBy);
    const ended = { ...childStart.instance, variables: { orderId: 'O-1', shipped: true }, activeExecutionIds: [] };
    const t = sim.apply(
      completeCall(
        sim.model,
        {},
        { instance: sim.instance!, execution: token, tokens: { ...sim.tokens } },
        ended,
        sim.now,
      ),
    );
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { orderId: 'O-1', shipped: true } });
    expect(t.cancelCalls).toEqual([]); // the child that ended is not terminated
    expect(() =>
      completeCall(
        sim.model,
        {},
        { instance: sim.instance!, execution: sim.tokens[token.id]!, tokens: sim.tokens },
        ended,
        sim.now,
      ),
    ).toThrow(/does not wait for called instance/);
  });

  test('an interrupting boundary timer takes the token and terminates the child', async () => {
    const sim = new CoreSim(
      await caller(
        element('boundaryEvent', 'late', 'attachedToRef="call"', timer('P1D')) +
          element('endEvent', 'lateEnd') +
          chain('late', 'lateEnd'),
      ),
    );
    sim.start();
    const childId = sim.tokenAt('call').calledInstanceId;
    const t = sim.fire('late');
    expect(t.cancelCalls).toEqual([{ instanceId: childId, reason: expect.stringContaining('late') as string }]);
    expect(t.instance.status).toBe('COMPLETED');
  });

  test('a non-interrupting boundary timer leaves the call running', async () => {
    const sim = new CoreSim(
      await caller(
        element('boundaryEvent', 'remind', 'attachedToRef="call" cancelActivity="false"', timer('PT1H')) +
          element('endEvent', 'reminded') +
          chain('remind', 'reminded'),
      ),
    );
    sim.start();
    const t = sim.fire('remind');
    expect(t.cancelCalls).toEqual([]);
    expect(sim.tokenAt('call').status).toBe('WAITING_CALL');
  });

  test('a repair that cancels the caller’s token terminates the child', async () => {
    const sim = new CoreSim(await caller());
    sim.start();
    const token = sim.tokenAt('call');
    expect(sim.cancel(token.id).cancelCalls).toEqual([
      { instanceId: token.calledInstanceId, reason: 'a repair cancelled its token' },
    ]);
  });

  test('terminating an instance cancels every token, its own calls too, and completes it whatever incident was open', async () => {
    const sim = new CoreSim(await caller());
    sim.start();
    const grandchild = sim.tokenAt('call').calledInstanceId;
    const incident = { reason: 'JOB_FAILED' as const, executionId: 'x', activityId: 'call', message: 'm', at: sim.now };
    const t: Transition = terminateInstance(
      { instance: { ...sim.instance!, status: 'INCIDENT', incidents: [incident] }, tokens: { ...sim.tokens } },
      'its caller left',
      sim.now,
    );
    expect(t.instance).toMatchObject({
      status: 'COMPLETED',
      activeExecutionIds: [],
      terminated: { at: sim.now, reason: 'its caller left' },
    });
    expect(t.executions.map((e) => e.status)).toEqual(['CANCELLED']);
    expect(t.cancelCalls).toEqual([{ instanceId: grandchild, reason: 'its caller left' }]);
  });

  test(`a call nested deeper than ${MAX_CALL_DEPTH} levels stops with STEP_LIMIT instead of starting another`, async () => {
    const t = startInstance(
      await caller('', 'p'),
      {},
      {
        instanceId: 'deep',
        executionId: 'e',
        businessKey: 'B',
        variables: {},
        now: new Date(),
        calledBy: { instanceId: 'up', executionId: 'u', activityId: 'call', depth: MAX_CALL_DEPTH },
      },
    );
    expect(t.calls).toEqual([]);
    expect(t.instance.incidents[0]).toMatchObject({ reason: 'STEP_LIMIT', activityId: 'call' });
  });
});

describe('call activity, the load', () => {
  test('calledElement is required', async () => {
    await expect(
      model(element('startEvent', 's') + element('callActivity', 'call') + chain('s', 'call')),
    ).rejects.toThrow(/call: a callActivity without calledElement/);
  });

  test('an error boundary event on it is refused, saying where to catch the error', async () => {
    await expect(
      caller(element('boundaryEvent', 'err', 'attachedToRef="call"', '<bpmn:errorEventDefinition />')),
    ).rejects.toThrow(/err: an error boundary event on call activity call: .*catch it inside that process/);
  });

  test('the engine refuses a called process that is not deployed, naming the call activity', async () => {
    expect(() => new Engine([], {}, new Set())).not.toThrow();
    const parent = await caller('', 'missing');
    expect(() => new Engine([parent], {}, new Set())).toThrow(/call: calledElement missing is no process of this app/);
    expect(() => new Engine([parent, { ...parent, key: 'missing' }], {}, new Set())).not.toThrow();
  });

  test('the engine refuses a call to a process with no none start event at load, naming the call activity', async () => {
    const byMessage = await model(
      '<bpmn:startEvent id="ms" inbox:correlationKey="orderId"><bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent>' +
        element('endEvent', 'me') +
        chain('ms', 'me'),
      'child',
    );
    const parent = await caller();
    const plainChild = await child();
    expect(byMessage.startEventId).toBeNull();
    expect(() => new Engine([parent, byMessage], {}, new Set())).toThrow(
      /^call: calledElement child has no none start event, where a call activity starts it \(it starts by message only\)/,
    );
    expect(() => new Engine([parent, plainChild], {}, new Set(['work']))).not.toThrow();
  });
});

describe('call activity with zeebe:calledElement and zeebe:ioMapping', () => {
  const zeebe = (body: string) =>
    parseProcessModel(
      bpmnDocument(body).replace('xmlns:inbox=', 'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:inbox='),
    );
  const ext = (inner: string) => `<bpmn:extensionElements>${inner}</bpmn:extensionElements>`;
  const mapped = (called: string, io: string) =>
    zeebe(
      element('startEvent', 'start') +
        element('callActivity', 'call', '', ext(called + io)) +
        element('endEvent', 'done') +
        chain('start', 'call', 'done'),
    );
  /** Starts the caller, then ends its child with `childVariables`: the caller's transition. */
  const roundTrip = async (caller: Promise<Awaited<ReturnType<typeof zeebe>>>, start: Record<string, unknown>) => {
    const sim = new CoreSim(await caller);
    sim.start(start);
    const token = sim.tokenAt('call');
    const call = sim.log[0]?.calls[0];
    if (call === undefined) throw new Error('no call');
    const end = (childVariables: Record<string, unknown>): Transition =>
      sim.apply(
        completeCall(
          sim.model,
          {},
          { instance: sim.instance!, execution: token, tokens: { ...sim.tokens } },
          { ...sim.instance!, id: call.instanceId, variables: childVariables, activeExecutionIds: [] },
          sim.now,
        ),
      );
    return { call, end };
  };

  test('inputs go into the child’s start; outputs alone come back', async () => {
    const { call, end } = await roundTrip(
      mapped(
        '<zeebe:calledElement processId="child" />',
        '<zeebe:ioMapping><zeebe:input source="=order.id" target="orderId" /><zeebe:output source="=shipped and orderId = &quot;O-1&quot;" target="ok" /></zeebe:ioMapping>',
      ),
      { order: { id: 'O-1' } },
    );
    expect(call.variables).toEqual({ order: { id: 'O-1' }, orderId: 'O-1' });
    const t = end({ orderId: 'O-1', shipped: true, noise: 1 });
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { order: { id: 'O-1' }, ok: true } });
    expect(t.instance.variables).not.toHaveProperty('noise');
  });

  test('propagateAllChildVariables="false" without outputs: nothing comes back', async () => {
    const { end } = await roundTrip(
      mapped('<zeebe:calledElement processId="child" propagateAllChildVariables="false" />', ''),
      { a: 1 },
    );
    expect(end({ a: 2, b: 3 }).instance).toMatchObject({ status: 'COMPLETED', variables: { a: 1 } });
  });

  test('an output that fails stops the caller’s token with EXPRESSION_FAILED naming the expression', async () => {
    const { end } = await roundTrip(
      mapped(
        '<zeebe:calledElement processId="child" />',
        '<zeebe:ioMapping><zeebe:output source="=missing.value" target="v" /></zeebe:ioMapping>',
      ),
      {},
    );
    const t = end({ other: 1 });
    expect(t.instance.status).toBe('INCIDENT');
    expect(t.instance.incidents).toEqual([
      expect.objectContaining({
        reason: 'EXPRESSION_FAILED',
        activityId: 'call',
        message: expect.stringContaining('=missing.value'),
      }),
    ]);
  });
});
