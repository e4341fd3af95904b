import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { inputsOver } from '../../functions/src/engine/expressions';
import { completionHolds, stopItems } from '../../functions/src/engine/item-transitions';
import type { ExecutionState, InstanceState, Transition } from '../../functions/src/engine/state';
import { completeJob, startInstance } from '../../functions/src/engine/transitions';

/**
 * Camunda 8 models: each `zeebe:` extension the parser reads (bpmn/zeebe.ts)
 * and the model fragment it becomes, the zeebe elements it refuses, and each
 * place FEEL is written: refused at load on a syntax error, and at run time
 * an incident naming the expression when a variable is missing, never a
 * silent null.
 */

/** A Camunda 8 definitions document around the body of process `p`. */
function c8(process: string, roots = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
    xmlns:inbox="https://github.com/transactional-inbox/bpmn" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    id="d" targetNamespace="urn:test">${roots}
  <bpmn:process id="p" isExecutable="true">${process}</bpmn:process>
</bpmn:definitions>`;
}
const ext = (body: string): string => `<bpmn:extensionElements>${body}</bpmn:extensionElements>`;
/** Message `m` named Done, with a zeebe:subscription correlationKey when one is given. */
const message = (key?: string): string =>
  key === undefined
    ? '<bpmn:message id="m" name="Done" />'
    : `<bpmn:message id="m" name="Done">${ext(`<zeebe:subscription correlationKey="${key}" />`)}</bpmn:message>`;
const flow = (id: string, source: string, target: string, condition?: string): string =>
  condition === undefined
    ? `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}" />`
    : `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${condition}</bpmn:conditionExpression></bpmn:sequenceFlow>`;
/** start → `middle` (whose id is `t`) → end. */
const around = (middle: string): string =>
  '<bpmn:startEvent id="start" /><bpmn:endEvent id="end" />' +
  middle +
  flow('f1', 'start', 't') +
  flow('f2', 't', 'end');
const serviceTask = (extensions: string, body = ''): string =>
  `<bpmn:serviceTask id="t">${ext(extensions)}${body}</bpmn:serviceTask>`;
const job = (type = 'ship'): string => `<zeebe:taskDefinition type="${type}" />`;
const io = (mappings: string): string => `<zeebe:ioMapping>${mappings}</zeebe:ioMapping>`;
const input = (source: string, target: string): string => `<zeebe:input source="${source}" target="${target}" />`;
const output = (source: string, target: string): string => `<zeebe:output source="${source}" target="${target}" />`;
const catchMessage = (attributes = ''): string =>
  `<bpmn:intermediateCatchEvent id="t" ${attributes}><bpmn:messageEventDefinition messageRef="m" /></bpmn:intermediateCatchEvent>`;
const loop = (zeebe: string, body = ''): string =>
  `<bpmn:multiInstanceLoopCharacteristics>${ext(zeebe)}${body}</bpmn:multiInstanceLoopCharacteristics>`;

const load = (process: string, roots = ''): Promise<ProcessModel> => parseProcessModel(c8(process, roots));
const node = (model: ProcessModel, id = 't'): Record<string, unknown> =>
  model.nodes[id] as unknown as Record<string, unknown>;

