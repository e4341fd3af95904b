import { join } from 'node:path';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { ModelError } from '../../functions/src/bpmn/model';

const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn');

/** A definitions document around `process` (the body of process `p`), with messages `m` (Done) and `m2` (Other). */
function bpmn(process: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="urn:test">
  <bpmn:message id="m" name="Done" /><bpmn:message id="m2" name="Other" />
  <bpmn:process id="p" isExecutable="true">${process}</bpmn:process>
</bpmn:definitions>`;
}
const flow = (id: string, source: string, target: string, condition?: string): string => {
  const body =
    condition === undefined
      ? ''
      : `<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${condition}</bpmn:conditionExpression>`;
  return `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}">${body}</bpmn:sequenceFlow>`;
};
const timerDef = (body: string, attributes = ''): string =>
  `<bpmn:timerEventDefinition ${attributes}>${body}</bpmn:timerEventDefinition>`;
const duration = (text: string): string =>
  `<bpmn:timeDuration xsi:type="bpmn:tFormalExpression">${text}</bpmn:timeDuration>`;
const timerCatch = (id: string, definition: string, attributes = ''): string =>
  `<bpmn:intermediateCatchEvent id="${id}" ${attributes}>${definition}</bpmn:intermediateCatchEvent>`;
const messageCatch = (id: string, ref = 'm'): string =>
  `<bpmn:intermediateCatchEvent id="${id}" inbox:correlationKey="orderId"><bpmn:messageEventDefinition messageRef="${ref}" /></bpmn:intermediateCatchEvent>`;
/** start → `id` → end */
const around = (middle: string, id: string): string =>
  '<bpmn:startEvent id="start" />' +
  middle +
  '<bpmn:endEvent id="end" />' +
  flow('f1', 'start', id) +
  flow('f2', id, 'end');
/** start → task (async unless told) → end, with boundary event `b` on it leading to end `late`. */
const onTask = (
  boundary: string,
  task = '<bpmn:serviceTask id="task" inbox:async="true" />',
  boundaryFlows = flow('fb', 'b', 'late'),
): string => around(task, 'task') + boundary + '<bpmn:endEvent id="late" />' + boundaryFlows;
const boundary = (definition: string, attributes = ''): string =>
  `<bpmn:boundaryEvent id="b" attachedToRef="task" ${attributes}>${definition}</bpmn:boundaryEvent>`;
/** start → gw → (branches) each to its own end. */
const gateway = (branches: string[], extra = '', attributes = ''): string =>
  '<bpmn:startEvent id="start" />' +
  `<bpmn:eventBasedGateway id="gw" ${attributes} />` +
  flow('f0', 'start', 'gw') +
  extra +
  branches
    .map(
      (b, i) => b + `<bpmn:endEvent id="end${i}" />` + flow(`g${i}`, 'gw', idOf(b)) + flow(`e${i}`, idOf(b), `end${i}`),
    )
    .join('');
const idOf = (xml: string): string => /id="([^"]+)"/.exec(xml)?.[1] ?? '';

