import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { ModelError } from '../../functions/src/bpmn/model';

const ROOT = join(__dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'bpmn');

/** A definitions document around `process` (the body of process `p`), with message `m` named Done. */
function bpmn(process: string, roots = '', attributes = 'isExecutable="true"'): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" id="d" targetNamespace="urn:test">
  <bpmn:message id="m" name="Done" />${roots}
  <bpmn:process id="p" ${attributes}>${process}</bpmn:process>
</bpmn:definitions>`;
}
const start = (id = 'start'): string => `<bpmn:startEvent id="${id}" />`;
const end = (id = 'end'): string => `<bpmn:endEvent id="${id}" />`;
const task = (id = 'task', attributes = ''): string => `<bpmn:serviceTask id="${id}" ${attributes} />`;
const wait = (
  id = 'wait',
  attributes = 'inbox:correlationKey="orderId"',
  definition = '<bpmn:messageEventDefinition messageRef="m" />',
): string => `<bpmn:intermediateCatchEvent id="${id}" ${attributes}>${definition}</bpmn:intermediateCatchEvent>`;
function flow(id: string, source: string, target: string, condition?: string): string {
  const body =
    condition === undefined
      ? ''
      : `<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${condition}</bpmn:conditionExpression>`;
  return `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}">${body}</bpmn:sequenceFlow>`;
}
/** start → middle → end, with `middle` one element whose id is `id`. */
const around = (middle: string, id: string): string =>
  start() + middle + end() + flow('f1', 'start', id) + flow('f2', id, 'end');
const gateway = (attributes: string, flows: string): string =>
  start() + `<bpmn:exclusiveGateway id="gw" ${attributes} />` + end('a') + end('b') + flow('f0', 'start', 'gw') + flows;

