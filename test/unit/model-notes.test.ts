import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { type ModelNote, modelNotes } from '../../functions/src/operations/model-notes';

/**
 * modelNotes(): what each element runs, as the engine read it, in the
 * spellings of the model. The five public Camunda 8 models of
 * test/fixtures/camunda8/ as `inbox model check --elements` prints them, then
 * one snippet per kind of note: the inbox's own attributes (inbox:async, a
 * `${var}` timer with inbox:default) and the zeebe: extensions (FEEL keys,
 * call targets, loops, headers, properties). Exact notes: a modeller reads
 * them, so a changed word is a changed test.
 */
const CAMUNDA8 = join(__dirname, '..', 'fixtures', 'camunda8');
const notesOf = async (xml: string): Promise<ModelNote[]> => modelNotes(await parseProcessModel(xml));

describe('the five public Camunda 8 models', () => {
  test.each<[string, ModelNote[]]>([
    [
      'Client-DeployWorkflow.bpmn',
      [
        {
          id: 'ServiceTask_0xdwuw7',
          kind: 'serviceTask',
          name: 'demo-service',
          notes: ['handler of type demo-service (zeebe:taskDefinition, retries 3)'],
        },
        {
          id: 'IntermediateCatchEvent_04zcf15',
          kind: 'timerCatchEvent',
          name: 'timeout',
          notes: ['timeDuration PT5S'],
        },
        {
          id: 'IntermediateCatchEvent_169ouyw',
          kind: 'messageCatchEvent',
          name: 'message_1',
          // correlationKey="=uniqueId" names a plain variable: the engine reads it as one.
          notes: ['waits for Message_In, key =uniqueId (zeebe:subscription)'],
        },
        {
          id: 'ServiceTask_1rszkg1',
          kind: 'serviceTask',
          name: 'Timed out',
          notes: ['handler of type time-out (zeebe:taskDefinition)'],
        },
        {
          id: 'ServiceTask_1ng04rq',
          kind: 'serviceTask',
          name: 'Process Message',
          notes: ['handler of type process-message (zeebe:taskDefinition)'],
        },
      ],
    ],
    [
      'looping-servicetask.bpmn',
      [
        // source="= 0": the FEEL body without its blank.
        { id: 'startevent', kind: 'startEvent', name: 'Start event', notes: ['outputs: loopAmount ← =0'] },
        {
          id: 'servicetask',
          kind: 'serviceTask',
          name: 'service task',
          notes: ['handler of type test (zeebe:taskDefinition, retries 1)', 'outputs: loopAmount ← =loopAmount + 1'],
        },
        // The condition as written; the default flow has none and no note.
        { id: 'loopSequenceFlow', kind: 'sequenceFlow', name: null, notes: ['condition = loopAmount != totalLoops'] },
      ],
    ],
    [
      'say_hello.bpmn',
      [
        {
          id: 'Activity_0apsury',
          kind: 'serviceTask',
          name: 'Say hello',
          notes: [
            'handler of type hello_task (zeebe:taskDefinition)',
            'inputs: name ← =name',
            'outputs: message ← =message',
          ],
        },
      ],
    ],
    [
      'simple_user_task.bpmn',
      [
        {
          id: 'user-task-1',
          kind: 'userTask',
          name: 'user-task-1',
          notes: ['assignee Assignee; groups Group1, Group2; users User1, User2'],
        },
      ],
    ],
    [
      'user-task-form.bpmn',
      [{ id: 'UserTask_1', kind: 'userTask', name: 'Inspect Invoice', notes: ['form formId:invoice-form'] }],
    ],
  ])('%s', async (file, expected) => {
    expect(await notesOf(readFileSync(join(CAMUNDA8, file), 'utf8'))).toEqual(expected);
  });
});

/** A definitions document around the body of process `p`: the inbox's namespace, and zeebe's when `camunda8`. */
const definitions = (process: string, roots = '', camunda8 = false): string => `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"${camunda8 ? ' xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"' : ''}
    xmlns:inbox="https://github.com/transactional-inbox/bpmn" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    id="d" targetNamespace="urn:test">${roots}
  <bpmn:process id="p" isExecutable="true">${process}</bpmn:process>
</bpmn:definitions>`;
const ext = (body: string): string => `<bpmn:extensionElements>${body}</bpmn:extensionElements>`;
const flow = (id: string, source: string, target: string): string =>
  `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}" />`;