describe('parseProcessModel: timers', () => {
  test('fixtures/bpmn/timer-paths.bpmn: boundary timer with a variable and default, an event-based gateway', async () => {
    const model = await loadProcessModel(join(FIXTURES, 'timer-paths.bpmn'));
    expect(model.nodes['handOver']).toMatchObject({
      kind: 'sendTask',
      async: true,
      boundaryEventIds: ['handOverLate'],
    });
    expect(model.nodes['handOverLate']).toEqual({
      kind: 'boundaryTimer',
      id: 'handOverLate',
      name: 'Hand-over deadline',
      attachedToId: 'handOver',
      cancelActivity: true,
      timer: { type: 'timeDuration', text: '${handOverDeadline}', variable: 'handOverDeadline', value: 'PT1H' },
      incoming: [],
      outgoing: ['Flow_late_escalate'],
    });
    expect(model.nodes['completedOrOverdue']).toEqual({
      kind: 'eventBasedGateway',
      id: 'completedOrOverdue',
      name: 'Completed or overdue?',
      incoming: ['Flow_handOver_gateway'],
      outgoing: ['Flow_gateway_wait', 'Flow_gateway_overdue'],
    });
    expect(model.nodes['overdue']).toMatchObject({
      kind: 'timerCatchEvent',
      timer: { type: 'timeDuration', variable: 'completionDeadline', value: 'P14D' },
    });
    expect(model.nodes['waitForCompletion']).toMatchObject({ kind: 'messageCatchEvent', messageName: 'TaskCompleted' });
  });

  test('fixtures/bpmn/timer-kinds.bpmn: a delay, a non-interrupting cycle, a date on a receive task', async () => {
    const model = await loadProcessModel(join(FIXTURES, 'timer-kinds.bpmn'));
    expect(model.nodes['delay']).toMatchObject({
      kind: 'timerCatchEvent',
      timer: { type: 'timeDuration', text: 'PT10M', variable: null, value: 'PT10M' },
    });
    expect(model.nodes['work']).toMatchObject({ boundaryEventIds: ['remind'] });
    expect(model.nodes['remind']).toMatchObject({
      kind: 'boundaryTimer',
      cancelActivity: false,
      timer: { type: 'timeCycle', value: 'R3/PT1H' },
    });
    expect(model.nodes['approval']).toMatchObject({ kind: 'receiveTask', boundaryEventIds: ['approvalLate'] });
    expect(model.nodes['approvalLate']).toMatchObject({
      cancelActivity: true,
      timer: { type: 'timeDate', variable: 'approvalDueAt', value: null },
    });
  });

  test.each<[string, string, object]>([
    [
      'a literal with surrounding whitespace',
      timerDef(duration('\n  PT30S\n  ')),
      { type: 'timeDuration', text: 'PT30S', variable: null, value: 'PT30S' },
    ],
    [
      'a date literal',
      timerDef('<bpmn:timeDate>2027-01-01T00:00:00Z</bpmn:timeDate>'),
      { type: 'timeDate', value: '2027-01-01T00:00:00Z' },
    ],
    ['a variable without default', timerDef(duration('${ wait }')), { variable: 'wait', value: null }],
    [
      'a variable with a default',
      timerDef(duration('${wait}'), 'inbox:default="PT5S"'),
      { variable: 'wait', value: 'PT5S' },
    ],
    [
      'an unprefixed default (moddle reads it as inbox:default)',
      timerDef(duration('${wait}'), 'default="PT5S"'),
      { variable: 'wait', value: 'PT5S' },
    ],
  ])('timer catch event: %s', async (_name, definition, timer) => {
    const model = await parseProcessModel(bpmn(around(timerCatch('t', definition), 't')));
    expect(model.nodes['t']).toMatchObject({ kind: 'timerCatchEvent', timer });
  });

  test('two boundary events on one receive task, in document order, and a non-interrupting one on a send task', async () => {
    const model = await parseProcessModel(
      bpmn(
        onTask(
          boundary(timerDef(duration('PT1M'))) +
            '<bpmn:boundaryEvent id="b2" attachedToRef="task"><bpmn:timerEventDefinition>' +
            duration('PT2M') +
            '</bpmn:timerEventDefinition></bpmn:boundaryEvent>',
          '<bpmn:receiveTask id="task" messageRef="m" inbox:correlationKey="orderId" />',
          flow('fb', 'b', 'late') + flow('fb2', 'b2', 'late'),
        ),
      ),
    );
    expect(model.nodes['task']).toMatchObject({ boundaryEventIds: ['b', 'b2'] });
    const send = await parseProcessModel(
      bpmn(
        onTask(
          boundary(timerDef(duration('PT1M')), 'cancelActivity="false"'),
          '<bpmn:sendTask id="task" inbox:async="true" />',
        ),
      ),
    );
    expect(send.nodes['b']).toMatchObject({ cancelActivity: false, attachedToId: 'task' });
  });

  test('an event-based gateway with two message branches and a timer', async () => {
    const model = await parseProcessModel(
      bpmn(gateway([messageCatch('a'), messageCatch('b', 'm2'), timerCatch('t', timerDef(duration('P1D')))])),
    );
    expect(model.nodes['gw']).toMatchObject({ kind: 'eventBasedGateway', outgoing: ['g0', 'g1', 'g2'] });
  });
});