describe('parseProcessModel: valid models', () => {
  test('the fixture app: test/fixtures/app/bpmn/fixture-process.bpmn', async () => {
    const path = join(ROOT, 'test', 'fixtures', 'app', 'bpmn', 'fixture-process.bpmn');
    const model = await loadProcessModel(path);
    const version = createHash('sha256').update(readFileSync(path, 'utf8')).digest('hex').slice(0, 16);
    const f = [
      'Flow_start_handOver',
      'Flow_opened_handOver',
      'Flow_handOver_wait',
      'Flow_wait_settle',
      'Flow_overdue_escalate',
      'Flow_escalate_end',
      'Flow_settle_end',
    ] as const;
    const plain = (id: string, sourceId: string, targetId: string) => ({
      id,
      sourceId,
      targetId,
      condition: null,
      conditionText: null,
    });
    expect(model).toEqual({
      key: 'fixture-process',
      name: 'Case execution',
      version,
      startEventId: 'start',
      messageStartEvents: { TaskOpened: 'opened' },
      nodes: {
        start: { kind: 'startEvent', id: 'start', name: 'Case opened', incoming: [], outgoing: [f[0]] },
        opened: {
          kind: 'messageStartEvent',
          id: 'opened',
          name: 'TaskOpened received',
          messageName: 'TaskOpened',
          correlationVariable: 'caseId',
          incoming: [],
          outgoing: [f[1]],
        },
        handOver: {
          kind: 'sendTask',
          id: 'handOver',
          name: 'Hand over case',
          async: true,
          boundaryEventIds: [],
          incoming: [f[0], f[1]],
          outgoing: [f[2]],
        },
        waitForCompletion: {
          kind: 'receiveTask',
          id: 'waitForCompletion',
          name: 'Wait for completion',
          messageName: 'TaskCompleted',
          correlationVariable: 'caseId',
          boundaryEventIds: ['completionOverdue'],
          incoming: [f[2]],
          outgoing: [f[3]],
        },
        completionOverdue: {
          kind: 'boundaryTimer',
          id: 'completionOverdue',
          name: 'Completion deadline passed',
          attachedToId: 'waitForCompletion',
          cancelActivity: false,
          timer: { type: 'timeDuration', text: '${completionDeadline}', variable: 'completionDeadline', value: 'P14D' },
          incoming: [],
          outgoing: [f[4]],
        },
        escalate: {
          kind: 'sendTask',
          id: 'escalate',
          name: 'Escalate overdue case',
          async: true,
          boundaryEventIds: [],
          incoming: [f[4]],
          outgoing: [f[5]],
        },
        escalated: {
          kind: 'endEvent',
          terminate: false,
          id: 'escalated',
          name: 'Overdue case escalated',
          incoming: [f[5]],
          outgoing: [],
        },
        settle: {
          kind: 'serviceTask',
          id: 'settle',
          name: 'Settle',
          async: true,
          boundaryEventIds: [],
          incoming: [f[3]],
          outgoing: [f[6]],
        },
        end: { kind: 'endEvent', terminate: false, id: 'end', name: 'Case settled', incoming: [f[6]], outgoing: [] },
      },
      flows: {
        [f[0]]: plain(f[0], 'start', 'handOver'),
        [f[1]]: plain(f[1], 'opened', 'handOver'),
        [f[2]]: plain(f[2], 'handOver', 'waitForCompletion'),
        [f[3]]: plain(f[3], 'waitForCompletion', 'settle'),
        [f[4]]: plain(f[4], 'completionOverdue', 'escalate'),
        [f[5]]: plain(f[5], 'escalate', 'escalated'),
        [f[6]]: plain(f[6], 'settle', 'end'),
      },
    });
    expect(Object.keys(model.nodes)).toEqual([
      'start',
      'opened',
      'handOver',
      'waitForCompletion',
      'completionOverdue',
      'escalate',
      'escalated',
      'settle',
      'end',
    ]);
    expect(Object.keys(model.flows)).toEqual(f);
  });

  test('fixtures/bpmn/gateway.bpmn: conditions and default flow', async () => {
    const model = await loadProcessModel(join(FIXTURES, 'gateway.bpmn'));
    expect(model.key).toBe('settlement-routing');
    expect(model.nodes['checkItems']).toEqual({
      kind: 'exclusiveGateway',
      id: 'checkItems',
      name: 'Items completed?',
      defaultFlowId: 'Flow_nothingToBill',
      incoming: ['Flow_start_check'],
      outgoing: ['Flow_settle', 'Flow_nothingToBill'],
    });
    expect(model.flows['Flow_settle']).toMatchObject({
      conditionText: '${completedItems > 0}',
      condition: { kind: 'compare', variable: 'completedItems', op: '>', value: 0 },
    });
    expect(model.flows['Flow_nothingToBill']).toMatchObject({
      condition: null,
      conditionText: null,
      targetId: 'nothingToBill',
    });
    expect(model.nodes['settle']).toMatchObject({ kind: 'serviceTask', async: true });
    expect(model.nodes['nothingToBill']).toMatchObject({ kind: 'endEvent', outgoing: [] });
  });

  test('fixtures/bpmn/two-messages.bpmn: two waits in a row', async () => {
    const model = await loadProcessModel(join(FIXTURES, 'two-messages.bpmn'));
    expect(model.key).toBe('two-step-completion');
    expect(model.nodes['waitForStarted']).toMatchObject({
      kind: 'messageCatchEvent',
      messageName: 'ExecutionStarted',
      correlationVariable: 'caseId',
    });
    expect(model.nodes['waitForCompleted']).toMatchObject({
      kind: 'messageCatchEvent',
      messageName: 'TaskCompleted',
      correlationVariable: 'caseId',
    });
  });

  test('fixtures/bpmn/receive-task.bpmn: a receive task with its message and correlation variable', async () => {
    const model = await loadProcessModel(join(FIXTURES, 'receive-task.bpmn'));
    expect(model.key).toBe('order-approval');
    expect(model.nodes['receiveApproval']).toMatchObject({
      kind: 'receiveTask',
      messageName: 'ApprovalGiven',
      correlationVariable: 'orderId',
      incoming: ['Flow_start_approval'],
      outgoing: ['Flow_approval_ship'],
    });
    expect(model.nodes['shipOrder']).toMatchObject({ kind: 'serviceTask', async: true });
  });

  test('receive tasks, sync tasks, branches that merge, and loops back', async () => {
    const model = await parseProcessModel(
      bpmn(
        start() +
          '<bpmn:receiveTask id="recv" messageRef="m" inbox:correlationKey="orderId" />' +
          task('retry') +
          task('sync', 'inbox:async="false"') +
          '<bpmn:exclusiveGateway id="gw" />' +
          end() +
          flow('f1', 'start', 'recv') +
          flow('f2', 'recv', 'gw') +
          flow('f3', 'gw', 'retry', "${status == 'RETRY'}") +
          flow('f4', 'retry', 'recv') +
          flow('f5', 'gw', 'sync', "status != 'RETRY'") +
          flow('f6', 'sync', 'end'),
      ),
    );
    expect(model.nodes['recv']).toEqual({
      kind: 'receiveTask',
      id: 'recv',
      name: null,
      messageName: 'Done',
      correlationVariable: 'orderId',
      boundaryEventIds: [],
      incoming: ['f1', 'f4'],
      outgoing: ['f2'],
    });
    expect(model.nodes['retry']).toMatchObject({ kind: 'serviceTask', async: false });
    expect(model.nodes['sync']).toMatchObject({ kind: 'serviceTask', async: false });
    expect(model.nodes['gw']).toMatchObject({ defaultFlowId: null, outgoing: ['f3', 'f5'] });
    expect(model.name).toBeNull();
  });

  test('documentation, lanes, annotations, collaborations, non-executable processes and foreign extensions are ignored', async () => {
    const model = await parseProcessModel(
      bpmn(
        '<bpmn:documentation>why</bpmn:documentation>' +
          '<bpmn:extensionElements><foo:setting xmlns:foo="urn:foo" value="1" /></bpmn:extensionElements>' +
          '<bpmn:laneSet id="ls"><bpmn:lane id="lane"><bpmn:flowNodeRef>task</bpmn:flowNodeRef></bpmn:lane></bpmn:laneSet>' +
          around(task('task', 'inbox:async="true" xmlns:foo="urn:foo" foo:colour="red"'), 'task') +
          '<bpmn:textAnnotation id="note"><bpmn:text>Calls the ERP</bpmn:text></bpmn:textAnnotation>' +
          '<bpmn:association id="assoc" sourceRef="task" targetRef="note" />',
        '<bpmn:collaboration id="c"><bpmn:participant id="pp" processRef="p" /><bpmn:participant id="ext" processRef="other" /></bpmn:collaboration>' +
          '<bpmn:process id="other" isExecutable="false" />',
      ),
    );
    expect(Object.keys(model.nodes)).toEqual(['start', 'task', 'end']);
    expect(model.nodes['task']).toMatchObject({ kind: 'serviceTask', async: true });
  });

  test('an unprefixed async is read as inbox:async, as moddle resolves unprefixed attributes by local name', async () => {
    const model = await parseProcessModel(bpmn(around(task('task', 'async="true"'), 'task')));
    expect(model.nodes['task']).toMatchObject({ async: true });
  });

  test.each(['__proto__', 'constructor'])('an element id %s is rejected, and pollutes nothing', async (id) => {
    // moddle keeps elements by id in a plain object, where these names already exist.
    await expect(parseProcessModel(bpmn(around(task(id), id)))).rejects.toThrow(`duplicate ID <${id}>`);
    expect(Object.keys(Object.prototype)).toEqual([]);
  });

  test('the version follows the source', async () => {
    const a = await parseProcessModel(bpmn(around(task(), 'task')));
    const b = await parseProcessModel(bpmn(around(task(), 'task')) + '\n');
    expect(a.version).toMatch(/^[0-9a-f]{16}$/);
    expect(b.version).not.toBe(a.version);
  });
});