/** start → `middle` (whose id is `t`) → end. */
const around = (middle: string): string =>
  '<bpmn:startEvent id="start" /><bpmn:endEvent id="end" />' +
  middle +
  flow('f1', 'start', 't') +
  flow('f2', 't', 'end');
/** Message `m` named Done, with a zeebe:subscription correlationKey when one is given. */
const message = (key?: string): string =>
  key === undefined
    ? '<bpmn:message id="m" name="Done" />'
    : `<bpmn:message id="m" name="Done">${ext(`<zeebe:subscription correlationKey="${key}" />`)}</bpmn:message>`;
const catchMessage = (attributes = ''): string =>
  `<bpmn:intermediateCatchEvent id="t" ${attributes}><bpmn:messageEventDefinition messageRef="m" /></bpmn:intermediateCatchEvent>`;
const timerCatch = (duration: string, attributes = ''): string =>
  `<bpmn:intermediateCatchEvent id="t"><bpmn:timerEventDefinition ${attributes}><bpmn:timeDuration xsi:type="bpmn:tFormalExpression">${duration}</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`;
const messageStart = (attributes = ''): string =>
  `<bpmn:startEvent id="t" ${attributes}><bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent><bpmn:endEvent id="end" />` +
  flow('f', 't', 'end');
const job = '<zeebe:taskDefinition type="ship" />';
const loop = (zeebe: string, attributes = '', body = ''): string =>
  `<bpmn:multiInstanceLoopCharacteristics ${attributes}>${ext(zeebe)}${body}</bpmn:multiInstanceLoopCharacteristics>`;