describe('zeebe: what each extension becomes in the model', () => {
  test.each<[string, string, string, (m: ProcessModel) => unknown, unknown]>([
    [
      'zeebe:taskDefinition type → an async job',
      around(serviceTask(job('ship'))),
      '',
      (m) => ({ async: node(m).async, job: node(m).job }),
      { async: true, job: { type: 'ship' } },
    ],
    [
      'zeebe:taskDefinition retries → job.retries',
      around(serviceTask('<zeebe:taskDefinition type="ship" retries="3" />')),
      '',
      (m) => node(m).job,
      { type: 'ship', retries: 3 },
    ],
    [
      'zeebe:taskHeaders → job.headers',
      around(
        serviceTask(
          job() +
            '<zeebe:taskHeaders><zeebe:header key="a" value="1" /><zeebe:header key="b" value="x" /></zeebe:taskHeaders>',
        ),
      ),
      '',
      (m) => node(m).job,
      { type: 'ship', headers: { a: '1', b: 'x' } },
    ],
    [
      'zeebe:ioMapping inputs and outputs, FEEL and static',
      around(
        serviceTask(
          job() + io(input('=order.total', 'total') + input('fixed', 'mode') + output('=result * 2', 'doubled')),
        ),
      ),
      '',
      (m) => node(m).io,
      {
        inputs: [
          { target: 'total', expression: 'order.total' },
          { target: 'mode', value: 'fixed' },
        ],
        outputs: [{ target: 'doubled', expression: 'result * 2' }],
      },
    ],
    [
      'zeebe:subscription correlationKey =orderId → a variable',
      around(catchMessage()),
      message('=orderId'),
      (m) => ({ v: node(m).correlationVariable, e: node(m).correlationExpression }),
      { v: 'orderId', e: undefined },
    ],
    [
      'zeebe:subscription correlationKey =order.id → an expression',
      around(catchMessage()),
      message('=order.id'),
      (m) => ({ v: node(m).correlationVariable, e: node(m).correlationExpression }),
      { v: null, e: 'order.id' },
    ],
    [
      'inbox:correlationKey on the event wins over zeebe:subscription',
      around(catchMessage('inbox:correlationKey="caseId"')),
      message('=order.id'),
      (m) => ({ v: node(m).correlationVariable, e: node(m).correlationExpression }),
      { v: 'caseId', e: undefined },
    ],
    [
      'a message start event of a Camunda 8 model without any key',
      '<bpmn:startEvent id="t"><bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent><bpmn:endEvent id="end" />' +
        flow('f', 't', 'end'),
      message(),
      (m) => ({ kind: node(m).kind, v: node(m).correlationVariable, starts: m.messageStartEvents }),
      { kind: 'messageStartEvent', v: null, starts: { Done: 't' } },
    ],
    [
      'zeebe:calledElement processId → calledProcess',
      around(`<bpmn:callActivity id="t">${ext('<zeebe:calledElement processId="child" />')}</bpmn:callActivity>`),
      '',
      (m) => ({ kind: node(m).kind, calledProcess: node(m).calledProcess }),
      { kind: 'callActivity', calledProcess: 'child' },
    ],
    [
      'zeebe:calledElement propagateAllChildVariables="false" → no variables back',
      around(
        `<bpmn:callActivity id="t">${ext('<zeebe:calledElement processId="child" propagateAllChildVariables="false" />')}</bpmn:callActivity>`,
      ),
      '',
      (m) => {
        const n = node(m);
        return n.kind === 'callActivity' ? { calledProcess: n.calledProcess, back: n.propagateChildVariables } : {};
      },
      { calledProcess: 'child', back: false },
    ],
    [
      'zeebe:userTask, assignmentDefinition and formDefinition formId',
      around(
        `<bpmn:userTask id="t">${ext(
          '<zeebe:userTask /><zeebe:assignmentDefinition assignee="ann" candidateGroups="sales, ops" candidateUsers="u1,u2" /><zeebe:formDefinition formId="invoice" />',
        )}</bpmn:userTask>`,
      ),
      '',
      (m) => {
        const { assignee, candidateGroups, candidateUsers, formKey } = node(m);
        return { assignee, candidateGroups, candidateUsers, formKey };
      },
      { assignee: 'ann', candidateGroups: ['sales', 'ops'], candidateUsers: ['u1', 'u2'], formKey: 'formId:invoice' },
    ],
    [
      'zeebe:formDefinition formKey',
      around(
        `<bpmn:userTask id="t">${ext('<zeebe:formDefinition formKey="camunda-forms:bpmn:f1" />')}</bpmn:userTask>`,
      ),
      '',
      (m) => ({ formKey: node(m).formKey, assignee: node(m).assignee }),
      { formKey: 'camunda-forms:bpmn:f1', assignee: null },
    ],
    [
      'zeebe:properties → node.properties',
      around(
        serviceTask(
          job() +
            '<zeebe:properties><zeebe:property name="team" value="billing" /><zeebe:property name="sla" value="2h" /></zeebe:properties>',
        ),
      ),
      '',
      (m) => node(m).properties,
      { team: 'billing', sla: '2h' },
    ],
    [
      'zeebe:loopCharacteristics =items → loop.collection',
      around(
        serviceTask(
          job(),
          loop(
            '<zeebe:loopCharacteristics inputCollection="=items" inputElement="it" outputCollection="results" outputElement="=verdict" />',
          ),
        ),
      ),
      '',
      (m) => node(m).loop,
      expect.objectContaining({
        collection: 'items',
        elementVariable: 'it',
        outputCollection: 'results',
        outputElement: 'verdict',
        cardinality: null,
      }),
    ],
    [
      'zeebe:loopCharacteristics =order.items → loop.collectionExpression',
      around(
        serviceTask(
          job(),
          loop(
            '<zeebe:loopCharacteristics inputCollection="=order.items" outputCollection="results" outputElement="=r.score" />',
          ),
        ),
      ),
      '',
      (m) => {
        const l = node(m).loop as Record<string, unknown>;
        return {
          collection: l.collection,
          collectionExpression: l.collectionExpression,
          elementVariable: l.elementVariable,
          outputElement: l.outputElement,
          outputElementExpression: l.outputElementExpression,
        };
      },
      {
        collection: null,
        collectionExpression: 'order.items',
        elementVariable: 'item',
        outputElement: null,
        outputElementExpression: 'r.score',
      },
    ],
    [
      'a message throw event with a taskDefinition and no messageRef → a job, no message',
      around(
        `<bpmn:intermediateThrowEvent id="t">${ext(job('publish'))}<bpmn:messageEventDefinition /></bpmn:intermediateThrowEvent>`,
      ),
      '',
      (m) => ({ kind: node(m).kind, messageName: node(m).messageName, job: node(m).job }),
      { kind: 'messageThrowEvent', messageName: null, job: { type: 'publish' } },
    ],
    [
      'a message end event with a taskDefinition and no messageRef → a job, no message',
      `<bpmn:startEvent id="start" /><bpmn:endEvent id="t">${ext(job('publish'))}<bpmn:messageEventDefinition /></bpmn:endEvent>` +
        flow('f', 'start', 't'),
      '',
      (m) => ({ kind: node(m).kind, messageName: node(m).messageName, job: node(m).job }),
      { kind: 'messageEndEvent', messageName: null, job: { type: 'publish' } },
    ],
  ])('%s', async (_what, process, roots, pick, expected) => {
    expect(pick(await load(process, roots))).toEqual(expected);
  });
});

