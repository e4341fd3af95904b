import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { modelProblems } from '../../functions/src/apps/check-models';
import { Engine } from '../../functions/src/engine/engine';
import { publishStepKey } from '../../functions/src/bpmn/model';
import { publishStepOf, publishSteps } from '../../functions/src/jobs/publish-steps';
import { bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const MESSAGES = '<bpmn:message id="out" name="Sent" /><bpmn:message id="nameless" />';
const model = (body: string) => parseProcessModel(bpmnDocument(body, MESSAGES));
const throwing = (ref = 'out') => `<bpmn:messageEventDefinition messageRef="${ref}" />`;
/** start → tell (throw) → ship (send task) → bye (message end). */
const three = () =>
  model(
    element('startEvent', 's') +
      element('intermediateThrowEvent', 'tell', '', throwing()) +
      element('sendTask', 'ship', 'messageRef="out"') +
      element('endEvent', 'bye', '', throwing()) +
      chain('s', 'tell', 'ship', 'bye'),
  );

describe('publishing elements, the load and the core', () => {
  test('a message throw event, a send task with a messageRef and a message end event each name their message', async () => {
    const m = await three();
    expect(m.nodes.tell).toMatchObject({ kind: 'messageThrowEvent', messageName: 'Sent' });
    expect(m.nodes.ship).toMatchObject({ kind: 'sendTask', messageName: 'Sent', async: true });
    expect(m.nodes.bye).toMatchObject({ kind: 'messageEndEvent', messageName: 'Sent' });
  });

  test.each([
    [
      'a throw event without messageRef',
      element('intermediateThrowEvent', 'x', '', '<bpmn:messageEventDefinition />'),
      /x: missing messageRef/,
    ],
    ['a message without a name', element('endEvent', 'x', '', throwing('nameless')), /x: message nameless has no name/],
  ])('refused: %s', async (_what, xml, message) => {
    await expect(model(element('startEvent', 's') + xml + chain('s', 'x'))).rejects.toThrow(message);
  });

  test('each waits WAITING_JOB for the job that publishes, then goes on; the end event ends the instance', async () => {
    const sim = new CoreSim(await three());
    expect(sim.start().jobs.map((j) => j.activityId)).toEqual(['tell']);
    expect(sim.finishJob('tell').jobs.map((j) => j.activityId)).toEqual(['ship']);
    expect(sim.finishJob('ship').jobs.map((j) => j.activityId)).toEqual(['bye']);
    expect(sim.finishJob('bye').instance.status).toBe('COMPLETED');
  });

  test('the app check: a message sends declares, or a handler of the element; not both, not neither', async () => {
    const m = await three();
    const base = { syncSteps: new Set<string>(), messages: new Set<string>() };
    expect(modelProblems([m], { ...base, steps: new Set(), sends: new Set(['Sent']) })).toEqual([]);
    expect(modelProblems([m], { ...base, steps: new Set(['tell', 'ship', 'bye']), sends: new Set() })).toEqual([]);
    expect(modelProblems([m], { ...base, steps: new Set(['tell']), sends: new Set(['Sent']) })).toEqual([
      expect.stringMatching(/^p\/tell publishes Sent, which sends declares, and steps has a handler tell too/),
    ]);
    expect(modelProblems([m], { ...base, steps: new Set(), sends: new Set() })).toHaveLength(3);
    expect(modelProblems([m], { ...base, steps: new Set(), sends: new Set() })[0]).toMatch(
      /p\/tell publishes message Sent, but sends does not declare it and steps has no handler tell/,
    );
  });

  test('the engine refuses a throw event nothing publishes; publishSteps lists the publishing elements', async () => {
    const m = await three();
    expect(() => new Engine([m], {}, new Set(['ship', 'bye']))).toThrow(/tell: nothing publishes message Sent/);
    const steps = publishSteps([m], { sends: [{ name: 'Sent', topic: 't', nameAttribute: 'eventType' }] });
    expect(Object.keys(steps).sort()).toEqual(['bye', 'ship', 'tell'].map((id) => publishStepKey('p', id)));
    expect(Object.keys(publishSteps([m], { sends: [] }))).toEqual([]);
    // The engine finds them by process and element: the same ids in another process are not this one's.
    expect(() => new Engine([m], {}, new Set(Object.keys(steps)))).not.toThrow();
    expect(() => new Engine([m], {}, new Set(['tell', 'ship', 'bye'].map((id) => publishStepKey('q', id))))).toThrow(
      /tell: nothing publishes message Sent/,
    );
  });

  test('publishStepOf finds a step by process and element, an item of a multi-instance activity by its model', async () => {
    const steps = publishSteps([await three()], { sends: [{ name: 'Sent', topic: 't', nameAttribute: 'eventType' }] });
    expect(publishStepOf(steps, 'p', 'ship')).toBe(steps[publishStepKey('p', 'ship')]);
    expect(publishStepOf(steps, 'p#ship', 'ship')).toBe(steps[publishStepKey('p', 'ship')]);
    expect(publishStepOf(steps, 'q', 'ship')).toBeUndefined();
    expect(publishStepOf(steps, 'p', 'constructor')).toBeUndefined();
  });
});