describe('one snippet per kind of note', () => {
  test.each<[string, string, string, readonly string[]]>([
    // The inbox's own service tasks: the handler is the element's id.
    [
      'inbox:async="true"',
      definitions(around('<bpmn:serviceTask id="t" inbox:async="true" />')),
      'serviceTask',
      ['async, handler t'],
    ],
    [
      'a synchronous service task',
      definitions(around('<bpmn:serviceTask id="t" />')),
      'serviceTask',
      ['synchronous, handler t'],
    ],
    [
      'inbox:correlationKey on a message catch',
      definitions(around(catchMessage('inbox:correlationKey="orderId"')), message()),
      'messageCatchEvent',
      ['waits for Done, key variable orderId'],
    ],
    [
      'zeebe:subscription correlationKey =order.id: the FEEL as written',
      definitions(around(catchMessage()), message('=order.id'), true),
      'messageCatchEvent',
      ['waits for Done, key =order.id (zeebe:subscription)'],
    ],
    [
      'zeebe:subscription correlationKey =orderId: as written, not as read',
      definitions(around(catchMessage()), message('=orderId'), true),
      'messageCatchEvent',
      ['waits for Done, key =orderId (zeebe:subscription)'],
    ],
    [
      'a receive task with a FEEL key',
      definitions(around('<bpmn:receiveTask id="t" messageRef="m" />'), message('=order.id'), true),
      'receiveTask',
      ['waits for Done, key =order.id (zeebe:subscription)'],
    ],
    [
      'a message start event with inbox:correlationKey',
      definitions(messageStart('inbox:correlationKey="orderId"'), message()),
      'messageStartEvent',
      ['started by Done, key into variable orderId'],
    ],
    [
      'a Camunda 8 message start event keyed =orderId: stored, and shown as written',
      definitions(messageStart(), message('=orderId'), true),
      'messageStartEvent',
      ['started by Done, key into variable orderId (zeebe:subscription =orderId)'],
    ],
    [
      'a Camunda 8 message start event without a key',
      definitions(messageStart(), message(), true),
      'messageStartEvent',
      ['started by Done, key the business key'],
    ],
    [
      'a ${var} timer with inbox:default',
      definitions(around(timerCatch('${wait}', 'inbox:default="PT5S"'))),
      'timerCatchEvent',
      ['timeDuration ${wait} (default PT5S)'],
    ],
    [
      'a ${var} timer without a default',
      definitions(around(timerCatch('${wait}'))),
      'timerCatchEvent',
      ['timeDuration ${wait}'],
    ],
    [
      'a call activity (calledElement)',
      definitions(around('<bpmn:callActivity id="t" calledElement="child" />')),
      'callActivity',
      ['calls child'],
    ],
    [
      'a call activity (zeebe:calledElement)',
      definitions(
        around(`<bpmn:callActivity id="t">${ext('<zeebe:calledElement processId="child" />')}</bpmn:callActivity>`),
        '',
        true,
      ),
      'callActivity',
      ['calls child'],
    ],
    [
      'a parallel multi-instance over a variable, collecting a variable',
      definitions(
        around(
          `<bpmn:serviceTask id="t">${ext(job)}${loop(
            '<zeebe:loopCharacteristics inputCollection="=items" inputElement="it" outputCollection="results" outputElement="=verdict" />',
          )}</bpmn:serviceTask>`,
        ),
        '',
        true,
      ),
      'serviceTask',
      [
        'handler of type ship (zeebe:taskDefinition)',
        'parallel over variable items as it, collects verdict into results',
      ],
    ],
    [
      'a sequential multi-instance over FEEL, collecting FEEL, with a completion condition',
      definitions(
        around(
          `<bpmn:serviceTask id="t">${ext(job)}${loop(
            '<zeebe:loopCharacteristics inputCollection="=order.items" outputCollection="results" outputElement="=r.score" />',
            'isSequential="true"',
            '<bpmn:completionCondition xsi:type="bpmn:tFormalExpression">=count(results) &gt;= 2</bpmn:completionCondition>',
          )}</bpmn:serviceTask>`,
        ),
        '',
        true,
      ),
      'serviceTask',
      [
        'handler of type ship (zeebe:taskDefinition)',
        'sequential over =order.items as item, collects =r.score into results, until =count(results) >= 2',
      ],
    ],
    [
      'zeebe:taskHeaders and zeebe:properties',
      definitions(
        around(
          `<bpmn:serviceTask id="t">${ext(
            '<zeebe:taskDefinition type="ship" retries="5" />' +
              '<zeebe:taskHeaders><zeebe:header key="a" value="1" /><zeebe:header key="b" value="x" /></zeebe:taskHeaders>' +
              '<zeebe:properties><zeebe:property name="team" value="billing" /><zeebe:property name="sla" value="2h" /></zeebe:properties>',
          )}</bpmn:serviceTask>`,
        ),
        '',
        true,
      ),
      'serviceTask',
      [
        'handler of type ship (zeebe:taskDefinition, retries 5)',
        'headers: a=1, b=x',
        'properties: team=billing, sla=2h',
      ],
    ],
    [
      'zeebe:ioMapping: FEEL as =expr, a static value quoted',
      definitions(
        around(
          `<bpmn:serviceTask id="t">${ext(
            job +
              '<zeebe:ioMapping><zeebe:input source="=order.total" target="total" /><zeebe:input source="fixed" target="mode" /><zeebe:output source="=result * 2" target="doubled" /></zeebe:ioMapping>',
          )}</bpmn:serviceTask>`,
        ),
        '',
        true,
      ),
      'serviceTask',
      [
        'handler of type ship (zeebe:taskDefinition)',
        'inputs: total ← =order.total, mode ← "fixed"',
        'outputs: doubled ← =result * 2',
      ],
    ],
  ])('%s', async (_what, xml, kind, notes) => {
    expect(await notesOf(xml)).toEqual([{ id: 't', kind, name: null, notes }]);
  });

  test('elements that run nothing are left out; nodes in model order, then the flows with a condition', async () => {
    const xml = definitions(
      '<bpmn:startEvent id="start" /><bpmn:exclusiveGateway id="gw" default="no" />' +
        '<bpmn:serviceTask id="b" inbox:async="true" /><bpmn:serviceTask id="a" name="A" />' +
        '<bpmn:endEvent id="end" />' +
        flow('f0', 'start', 'gw') +
        '<bpmn:sequenceFlow id="yes" sourceRef="gw" targetRef="a"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">${ amount &gt; 100 }</bpmn:conditionExpression></bpmn:sequenceFlow>' +
        flow('no', 'gw', 'b') +
        flow('f1', 'a', 'end') +
        flow('f2', 'b', 'end'),
    );
    expect(await notesOf(xml)).toEqual([
      { id: 'b', kind: 'serviceTask', name: null, notes: ['async, handler b'] },
      { id: 'a', kind: 'serviceTask', name: 'A', notes: ['synchronous, handler a'] },
      { id: 'yes', kind: 'sequenceFlow', name: null, notes: ['condition ${ amount > 100 }'] },
    ]);
  });
});