describe('zeebe: what is refused, naming the element', () => {
  test.each<[string, string, string, RegExp]>([
    [
      'retries "0"',
      around(serviceTask('<zeebe:taskDefinition type="ship" retries="0" />')),
      '',
      /^t: zeebe:taskDefinition retries "0": write a whole number from 1 to 100$/,
    ],
    [
      'retries "x"',
      around(serviceTask('<zeebe:taskDefinition type="ship" retries="x" />')),
      '',
      /^t: zeebe:taskDefinition retries "x": write a whole number/,
    ],
    [
      'retries "=3"',
      around(serviceTask('<zeebe:taskDefinition type="ship" retries="=3" />')),
      '',
      /^t: zeebe:taskDefinition retries "=3": write a whole number/,
    ],
    [
      'an input with a FEEL syntax error',
      around(serviceTask(job() + io(input('=amount +', 'total')))),
      '',
      /^t: zeebe:input total: FEEL syntax error .*"=amount \+"/,
    ],
    [
      'an output with a FEEL syntax error',
      around(serviceTask(job() + io(output('=(a', 'b')))),
      '',
      /^t: zeebe:output b: FEEL syntax error .*"=\(a"/,
    ],
    [
      'a target that is no variable name',
      around(serviceTask(job() + io(input('=a', 'order.total')))),
      '',
      /^t: zeebe:input target "order.total": write a variable name/,
    ],
    [
      'ioMapping on a parallel gateway',
      around(`<bpmn:parallelGateway id="t">${ext(io(output('=a', 'b')))}</bpmn:parallelGateway>`),
      '',
      /^t: zeebe:ioMapping on a parallelGateway is not run here/,
    ],
    [
      'ioMapping on a subprocess',
      around(
        `<bpmn:subProcess id="t">${ext(io(input('=a', 'b')))}<bpmn:startEvent id="s2" /><bpmn:endEvent id="e2" />${flow('g', 's2', 'e2')}</bpmn:subProcess>`,
      ),
      '',
      /^t: zeebe:ioMapping on a subProcess is not run here/,
    ],
    [
      'a message wait with no key at all',
      around(catchMessage()),
      message(),
      /^t: missing inbox:correlationKey: .*zeebe:subscription correlationKey/,
    ],
    [
      'a correlation key that is no FEEL',
      around(catchMessage()),
      message('orderId'),
      /^t: zeebe:subscription correlationKey "orderId" is no FEEL expression/,
    ],
    [
      'calledElement propagateAllParentVariables="false"',
      around(
        `<bpmn:callActivity id="t">${ext('<zeebe:calledElement processId="child" propagateAllParentVariables="false" />')}</bpmn:callActivity>`,
      ),
      '',
      /^t: zeebe:calledElement propagateAllParentVariables="false"/,
    ],
    [
      'calledElement processId "=x"',
      around(`<bpmn:callActivity id="t">${ext('<zeebe:calledElement processId="=x" />')}</bpmn:callActivity>`),
      '',
      /^t: zeebe:calledElement names its process by an expression/,
    ],
    [
      'zeebe:calledDecision',
      around(
        `<bpmn:businessRuleTask id="t">${ext('<zeebe:calledDecision decisionId="d1" resultVariable="r" />')}</bpmn:businessRuleTask>`,
      ),
      '',
      /^t: zeebe:calledDecision \(Camunda 8\) is not run by this engine: /,
    ],
    [
      // check-extensions runs before the element switch, so the zeebe:script refusal comes before the scriptTask one.
      'zeebe:script on a scriptTask',
      around(
        `<bpmn:scriptTask id="t">${ext('<zeebe:script expression="=a + 1" resultVariable="b" />')}</bpmn:scriptTask>`,
      ),
      '',
      /^t: zeebe:script \(Camunda 8\) is not run by this engine: make it a task with a zeebe:taskDefinition type/,
    ],
    [
      'zeebe:executionListeners',
      around(
        serviceTask(
          job() +
            '<zeebe:executionListeners><zeebe:executionListener eventType="start" type="audit" /></zeebe:executionListeners>',
        ),
      ),
      '',
      /^t: zeebe:executionListeners \(Camunda 8\) is not run by this engine: /,
    ],
    [
      'zeebe:taskListeners',
      around(
        `<bpmn:userTask id="t">${ext('<zeebe:userTask /><zeebe:taskListeners><zeebe:taskListener eventType="complete" type="audit" /></zeebe:taskListeners>')}</bpmn:userTask>`,
      ),
      '',
      /^t: zeebe:taskListeners \(Camunda 8\) is not run by this engine: /,
    ],
  ])('refused: %s', async (_what, process, roots, expected) => {
    await expect(load(process, roots)).rejects.toThrow(expected);
  });

  test('a scriptTask without zeebe:script is refused for what it is', async () => {
    await expect(load(around('<bpmn:scriptTask id="t" />'))).rejects.toThrow(
      /^t: a scriptTask runs code written in the model/,
    );
  });
});

