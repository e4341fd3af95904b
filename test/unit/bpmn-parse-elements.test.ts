import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { ModelError, STEP_LIMIT } from '../../functions/src/bpmn/model';
import { asyncTask, bpmnDocument, chain, element, sequenceFlow } from '../support/bpmn-xml';

const start = element('startEvent', 'start');
const end = (id = 'end') => element('endEvent', id);
/** start → X → end, X being `xml` with id `id`. */
const around = (xml: string, id: string) => start + xml + end() + chain('start', id, 'end');

describe('the elements real models use load as what they are', () => {
  test.each([
    ['untyped task', element('task', 'x'), { kind: 'passThrough', element: 'task' }],
    ['manual task', element('manualTask', 'x'), { kind: 'passThrough', element: 'manualTask' }],
    [
      'none throw event',
      element('intermediateThrowEvent', 'x'),
      { kind: 'passThrough', element: 'intermediateThrowEvent' },
    ],
    [
      'business rule task',
      element('businessRuleTask', 'x', 'inbox:async="true"'),
      { kind: 'businessRuleTask', async: true },
    ],
    [
      'user task with assignment and form',
      element('userTask', 'x', 'inbox:assignee="ana" inbox:candidateGroups="a,,b " inbox:formKey="f"'),
      { kind: 'userTask', assignee: 'ana', candidateGroups: ['a', 'b'], formKey: 'f', boundaryEventIds: [] },
    ],
    [
      'user task without',
      element('userTask', 'x'),
      { kind: 'userTask', assignee: null, candidateGroups: [], formKey: null },
    ],
  ])('%s', async (_name, xml, expected) => {
    const model = await parseProcessModel(bpmnDocument(around(xml, 'x')));
    expect(model.nodes['x']).toMatchObject(expected);
  });

  test('terminate end event', async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        start + element('endEvent', 'stop', '', '<bpmn:terminateEventDefinition />') + chain('start', 'stop'),
      ),
    );
    expect(model.nodes['stop']).toMatchObject({ kind: 'endEvent', terminate: true });
  });

  test('parallel fork and join, inclusive fork with a default', async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        start +
          element('inclusiveGateway', 'split', 'default="dflt"') +
          element('parallelGateway', 'fork') +
          element('parallelGateway', 'join') +
          end() +
          end('other') +
          sequenceFlow('s', 'start', 'split') +
          sequenceFlow('c', 'split', 'fork', '${x > 1}') +
          sequenceFlow('dflt', 'split', 'other') +
          sequenceFlow('f1', 'fork', 'join') +
          sequenceFlow('f2', 'fork', 'join') +
          sequenceFlow('j', 'join', 'end'),
      ),
    );
    expect(model.nodes['split']).toMatchObject({ kind: 'inclusiveGateway', defaultFlowId: 'dflt' });
    expect(model.nodes['fork']).toMatchObject({ kind: 'parallelGateway', outgoing: ['f1', 'f2'] });
    expect(model.nodes['join']).toMatchObject({ kind: 'parallelGateway', incoming: ['f1', 'f2'] });
  });

  test('diagram-only data (data objects, data stores, annotations, groups) is ignored, not refused', async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        around(asyncTask('x'), 'x') +
          '<bpmn:dataObject id="do" /><bpmn:dataObjectReference id="dor" dataObjectRef="do" />' +
          '<bpmn:dataStoreReference id="ds" /><bpmn:textAnnotation id="note"><bpmn:text>hi</bpmn:text></bpmn:textAnnotation>' +
          '<bpmn:association id="as" sourceRef="x" targetRef="note" /><bpmn:group id="g" />',
      ),
    );
    expect(Object.keys(model.nodes).sort()).toEqual(['end', 'start', 'x']);
  });

  test('a broken reference only the picture or a data object uses is ignored; one a flow uses still refuses', async () => {
    const diagram =
      '<bpmndi:BPMNDiagram xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI" id="dia"><bpmndi:BPMNPlane id="plane" bpmnElement="p">' +
      '<bpmndi:BPMNShape id="ghost" bpmnElement="deletedLongAgo" /></bpmndi:BPMNPlane></bpmndi:BPMNDiagram>';
    const model = await parseProcessModel(
      bpmnDocument(around(asyncTask('x'), 'x') + '<bpmn:dataObject id="do" itemSubjectRef="noSuchItem" />').replace(
        '</bpmn:definitions>',
        `${diagram}</bpmn:definitions>`,
      ),
    );
    expect(Object.keys(model.nodes).sort()).toEqual(['end', 'start', 'x']);
    const dangling = await parseProcessModel(
      bpmnDocument(start + end() + sequenceFlow('f', 'start', 'nowhere') + sequenceFlow('g', 'start', 'end')),
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(dangling).toMatchObject({ elementId: 'f', message: expect.stringContaining('dangling flow: targetRef') });
  });

  test('a timer boundary event on a user task', async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        around(element('userTask', 'x'), 'x') +
          element(
            'boundaryEvent',
            'late',
            'attachedToRef="x"',
            '<bpmn:timerEventDefinition><bpmn:timeDuration>P1D</bpmn:timeDuration></bpmn:timerEventDefinition>',
          ) +
          end('lateEnd') +
          chain('late', 'lateEnd'),
      ),
    );
    expect(model.nodes['x']).toMatchObject({ boundaryEventIds: ['late'] });
  });
});

