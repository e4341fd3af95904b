/**
 * The load check follows everything a token can do within one step: flows,
 * a subprocess's way in and out, and an error or escalation to what
 * catches it. A cycle of such moves without a wait is refused naming it;
 * the same drawing with a wait on the way round loads.
 */
import { ModelError } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { asyncTask, bpmnDocument, chain, element, sequenceFlow } from '../support/bpmn-xml';

const CODES =
  '<bpmn:error id="bad" errorCode="BAD" /><bpmn:escalation id="x" escalationCode="X" />' +
  '<bpmn:escalation id="y" escalationCode="Y" />';
const load = (body: string) => parseProcessModel(bpmnDocument(body, CODES));
const refusal = (body: string) =>
  load(body).then(
    () => null,
    (e: unknown) => e,
  );
const errorDef = (ref = 'bad') => `<bpmn:errorEventDefinition errorRef="${ref}" />`;
const escalationDef = (ref: string) => `<bpmn:escalationEventDefinition escalationRef="${ref}" />`;

/** start → sub [ s0 → check → invalid (error BAD) | ok → e0 ] → done; an error boundary on sub goes `back` to sub through `between`. */
const retry = (between: string, backIds: readonly string[]) =>
  element('startEvent', 'start') +
  element(
    'subProcess',
    'sub',
    '',
    element('startEvent', 's0') +
      element('exclusiveGateway', 'check', 'default="ok"') +
      element('endEvent', 'invalid', '', errorDef()) +
      element('endEvent', 'e0') +
      sequenceFlow('s0-check', 's0', 'check') +
      sequenceFlow('to-invalid', 'check', 'invalid', 'valid == false') +
      sequenceFlow('ok', 'check', 'e0'),
  ) +
  element('boundaryEvent', 'failed', 'attachedToRef="sub"', errorDef()) +
  between +
  element('endEvent', 'done') +
  chain('start', 'sub', 'done') +
  chain('failed', ...backIds, 'sub');

/** Two non-interrupting escalation event subprocesses; `onX` throws `onXThrows`, `onY` throws `onYThrows`. */
const twoHandlers = (onXThrows: string, onYThrows: string) =>
  element('startEvent', 'start') +
  element('intermediateThrowEvent', 'raise', '', escalationDef('x')) +
  asyncTask('work') +
  element('endEvent', 'end') +
  chain('start', 'raise', 'work', 'end') +
  ['x', 'y']
    .map((code) => {
      const id = `on${code.toUpperCase()}`;
      const throws = code === 'x' ? onXThrows : onYThrows;
      return element(
        'subProcess',
        id,
        'triggeredByEvent="true"',
        element('startEvent', `${id}-s`, 'isInterrupting="false"', escalationDef(code)) +
          element('intermediateThrowEvent', `${id}-t`, '', escalationDef(throws)) +
          element('endEvent', `${id}-e`) +
          chain(`${id}-s`, `${id}-t`, `${id}-e`),
      );
    })
    .join('');

describe('a cycle without a wait through boundary events and event subprocesses is refused, naming it', () => {
  test('retry the subprocess on error, no wait on the way round', async () => {
    const error = await refusal(retry('', []));
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toContain(
      'a cycle with no wait in it (sub → s0 → check → invalid → failed → sub)',
    );
  });

  test('two non-interrupting escalation event subprocesses that throw each other codes', async () => {
    const error = await refusal(twoHandlers('y', 'x'));
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).message).toMatch(
      /a cycle with no wait in it \(onX → onX-s → onX-t → onY → onY-s → onY-t → onX\)/,
    );
  });

  test('a subprocess whose way out leads back into it, past a path inside without a wait', async () => {
    const error = await refusal(
      element('startEvent', 'start') +
        element(
          'subProcess',
          'sub',
          '',
          element('startEvent', 's0') +
            element('exclusiveGateway', 'which', 'default="skip"') +
            element('userTask', 'review') +
            element('endEvent', 'e0') +
            element('endEvent', 'e1') +
            sequenceFlow('s0-which', 's0', 'which') +
            sequenceFlow('to-review', 'which', 'review', 'n > 1') +
            sequenceFlow('skip', 'which', 'e1') +
            chain('review', 'e0'),
        ) +
        element('exclusiveGateway', 'again', 'default="out"') +
        element('endEvent', 'end') +
        chain('start', 'sub', 'again') +
        sequenceFlow('back', 'again', 'sub', 'n &lt; 3') +
        sequenceFlow('out', 'again', 'end'),
    );
    expect((error as ModelError).message).toContain('(sub → s0 → which → e1 → again → sub)');
  });
});

test('a synchronous task whose handler throws back into a loop without a wait: its error boundary is a way round too', async () => {
  // start → sub [ s0 → check (sync) → e0 ] → done; an error boundary on sub → fix (sync) → sub.
  const body =
    element('startEvent', 'start') +
    element(
      'subProcess',
      'sub',
      '',
      element('startEvent', 's0') +
        element('serviceTask', 'check') +
        element('endEvent', 'e0') +
        chain('s0', 'check', 'e0'),
    ) +
    element('boundaryEvent', 'failed', 'attachedToRef="sub"', errorDef()) +
    element('endEvent', 'done') +
    chain('start', 'sub', 'done');
  const error = await refusal(body + element('serviceTask', 'fix') + chain('failed', 'fix', 'sub'));
  expect((error as ModelError).message).toContain('a cycle with no wait in it (sub → s0 → check → failed → fix → sub)');
  // With the fix an async step, a job stands on the way round: it loads.
  const model = await load(body + asyncTask('fix') + chain('failed', 'fix', 'sub'));
  expect(model.nodes.check?.kind).toBe('serviceTask');
});

describe('the same drawings with a wait, or without a way round, load', () => {
  test('retry the subprocess on error through an async task', async () => {
    const model = await load(retry(asyncTask('retryLater'), ['retryLater']));
    expect(model.nodes.failed?.kind).toBe('boundaryError');
  });

  test('one escalation handler throws what the other catches, and that one throws its own code', async () => {
    const model = await load(twoHandlers('y', 'y'));
    expect(model.nodes.onY?.kind).toBe('eventSubProcess');
  });

  test('an error event subprocess whose body throws the code it catches: it never catches its own run', async () => {
    const model = await load(
      element('startEvent', 'start') +
        asyncTask('work') +
        element('endEvent', 'end') +
        chain('start', 'work', 'end') +
        element(
          'subProcess',
          'onBad',
          'triggeredByEvent="true"',
          element('startEvent', 'onBad-s', '', errorDef()) +
            element('endEvent', 'rethrow', '', errorDef()) +
            chain('onBad-s', 'rethrow'),
        ),
    );
    expect(model.nodes.rethrow?.kind).toBe('errorEndEvent');
  });
});