const t0 = new Date('2026-12-01T10:00:00Z');
const start = (model: ProcessModel, variables: Record<string, unknown> = {}): Transition =>
  startInstance(model, {}, { instanceId: 'i-1', executionId: 'e-1', businessKey: 'C-1', variables, now: t0 });
const tokensOf = (t: Transition): { execution: ExecutionState; tokens: Record<string, ExecutionState> } => {
  const [execution] = t.executions;
  if (execution === undefined) throw new Error('no execution');
  return { execution, tokens: Object.fromEntries(t.executions.map((e) => [e.id, e])) };
};
/** What stopped the token: its one incident's reason, text and element. */
function stopOf(t: Pick<Transition, 'instance'>): { reason: string; message: string; activityId: string } {
  expect(t.instance.incidents).toHaveLength(1);
  const [incident] = t.instance.incidents;
  if (incident === undefined) throw new Error('no incident');
  return { reason: incident.reason, message: incident.message, activityId: incident.activityId };
}

/** A multi-instance service task `t` with these zeebe loop characteristics and completion condition. */
const multi = (input: string, completion = ''): string =>
  around(
    serviceTask(
      job(),
      loop(
        `<zeebe:loopCharacteristics inputCollection="${input}" />`,
        completion === '' ? '' : `<bpmn:completionCondition>${completion}</bpmn:completionCondition>`,
      ),
    ),
  );
