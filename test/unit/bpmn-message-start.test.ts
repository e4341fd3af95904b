import { join } from 'node:path';
import { ModelError, type ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { startInstance } from '../../functions/src/engine/transitions';

/** Message start events: parsed from a startEvent with one messageEventDefinition, checked per process and across the deployed models. */
const FIXTURE = join(__dirname, '..', 'fixtures', 'bpmn', 'fixture-opening.bpmn');

/** Process `p` with messages Released and Done declared. */
function bpmn(process: string, key = 'p'): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:inbox="https://github.com/transactional-inbox/bpmn" id="d" targetNamespace="urn:test">
  <bpmn:message id="released" name="Released" /><bpmn:message id="done" name="Done" /><bpmn:message id="anon" />
  <bpmn:process id="${key}" isExecutable="true">${process}</bpmn:process>
</bpmn:definitions>`;
}
const messageStart = (id: string, ref = 'released', key = 'inbox:correlationKey="orderId"'): string =>
  `<bpmn:startEvent id="${id}" ${key}><bpmn:messageEventDefinition messageRef="${ref}" /></bpmn:startEvent>`;
const noneStart = (id = 'start', attributes = ''): string => `<bpmn:startEvent id="${id}" ${attributes} />`;
const flow = (id: string, source: string, target: string): string =>
  `<bpmn:sequenceFlow id="${id}" sourceRef="${source}" targetRef="${target}" />`;
const task = (id = 'task'): string => `<bpmn:serviceTask id="${id}" />`;
const end = (id = 'end'): string => `<bpmn:endEvent id="${id}" />`;

const refusal = async (xml: string): Promise<ModelError> => {
  const error = await parseProcessModel(xml).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
};

describe('parsing message start events', () => {
  test('the fixture: a message start event only, by message name; no none start event', async () => {
    const model = await loadProcessModel(FIXTURE);
    expect(model.startEventId).toBeNull();
    expect(model.messageStartEvents).toEqual({ TaskOpened: 'opened' });
    expect(model.nodes.opened).toEqual({
      kind: 'messageStartEvent',
      id: 'opened',
      name: 'Case opened',
      messageName: 'TaskOpened',
      correlationVariable: 'caseId',
      incoming: [],
      outgoing: ['Flow_opened_handOver'],
    });
  });

  test('a none start event beside message start events: each way in, every node reachable from some start', async () => {
    const xml = bpmn(
      noneStart() +
        messageStart('byRelease') +
        messageStart('byDone', 'done') +
        task('a') +
        task('b') +
        end() +
        flow('f1', 'start', 'a') +
        flow('f2', 'byRelease', 'a') +
        flow('f3', 'byDone', 'b') +
        flow('f4', 'a', 'end') +
        flow('f5', 'b', 'end'),
    );
    const model = await parseProcessModel(xml);
    expect(model.startEventId).toBe('start');
    expect(model.messageStartEvents).toEqual({ Released: 'byRelease', Done: 'byDone' });
  });

  const invalid: Array<[string, string, string | null, string]> = [
    [
      'two none start events',
      noneStart() +
        noneStart('again') +
        messageStart('m') +
        task() +
        end() +
        flow('f1', 'start', 'task') +
        flow('f2', 'again', 'task') +
        flow('f3', 'm', 'task') +
        flow('f4', 'task', 'end'),
      'again',
      'a second start event (the first is start): a process has at most one none start event',
    ],
    [
      'two message starts with one name',
      messageStart('a') +
        messageStart('b') +
        task() +
        end() +
        flow('f1', 'a', 'task') +
        flow('f2', 'b', 'task') +
        flow('f3', 'task', 'end'),
      'b',
      'a second message start event for message Released (the first is a)',
    ],
    [
      'no start event at all',
      task() + end() + flow('f', 'task', 'end'),
      'p',
      'no start event: the process needs a none, message or timer start event',
    ],
    [
      'a node reachable from no start',
      messageStart('m') +
        task() +
        task('orphan') +
        end() +
        flow('f1', 'm', 'task') +
        flow('f2', 'task', 'end') +
        flow('f3', 'orphan', 'end'),
      'orphan',
      'unreachable from start event m',
    ],
    [
      'a message start with an incoming flow',
      messageStart('m') +
        task() +
        end() +
        flow('f1', 'm', 'task') +
        flow('f2', 'task', 'end') +
        flow('f3', 'task', 'm'),
      'm',
      'a start event has no incoming sequence flows (f3)',
    ],
    [
      'a message start with two outgoing flows',
      messageStart('m') + task() + end() + flow('f1', 'm', 'task') + flow('f2', 'task', 'end') + flow('f3', 'm', 'end'),
      'm',
      '2 outgoing sequence flows',
    ],
    [
      'no correlationKey',
      messageStart('m', 'released', '') + end() + flow('f', 'm', 'end'),
      'm',
      "missing inbox:correlationKey: name the process variable the starting message's correlation key is stored into",
    ],
    [
      'a correlationKey that is no variable name',
      messageStart('m', 'released', 'inbox:correlationKey="order id"') + end() + flow('f', 'm', 'end'),
      'm',
      'inbox:correlationKey "order id" is not a variable name',
    ],
    [
      'a message without name',
      messageStart('m', 'anon') + end() + flow('f', 'm', 'end'),
      'm',
      'message anon has no name',
    ],
    [
      'messageRef to a non-message',
      messageStart('m', 'end') + end() + flow('f', 'm', 'end'),
      'm',
      'messageRef end is a endEvent, not a message',
    ],
    [
      'no messageRef',
      '<bpmn:startEvent id="m" inbox:correlationKey="orderId"><bpmn:messageEventDefinition /></bpmn:startEvent>' +
        end() +
        flow('f', 'm', 'end'),
      'm',
      'missing messageRef',
    ],
    [
      'a timer start event without a time',
      '<bpmn:startEvent id="t"><bpmn:timerEventDefinition /></bpmn:startEvent>' + end() + flow('f', 't', 'end'),
      't',
      'a timerEventDefinition without timeDuration, timeDate or timeCycle',
    ],
    [
      'two definitions',
      '<bpmn:startEvent id="t" inbox:correlationKey="orderId"><bpmn:messageEventDefinition messageRef="released" /><bpmn:signalEventDefinition /></bpmn:startEvent>' +
        end() +
        flow('f', 't', 'end'),
      't',
      'startEvent with messageEventDefinition and signalEventDefinition',
    ],
    [
      'correlationKey on a none start event',
      noneStart('start', 'inbox:correlationKey="orderId"') + end() + flow('f', 'start', 'end'),
      'start',
      'inbox:correlationKey on a none start event',
    ],
  ];
  test.each(invalid)('%s: refused at load', async (_name, process, elementId, message) => {
    const error = await refusal(bpmn(process));
    expect(error).toMatchObject({ elementId });
    expect(error.message).toContain(message);
  });
});

describe('the engine and message start events', () => {
  const model = async (key: string, process: string): Promise<ProcessModel> => parseProcessModel(bpmn(process, key));
  const startsBy = (key: string, id = 'm', ref = 'released'): Promise<ProcessModel> =>
    model(key, messageStart(id, ref) + end() + flow('f', id, 'end'));

  test('startsByMessage: the model and node a message name starts; null for any other name', async () => {
    const engine = new Engine([await startsBy('a'), await startsBy('b', 'n', 'done')], {}, new Set());
    expect(engine.startsByMessage('Released')).toMatchObject({
      model: { key: 'a' },
      node: { id: 'm', correlationVariable: 'orderId' },
    });
    expect(engine.startsByMessage('Done')).toMatchObject({ model: { key: 'b' }, node: { id: 'n' } });
    expect(engine.startsByMessage('Other')).toBeNull();
    expect(engine.startsByMessage('__proto__')).toBeNull();
  });

  test('a message name that starts two deployed processes is refused at load', async () => {
    const build = async (): Promise<Engine> =>
      new Engine([await startsBy('a'), await startsBy('b', 'n')], {}, new Set());
    await expect(build()).rejects.toThrow(
      new ModelError(
        'message Released starts process a (m) already: a message name may start one deployed process only',
        'n',
      ),
    );
  });

  test('startInstance at a message start event: the token passes it and runs on; a process without none start needs the id', async () => {
    const opening = await loadProcessModel(FIXTURE);
    const input = {
      instanceId: 'i',
      executionId: 'e',
      businessKey: 'C-1',
      variables: { caseId: 'C-1' },
      now: new Date(0),
    };
    const t = startInstance(opening, {}, { ...input, startEventId: 'opened' });
    expect(t.executions).toEqual([
      expect.objectContaining({ id: 'e', activityId: 'handOver', status: 'WAITING_JOB', step: 2 }),
    ]);
    expect(t.jobs.map((j) => j.activityId)).toEqual(['handOver']);
    expect(() => startInstance(opening, {}, input)).toThrow('process fixture-opening has no none start event');
    expect(() => startInstance(opening, {}, { ...input, startEventId: 'waitForCompletion' })).toThrow(
      'waitForCompletion is a messageCatchEvent, not a start event of fixture-opening',
    );
  });
});