describe('parseProcessModel: invalid models', () => {
  const invalid: Array<[string, string, string | null, string]> = [
    // Unsupported elements.
    [
      'complex gateway',
      around('<bpmn:complexGateway id="fork" />', 'fork'),
      'fork',
      'unsupported element complexGateway; supported are: startEvent (none, message or timer)',
    ],
    [
      'script task',
      around('<bpmn:scriptTask id="calc" />', 'calc'),
      'calc',
      'a scriptTask runs code written in the model, which this engine never does: make it a serviceTask',
    ],
    [
      'timer catch event without a time',
      around(wait('timer', '', '<bpmn:timerEventDefinition />'), 'timer'),
      'timer',
      'a timerEventDefinition without timeDuration, timeDate or timeCycle',
    ],
    [
      'catch event without definition',
      around(wait('w', '', ''), 'w'),
      'w',
      'intermediateCatchEvent with no event definition',
    ],
    [
      'catch event with two definitions',
      around(wait('w', '', '<bpmn:messageEventDefinition messageRef="m" /><bpmn:timerEventDefinition />'), 'w'),
      'w',
      'with messageEventDefinition and timerEventDefinition',
    ],
    [
      'signal throw event',
      around('<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition /></bpmn:intermediateThrowEvent>', 't'),
      't',
      'unsupported element intermediateThrowEvent with signalEventDefinition',
    ],
    [
      'message start event without correlationKey',
      '<bpmn:startEvent id="start"><bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent>' +
        end() +
        flow('f', 'start', 'end'),
      'start',
      'missing inbox:correlationKey',
    ],
    [
      'signal end event',
      start() + '<bpmn:endEvent id="end"><bpmn:signalEventDefinition /></bpmn:endEvent>' + flow('f', 'start', 'end'),
      'end',
      'endEvent with signalEventDefinition',
    ],
    [
      'signal boundary event',
      around(task(), 'task') +
        '<bpmn:boundaryEvent id="late" attachedToRef="task"><bpmn:signalEventDefinition /></bpmn:boundaryEvent>',
      'late',
      'unsupported boundaryEvent with SignalEventDefinition',
    ],
    [
      'sub-process without start event',
      around('<bpmn:subProcess id="sub" />', 'sub'),
      'sub',
      'a subprocess without a start event',
    ],
    [
      'multi-instance task',
      around('<bpmn:serviceTask id="each"><bpmn:multiInstanceLoopCharacteristics /></bpmn:serviceTask>', 'each'),
      'each',
      'a multi-instance activity without inbox:collection or loopCardinality',
    ],
    [
      'element without id',
      around(task(), 'task') + '<bpmn:serviceTask name="nameless" />',
      null,
      'a serviceTask has no id',
    ],
    // Message waits.
    [
      'missing correlationKey',
      around(wait('wait', ''), 'wait'),
      'wait',
      "missing inbox:correlationKey: name the process variable the message's correlation key must equal",
    ],
    [
      'empty correlationKey',
      around(wait('wait', 'inbox:correlationKey=""'), 'wait'),
      'wait',
      'missing inbox:correlationKey',
    ],
    [
      'correlationKey not a name',
      around(wait('wait', 'inbox:correlationKey="order id"'), 'wait'),
      'wait',
      'inbox:correlationKey "order id" is not a variable name',
    ],
    [
      'message without name',
      around(wait('wait', undefined, '<bpmn:messageEventDefinition messageRef="anon" />'), 'wait') +
        '</bpmn:process><bpmn:message id="anon" /><bpmn:process id="x">',
      'wait',
      'message anon has no name',
    ],
    [
      'catch event without messageRef',
      around(wait('wait', undefined, '<bpmn:messageEventDefinition />'), 'wait'),
      'wait',
      'missing messageRef',
    ],
    [
      'receive task without messageRef',
      around('<bpmn:receiveTask id="recv" inbox:correlationKey="orderId" />', 'recv'),
      'recv',
      'missing messageRef',
    ],
    [
      'messageRef to an unknown id',
      around(wait('wait', undefined, '<bpmn:messageEventDefinition id="med" messageRef="nope" />'), 'wait'),
      'wait',
      'messageRef "nope" names no bpmn:message',
    ],
    [
      'messageRef to a non-message',
      around(wait('wait', undefined, '<bpmn:messageEventDefinition messageRef="start" />'), 'wait'),
      'wait',
      'messageRef start is a startEvent, not a message',
    ],
    // Extension attributes.
    [
      "typo'd extension attribute",
      around(task('task', 'inbox:asnyc="true"'), 'task'),
      'task',
      'unknown attribute <inbox:asnyc>',
    ],
    [
      'inbox attribute on an element that does not take it',
      around(task('task', 'inbox:correlationKey="orderId"'), 'task'),
      'task',
      'unknown attribute <inbox:correlationKey>',
    ],
    [
      'async that is not a boolean',
      around(task('task', 'inbox:async="yes"'), 'task'),
      'task',
      'inbox:async must be "true" or "false", not "yes"',
    ],
    [
      'async spelt in capitals',
      around(task('task', 'inbox:async="True"'), 'task'),
      'task',
      'inbox:async must be "true" or "false"',
    ],
    [
      'our attribute without a prefix where it does not belong',
      around(task('task', 'correlationKey="orderId"'), 'task'),
      'task',
      'unknown attribute <correlationKey>',
    ],
    [
      'our attribute in a wrong namespace',
      around(task('task', 'xmlns:ibx="https://example.com/typo" ibx:async="true"'), 'task'),
      'task',
      'attribute ibx:async is not in the inbox namespace',
    ],
    // Flows.
    [
      'flow to an unknown id',
      around(task(), 'task') + flow('f9', 'task', 'nowhere'),
      'f9',
      'dangling flow: targetRef "nowhere" names no element',
    ],
    [
      'flow from an unknown id',
      around(task(), 'task') + flow('f9', 'nowhere', 'task'),
      'f9',
      'dangling flow: sourceRef "nowhere" names no element',
    ],
    [
      'flow to an element outside the process',
      around(task(), 'task') + flow('f9', 'task', 'm'),
      'f9',
      'dangling flow: targetRef "m" is not a flow node of this process',
    ],
    [
      'flow without targetRef',
      around(task(), 'task') + '<bpmn:sequenceFlow id="f9" sourceRef="task" />',
      'f9',
      'dangling flow: targetRef is missing',
    ],
    [
      'unreachable node',
      around(task(), 'task') + task('orphan') + flow('f9', 'orphan', 'end'),
      'orphan',
      'unreachable from start event start',
    ],
    [
      'unreachable cycle',
      around(task(), 'task') + task('x') + task('y') + flow('f8', 'x', 'y') + flow('f9', 'y', 'x'),
      'x',
      'unreachable',
    ],
    [
      'two start events',
      around(task(), 'task') + start('again') + flow('f9', 'again', 'task'),
      'again',
      'a second start event (the first is start)',
    ],
    ['no start event', task() + end() + flow('f', 'task', 'end'), 'p', 'no start event'],
    [
      'task with two outgoing flows',
      around(task(), 'task') + end('end2') + flow('f9', 'task', 'end2'),
      'task',
      '2 outgoing sequence flows (f2, f9): only a gateway may branch (a parallelGateway to take them all',
    ],
    [
      'start event with two outgoing flows',
      around(task(), 'task') + flow('f9', 'start', 'end'),
      'start',
      'only a gateway may branch',
    ],
    [
      'start event with incoming flow',
      start() + task() + flow('f1', 'start', 'task') + flow('f2', 'task', 'start'),
      'start',
      'a start event has no incoming sequence flows (f2)',
    ],
    [
      'end event with outgoing flow',
      around(task(), 'task') + task('after') + flow('f9', 'end', 'after') + flow('f10', 'after', 'end'),
      'end',
      'an end event has no outgoing sequence flows',
    ],
    // Conditions and gateways.
    [
      'condition on a non-gateway flow',
      start() + task() + end() + flow('f1', 'start', 'task', '${a > 1}') + flow('f2', 'task', 'end'),
      'f1',
      'a condition on a flow leaving startEvent start: only exclusive and inclusive gateways evaluate conditions',
    ],
    [
      'gateway without default and an unconditioned flow',
      gateway('', flow('fa', 'gw', 'a', '${x == 1}') + flow('fb', 'gw', 'b')),
      'fb',
      'no condition on a flow leaving exclusive gateway gw',
    ],
    [
      'gateway default that is not outgoing',
      gateway('default="f0"', flow('fa', 'gw', 'a', '${x == 1}') + flow('fb', 'gw', 'b', 'x == 2')),
      'gw',
      'default flow f0 is not one of its outgoing flows (fa, fb)',
    ],
    [
      'gateway default with a condition',
      gateway('default="fb"', flow('fa', 'gw', 'a', '${x == 1}') + flow('fb', 'gw', 'b', 'x == 2')),
      'fb',
      'the default flow of gw has a condition',
    ],
    [
      'gateway without outgoing flow',
      start() + '<bpmn:exclusiveGateway id="gw" />' + flow('f0', 'start', 'gw'),
      'gw',
      'a gateway without an outgoing sequence flow',
    ],
    [
      'bad condition syntax',
      gateway('default="fb"', flow('fa', 'gw', 'a', '${x = 1}') + flow('fb', 'gw', 'b')),
      'fa',
      'invalid condition "${x = 1}": unexpected character "=" at position 5',
    ],
    [
      'empty condition',
      gateway('default="fb"', flow('fa', 'gw', 'a', '') + flow('fb', 'gw', 'b')),
      'fa',
      'empty condition',
    ],
  ];
  test.each(invalid)('%s', async (_name, process, elementId, message) => {
    const error = await parseProcessModel(bpmn(process)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ elementId });
    expect((error as ModelError).message).toContain(message);
    if (elementId !== null) expect((error as ModelError).message.startsWith(`${elementId}: `)).toBe(true);
  });

  const unreadable: Array<[string, string, string]> = [
    ['empty input', '', 'not readable as BPMN XML'],
    ['not XML', 'hello', 'not readable as BPMN XML'],
    ['truncated', bpmn(around(task(), 'task')).slice(0, 300), 'not readable as BPMN XML'],
    [
      'mismatched tags',
      bpmn(around(task(), 'task')).replace('</bpmn:process>', '</bpmn:proces>'),
      'not readable as BPMN XML',
    ],
    ['not BPMN', '<html><body /></html>', 'not readable as BPMN XML'],
    [
      'unknown BPMN element',
      bpmn(around(task(), 'task') + '<bpmn:fancyTask id="x" />'),
      'unparsable content <bpmn:fancyTask> detected',
    ],
    ['duplicate id', bpmn(around(task(), 'task') + task()), 'duplicate ID <task>'],
    ['no executable process', bpmn(around(task(), 'task'), '', 'isExecutable="false"'), 'no executable process'],
    ['no process at all', bpmn('').replace(/<bpmn:process[^]*<\/bpmn:process>/, ''), 'no executable process'],
    [
      'two executable processes',
      bpmn(around(task(), 'task'), '<bpmn:process id="q" isExecutable="true" />'),
      '2 executable processes (q, p): a file must hold exactly one',
    ],
  ];
  test.each(unreadable)('%s', async (_name, xml, message) => {
    const error = await parseProcessModel(xml).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ elementId: null });
    expect((error as ModelError).message).toContain(message);
  });

  test('a missing file is a file system error, not a ModelError', async () => {
    await expect(loadProcessModel(join(FIXTURES, 'missing.bpmn'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