const gateway = (condition: string): string =>
  '<bpmn:startEvent id="start" /><bpmn:exclusiveGateway id="g" default="f3" /><bpmn:endEvent id="a" /><bpmn:endEvent id="b" />' +
  flow('f1', 'start', 'g') +
  flow('f2', 'g', 'a', condition) +
  flow('f3', 'g', 'b');
const timerCatch = (duration: string): string =>
  around(
    `<bpmn:intermediateCatchEvent id="t"><bpmn:timerEventDefinition><bpmn:timeDuration>${duration}</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`,
  );

describe('FEEL, place by place: a syntax error refuses the model naming the element and the expression', () => {
  test.each<[string, string, string, RegExp]>([
    [
      'a sequence-flow condition',
      gateway('=amount &gt;'),
      '',
      /^f2: invalid condition: FEEL syntax error .*"=amount >"/,
    ],
    [
      'a correlation key',
      around(catchMessage()),
      message('=order.'),
      /^t: zeebe:subscription correlationKey: FEEL syntax error .*"=order\."/,
    ],
    [
      'an input',
      around(serviceTask(job() + io(input('=a *', 'b')))),
      '',
      /^t: zeebe:input b: FEEL syntax error .*"=a \*"/,
    ],
    [
      'an output',
      around(serviceTask(job() + io(output('=a or', 'b')))),
      '',
      /^t: zeebe:output b: FEEL syntax error .*"=a or"/,
    ],
    [
      'a timer',
      timerCatch('=duration("PT"+string(m)+'),
      '',
      /^t: timeDuration: FEEL syntax error .*"=duration\(\\"PT\\"\+string\(m\)\+"/,
    ],
    [
      'a multi-instance collection',
      multi('=order.'),
      '',
      /^t: zeebe:loopCharacteristics inputCollection: FEEL syntax error .*"=order\."/,
    ],
    [
      'a completion condition',
      multi('=items', '=nrOfCompletedInstances &gt;='),
      '',
      /^t: completionCondition: invalid condition: FEEL syntax error .*"=nrOfCompletedInstances >="/,
    ],
  ])('%s', async (_where, process, roots, expected) => {
    await expect(load(process, roots)).rejects.toThrow(expected);
  });
});