describe('what cannot run as drawn is refused at load, naming the element', () => {
  const longChain = Array.from({ length: STEP_LIMIT + 1 }, (_, i) => element('task', `t${i}`)).join('');
  const longIds = Array.from({ length: STEP_LIMIT + 1 }, (_, i) => `t${i}`);
  test.each<[string, string, string, string]>([
    [
      'a script task',
      around(element('scriptTask', 'x'), 'x'),
      'x',
      'a scriptTask runs code written in the model, which this engine never does: make it a serviceTask and register its handler in the app',
    ],
    [
      'a condition on a parallel gateway flow',
      start +
        element('parallelGateway', 'fork') +
        end() +
        end('b') +
        chain('start', 'fork') +
        sequenceFlow('f1', 'fork', 'end', '${x > 1}') +
        sequenceFlow('f2', 'fork', 'b'),
      'f1',
      'a condition on a flow leaving parallelGateway fork: only exclusive and inclusive gateways evaluate conditions',
    ],
    [
      'a cycle without a wait',
      start +
        element('task', 'a') +
        element('exclusiveGateway', 'again', 'default="out"') +
        end() +
        chain('start', 'a', 'again') +
        sequenceFlow('back', 'again', 'a', '${n &lt; 3}') +
        sequenceFlow('out', 'again', 'end'),
      'a',
      'a cycle with no wait in it (a → again → a)',
    ],
    [
      'a chain longer than the step limit',
      start + longChain + end() + chain('start', ...longIds, 'end'),
      'start',
      `a chain of ${STEP_LIMIT + 3} elements without a wait starts here: a token passes at most ${STEP_LIMIT} in one step`,
    ],
    [
      'a timer boundary event on a synchronous business rule task',
      around(element('businessRuleTask', 'x'), 'x') +
        element(
          'boundaryEvent',
          'late',
          'attachedToRef="x"',
          '<bpmn:timerEventDefinition><bpmn:timeDuration>P1D</bpmn:timeDuration></bpmn:timerEventDefinition>',
        ) +
        end('lateEnd') +
        chain('late', 'lateEnd'),
      'late',
      'a timer on synchronous task x could never fire',
    ],
    [
      'a message boundary event on a synchronous task',
      around(element('serviceTask', 'x'), 'x') +
        element(
          'boundaryEvent',
          'm1',
          'attachedToRef="x" inbox:correlationKey="k"',
          '<bpmn:messageEventDefinition messageRef="m" />',
        ),
      'm1',
      'a message can only interrupt where a token waits',
    ],
    [
      'a receive task and its boundary event waiting for the same message',
      around(element('receiveTask', 'x', 'messageRef="m" inbox:correlationKey="k"'), 'x') +
        element(
          'boundaryEvent',
          'm1',
          'attachedToRef="x" inbox:correlationKey="k"',
          '<bpmn:messageEventDefinition messageRef="m" />',
        ),
      'm1',
      'receive task x and its boundary event both wait for Done: a message could not choose',
    ],
    [
      'two message boundary events for one message on one task',
      around(asyncTask('x'), 'x') +
        element(
          'boundaryEvent',
          'm1',
          'attachedToRef="x" inbox:correlationKey="k"',
          '<bpmn:messageEventDefinition messageRef="m" />',
        ) +
        element(
          'boundaryEvent',
          'm2',
          'attachedToRef="x" inbox:correlationKey="k"',
          '<bpmn:messageEventDefinition messageRef="m" />',
        ),
      'm2',
      'm1 and m2 on x both wait for Done: a message could not choose',
    ],
    [
      'two message event subprocesses for one message in one scope',
      around(asyncTask('x'), 'x') +
        element(
          'subProcess',
          'esp1',
          'triggeredByEvent="true"',
          element('startEvent', 'es1', 'inbox:correlationKey="k"', '<bpmn:messageEventDefinition messageRef="m" />') +
            element('endEvent', 'ee1') +
            chain('es1', 'ee1'),
        ) +
        element(
          'subProcess',
          'esp2',
          'triggeredByEvent="true"',
          element('startEvent', 'es2', 'inbox:correlationKey="k"', '<bpmn:messageEventDefinition messageRef="m" />') +
            element('endEvent', 'ee2') +
            chain('es2', 'ee2'),
        ),
      'esp2',
      'event subprocesses esp1 and esp2 both start on Done in one scope',
    ],
    [
      'a non-interrupting error start event',
      around(asyncTask('x'), 'x') +
        element(
          'subProcess',
          'esp',
          'triggeredByEvent="true"',
          element('startEvent', 'es', 'isInterrupting="false"', '<bpmn:errorEventDefinition />') +
            element('endEvent', 'ee') +
            chain('es', 'ee'),
        ),
      'es',
      'a non-interrupting error start event: an error always ends what threw it',
    ],
    [
      'an event subprocess with a flow out of it',
      around(asyncTask('x'), 'x') +
        element(
          'subProcess',
          'esp',
          'triggeredByEvent="true"',
          element('startEvent', 'es', '', '<bpmn:errorEventDefinition />') +
            element('endEvent', 'ee') +
            chain('es', 'ee'),
        ) +
        sequenceFlow('out', 'esp', 'end'),
      'esp',
      'an event subprocess is not connected by sequence flows',
    ],
    [
      'an event subprocess started by a signal',
      around(asyncTask('x'), 'x') +
        element(
          'subProcess',
          'esp',
          'triggeredByEvent="true"',
          element('startEvent', 'es', '', '<bpmn:signalEventDefinition />') +
            element('endEvent', 'ee') +
            chain('es', 'ee'),
        ),
      'es',
      'an event subprocess started by signalEventDefinition: message, timer, error and escalation start events are supported',
    ],
    [
      'a task that branches without a gateway',
      around(asyncTask('x'), 'x') + end('b') + chain('x', 'b'),
      'x',
      'only a gateway may branch (a parallelGateway to take them all, an exclusiveGateway to choose one)',
    ],
  ])('%s', async (_name, body, elementId, message) => {
    const error = await parseProcessModel(bpmnDocument(body)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ elementId });
    expect((error as ModelError).message).toContain(message);
  });

  test('a loop with a wait in it loads (a retry round through an async task)', async () => {
    const model = await parseProcessModel(
      bpmnDocument(
        start +
          asyncTask('a') +
          element('exclusiveGateway', 'again', 'default="out"') +
          end() +
          chain('start', 'a', 'again') +
          sequenceFlow('back', 'again', 'a', '${n &lt; 3}') +
          sequenceFlow('out', 'again', 'end'),
      ),
    );
    expect(Object.keys(model.nodes)).toContain('again');
  });
});