describe('parseProcessModel: invalid timers', () => {
  const invalid: Array<[string, string, string | null, string]> = [
    // Timer definitions.
    [
      'years',
      around(timerCatch('t', timerDef(duration('P1Y'))), 't'),
      't',
      'timeDuration "P1Y": duration "P1Y" has years or months',
    ],
    ['months', around(timerCatch('t', timerDef(duration('P2M'))), 't'), 't', 'has years or months'],
    ['not a duration', around(timerCatch('t', timerDef(duration('14 days'))), 't'), 't', 'is no ISO 8601 duration'],
    [
      'a bad default',
      around(timerCatch('t', timerDef(duration('${wait}'), 'inbox:default="P1M"')), 't'),
      't',
      'timeDuration default "P1M": duration "P1M" has years or months',
    ],
    [
      'a default on a literal',
      around(timerCatch('t', timerDef(duration('PT1S'), 'inbox:default="PT2S"')), 't'),
      't',
      'a default applies only to ${variable}',
    ],
    [
      'an expression',
      around(timerCatch('t', timerDef(duration('${wait * 2}'))), 't'),
      't',
      'only a literal or ${variableName} is supported',
    ],
    ['a JUEL method call', around(timerCatch('t', timerDef(duration('#{dates.later()}'))), 't'), 't', 'no expressions'],
    ['an empty expression', around(timerCatch('t', timerDef(duration(''))), 't'), 't', 'an empty timeDuration'],
    [
      'two time forms',
      around(timerCatch('t', timerDef(duration('PT1S') + '<bpmn:timeDate>2027-01-01T00:00:00Z</bpmn:timeDate>')), 't'),
      't',
      'with timeDuration and timeDate: give exactly one',
    ],
    [
      'a date without offset',
      around(timerCatch('t', timerDef('<bpmn:timeDate>2027-01-01T00:00:00</bpmn:timeDate>')), 't'),
      't',
      'with an offset or Z',
    ],
    [
      'a cycle on a catch event',
      around(timerCatch('t', timerDef('<bpmn:timeCycle>R3/PT1H</bpmn:timeCycle>')), 't'),
      't',
      'timeCycle on a timer catch event',
    ],
    [
      'a correlation key on a timer catch event',
      around(timerCatch('t', timerDef(duration('PT1S')), 'inbox:correlationKey="orderId"'), 't'),
      't',
      'inbox:correlationKey on a timer catch event',
    ],
    [
      'a misspelt default',
      around(timerCatch('t', timerDef(duration('${w}'), 'inbox:defualt="PT1S"')), 't'),
      't',
      'unknown attribute <inbox:defualt>',
    ],
    [
      'a default in a wrong namespace',
      around(timerCatch('t', timerDef(duration('${w}'), 'xmlns:ibx="urn:typo" ibx:default="PT1S"')), 't'),
      't',
      'attribute ibx:default of the timerEventDefinition is not in the inbox namespace',
    ],
    // Boundary events.
    [
      'a cycle on an interrupting boundary event',
      onTask(boundary(timerDef('<bpmn:timeCycle>R3/PT1H</bpmn:timeCycle>'))),
      'b',
      'timeCycle on an interrupting boundary event',
    ],
    [
      'an unbounded cycle',
      onTask(boundary(timerDef('<bpmn:timeCycle>R/PT1H</bpmn:timeCycle>'), 'cancelActivity="false"')),
      'b',
      'no bounded cycle',
    ],
    [
      'a boundary timer on a sync task',
      onTask(boundary(timerDef(duration('PT1M'))), '<bpmn:serviceTask id="task" />'),
      'b',
      'a timer on synchronous task task could never fire',
    ],
    [
      'a boundary timer on a catch event',
      onTask(boundary(timerDef(duration('PT1M'))), messageCatch('task')),
      'b',
      'a boundary event on messageCatchEvent task',
    ],
    [
      'a message boundary event without a correlation key',
      onTask(boundary('<bpmn:messageEventDefinition messageRef="m" />')),
      'b',
      'missing inbox:correlationKey',
    ],
    [
      'a boundary event without definition',
      onTask(boundary('')),
      'b',
      'unsupported boundaryEvent with no event definition',
    ],
    [
      'a boundary event with incoming flow',
      onTask(boundary(timerDef(duration('PT1M')))) + flow('fx', 'start', 'b'),
      'start',
      'only a gateway may branch',
    ],
    [
      'a boundary event with incoming flow (from a gateway)',
      '<bpmn:startEvent id="start" /><bpmn:exclusiveGateway id="x" default="fd" /><bpmn:serviceTask id="task" inbox:async="true" /><bpmn:endEvent id="end" />' +
        boundary(timerDef(duration('PT1M'))) +
        '<bpmn:endEvent id="late" />' +
        flow('f0', 'start', 'x') +
        flow('fd', 'x', 'task') +
        flow('fc', 'x', 'b', '${n == 1}') +
        flow('f2', 'task', 'end') +
        flow('fb', 'b', 'late'),
      'b',
      'a boundary event has no incoming sequence flows (fc)',
    ],
    [
      'a boundary event with two outgoing flows',
      onTask(boundary(timerDef(duration('PT1M'))), undefined, flow('fb', 'b', 'late') + flow('fb2', 'b', 'end')),
      'b',
      '2 outgoing sequence flows',
    ],
    [
      'attached to nothing',
      onTask('<bpmn:boundaryEvent id="b" attachedToRef="nope">' + timerDef(duration('PT1M')) + '</bpmn:boundaryEvent>'),
      'b',
      'attachedToRef "nope" names no element',
    ],
    [
      'attached to a message',
      onTask('<bpmn:boundaryEvent id="b" attachedToRef="m">' + timerDef(duration('PT1M')) + '</bpmn:boundaryEvent>'),
      'b',
      'attachedToRef m is not a flow node of this process',
    ],
    [
      'without attachedToRef',
      onTask('<bpmn:boundaryEvent id="b">' + timerDef(duration('PT1M')) + '</bpmn:boundaryEvent>'),
      'b',
      'a boundary event without attachedToRef',
    ],
    // Event-based gateways.
    ['one branch', gateway([messageCatch('a')]), 'gw', 'with 1 branch(es): it needs at least two'],
    [
      'a branch to a task',
      gateway([messageCatch('a'), '<bpmn:serviceTask id="t" inbox:async="true" />']),
      'gw',
      'flow g1 leads to serviceTask t',
    ],
    [
      'a branch with a condition',
      gateway([messageCatch('a'), timerCatch('t', timerDef(duration('PT1M')))]).replace(
        '<bpmn:sequenceFlow id="g1" sourceRef="gw" targetRef="t">',
        `<bpmn:sequenceFlow id="g1" sourceRef="gw" targetRef="t"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">\${x == 1}</bpmn:conditionExpression>`,
      ),
      'g1',
      'a condition on a flow leaving eventBasedGateway gw',
    ],
    [
      'a branch event reached another way',
      gateway([messageCatch('a'), timerCatch('t', timerDef(duration('PT1M')))], flow('fx', 'end0', 't')),
      't',
      'with 2 incoming flows: the gateway must be its only way in',
    ],
    [
      'a branch event reached another way (two gateway flows)',
      gateway([messageCatch('a'), timerCatch('t', timerDef(duration('PT1M')))], flow('g9', 'gw', 't')),
      't',
      'with 2 incoming flows: the gateway must be its only way in',
    ],
    [
      'two branches for one message',
      gateway([messageCatch('a'), messageCatch('b')]),
      'b',
      'wait for message Done (a and b)',
    ],
    [
      'an instantiating gateway',
      gateway([messageCatch('a'), messageCatch('b', 'm2')], '', 'instantiate="true"'),
      'gw',
      'an instantiating event-based gateway',
    ],
    [
      'a parallel event gateway',
      gateway([messageCatch('a'), messageCatch('b', 'm2')], '', 'eventGatewayType="Parallel"'),
      'gw',
      'eventGatewayType "Parallel"',
    ],
  ];
  test.each(invalid)('%s', async (_name, process, elementId, message) => {
    const error = await parseProcessModel(bpmn(process)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toContain(message);
    expect(error).toMatchObject({ elementId });
  });
});