describe('FEEL, place by place: a missing variable at run time stops the token naming the expression', () => {
  test('a sequence-flow condition: EXPRESSION_FAILED at the gateway, no branch taken', async () => {
    const model = await load(gateway('=amount &gt; 100'));
    const t = start(model);
    expect(stopOf(t)).toMatchObject({ reason: 'EXPRESSION_FAILED', activityId: 'g' });
    expect(stopOf(t).message).toContain('condition of flow f2: FEEL "=amount > 100"');
    expect(t.instance.status).not.toBe('COMPLETED');
    // With the variable there, the same model goes on.
    expect(start(model, { amount: 500 }).instance.incidents).toEqual([]);
  });

  test('a correlation key expression: EXPRESSION_FAILED at the wait, no subscription', async () => {
    const model = await load(around(catchMessage()), message('=order.id'));
    const t = start(model);
    expect(stopOf(t)).toMatchObject({ reason: 'EXPRESSION_FAILED', activityId: 't' });
    expect(stopOf(t).message).toMatch(/^FEEL "=order\.id": .*: no key to wait for Done$/);
    expect(t.subscribe).toEqual([]);
    expect(start(model, { order: { id: 'O-1' } }).subscribe).toMatchObject([{ correlationKey: 'O-1' }]);
  });

  test('an input (evaluated when the job runs: expressions.ts inputsOver): EXPRESSION_FAILED', async () => {
    const model = await load(around(serviceTask(job() + io(input('=order.total + 1', 'total')))));
    expect(inputsOver(model.nodes.t?.io, {}, 't')).toEqual({
      reason: 'EXPRESSION_FAILED',
      message: expect.stringMatching(/^t: zeebe:input total: FEEL "=order\.total \+ 1": /) as unknown,
    });
    expect(inputsOver(model.nodes.t?.io, { order: { total: 1 } }, 't')).toEqual({
      values: { order: { total: 1 }, total: 2 },
    });
  });

  test('an output (evaluated when the job completes): EXPRESSION_FAILED, the variables unchanged', async () => {
    const model = await load(around(serviceTask(job() + io(output('=result.score * 2', 'doubled')))));
    const t = start(model, { kept: 1 });
    const [pending] = t.jobs;
    if (pending === undefined) throw new Error('no job');
    const done = completeJob(model, {}, { instance: t.instance, ...tokensOf(t), job: pending }, {}, t0);
    expect(stopOf(done)).toMatchObject({ reason: 'EXPRESSION_FAILED', activityId: 't' });
    expect(stopOf(done).message).toMatch(/^t: zeebe:output doubled: FEEL "=result\.score \* 2": /);
    expect(done.instance.variables).toEqual({ kept: 1 });
    const good = completeJob(
      model,
      {},
      { instance: t.instance, ...tokensOf(t), job: pending },
      { result: { score: 4 } },
      t0,
    );
    expect(good.instance.variables).toEqual({ kept: 1, doubled: 8 });
  });

  test('a timer: INVALID_TIMER at the catch event, no timer set', async () => {
    const model = await load(timerCatch('=duration("PT"+string(m)+"M")'));
    const t = start(model);
    expect(stopOf(t)).toMatchObject({ reason: 'INVALID_TIMER', activityId: 't' });
    expect(stopOf(t).message).toContain('timeDuration: FEEL "=duration(\\"PT\\"+string(m)+\\"M\\")"');
    expect(t.timers).toEqual([]);
    expect(start(model, { m: 5 }).timers).toMatchObject([{ dueAt: new Date(t0.getTime() + 5 * 60_000) }]);
  });

  test('a multi-instance collection expression: INVALID_ITEMS at the activity, no item started', async () => {
    const model = await load(multi('=order.items'));
    const t = start(model);
    expect(stopOf(t)).toMatchObject({ reason: 'INVALID_ITEMS', activityId: 't' });
    expect(stopOf(t).message).toMatch(/^multi-instance t: inputCollection: FEEL "=order\.items": /);
    expect(t.calls).toEqual([]);
    expect(start(model, { order: { items: [1, 2] } }).calls).toHaveLength(2);
  });

  test('a completion condition: a failure text, which the engine stops the token with as EXPRESSION_FAILED', async () => {
    const model = await load(multi('=items', '=approved = true'));
    const loopOfT = model.nodes.t?.loop;
    if (loopOfT === undefined) throw new Error('no loop');
    const failure = completionHolds(loopOfT, {}, { total: 2, completed: 1, active: 1 });
    expect(failure).toEqual(expect.stringMatching(/^completion condition: FEEL "=approved = true": /));
    expect(completionHolds(loopOfT, { approved: true }, { total: 2, completed: 1, active: 1 })).toBe(true);
    const t = start(model, { items: [1, 2] });
    const instance: InstanceState = t.instance;
    const stopped = stopItems(model, {}, { instance, ...tokensOf(t) }, failure as string, t0);
    expect(stopOf(stopped)).toMatchObject({ reason: 'EXPRESSION_FAILED', activityId: 't' });
    expect(stopOf(stopped).message).toContain('"=approved = true"');
    // The token is marked: the store starts no further item and resolve-incident is refused while it stands.
    const token = stopped.executions.find((e) => e.activityId === 't');
    expect(token?.items?.conditionFailed).toBe(failure);
  });
});
