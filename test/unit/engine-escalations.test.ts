import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { asyncTask, bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const ESCALATIONS =
  '<bpmn:escalation id="late" escalationCode="LATE" /><bpmn:escalation id="other" escalationCode="OTHER" />';
const model = (body: string) => parseProcessModel(bpmnDocument(body, ESCALATIONS));
const escalation = (ref = 'late') => `<bpmn:escalationEventDefinition escalationRef="${ref}" />`;

/** start → sub [ s0 → work (async) → raise (throw LATE) → finish (async) → e0 ] → done, with `extra` beside. */
const withSub = (extra: string, raise = element('intermediateThrowEvent', 'raise', '', escalation())) =>
  model(
    element('startEvent', 'start') +
      element(
        'subProcess',
        'sub',
        '',
        element('startEvent', 's0') +
          asyncTask('work') +
          raise +
          asyncTask('finish') +
          element('endEvent', 'e0') +
          chain('s0', 'work', 'raise', 'finish', 'e0'),
      ) +
      element('endEvent', 'done') +
      extra +
      chain('start', 'sub', 'done'),
  );
const boundary = (attributes: string, ref?: string) =>
  element('boundaryEvent', 'caught', `attachedToRef="sub" ${attributes}`, escalation(ref)) +
  asyncTask('notify') +
  element('endEvent', 'notified') +
  chain('caught', 'notify', 'notified');

describe('escalations', () => {
  test('a non-interrupting boundary event on the subprocess: a new token takes its path, the work inside goes on', async () => {
    const sim = new CoreSim(await withSub(boundary('cancelActivity="false"')));
    sim.start();
    const t = sim.finishJob('work');
    expect(t.jobs.map((j) => j.activityId).sort()).toEqual(['finish', 'notify']);
    sim.finishJob('notify');
    expect(sim.finishJob('finish').instance.status).toBe('COMPLETED');
  });

  test('an interrupting one ends everything inside, the thrower too, and the subprocess leaves by it', async () => {
    const sim = new CoreSim(await withSub(boundary('')));
    sim.start();
    const t = sim.finishJob('work');
    expect(t.jobs.map((j) => j.activityId)).toEqual(['notify']);
    expect(sim.live().map((x) => x.activityId)).toEqual(['notify']);
    expect(sim.finishJob('notify').instance.status).toBe('COMPLETED');
  });

  test('the exact code wins over a catch-all; another code is caught by the catch-all only', async () => {
    const both =
      element(
        'boundaryEvent',
        'any',
        'attachedToRef="sub" cancelActivity="false"',
        '<bpmn:escalationEventDefinition />',
      ) +
      element('endEvent', 'anyEnd') +
      chain('any', 'anyEnd') +
      boundary('cancelActivity="false"');
    const sim = new CoreSim(await withSub(both));
    sim.start();
    expect(
      sim
        .finishJob('work')
        .jobs.map((j) => j.activityId)
        .sort(),
    ).toEqual(['finish', 'notify']);
    const other = new CoreSim(await withSub(both, element('intermediateThrowEvent', 'raise', '', escalation('other'))));
    other.start();
    const t = other.finishJob('work');
    expect(t.jobs.map((j) => j.activityId)).toEqual(['finish']);
    expect(t.executions.some((e) => e.activityId === 'anyEnd' && e.status === 'ENDED')).toBe(true);
  });

  test('uncaught: nothing happens, no incident, the token goes on', async () => {
    const sim = new CoreSim(await withSub(''));
    sim.start();
    const t = sim.finishJob('work');
    expect(t.jobs.map((j) => j.activityId)).toEqual(['finish']);
    expect(t.instance.incidents).toEqual([]);
  });

  test('an escalation end event, caught by a non-interrupting escalation event subprocess of the process', async () => {
    const sim = new CoreSim(
      await model(
        element('startEvent', 'start') +
          element(
            'subProcess',
            'sub',
            '',
            element('startEvent', 's0') +
              asyncTask('work') +
              element('endEvent', 'raise', '', escalation()) +
              chain('s0', 'work', 'raise'),
          ) +
          asyncTask('after') +
          element('endEvent', 'done') +
          chain('start', 'sub', 'after', 'done') +
          element(
            'subProcess',
            'onLate',
            'triggeredByEvent="true"',
            element('startEvent', 'lateStart', 'isInterrupting="false"', escalation()) +
              asyncTask('report') +
              element('endEvent', 'reported') +
              chain('lateStart', 'report', 'reported'),
          ),
      ),
    );
    sim.start();
    const t = sim.finishJob('work');
    // The thrower ended, so the subprocess was left: the report runs beside the rest of the process.
    expect(t.jobs.map((j) => j.activityId).sort()).toEqual(['after', 'report']);
    sim.finishJob('report');
    expect(sim.finishJob('after').instance.status).toBe('COMPLETED');
  });

  test.each([
    [
      'on a task',
      element('startEvent', 's') +
        asyncTask('t') +
        element('boundaryEvent', 'b', 'attachedToRef="t"', escalation()) +
        chain('s', 't'),
      /b: an escalation boundary event on serviceTask t/,
    ],
    [
      'without escalationRef on a throw event',
      element('startEvent', 's') +
        element('intermediateThrowEvent', 'x', '', '<bpmn:escalationEventDefinition />') +
        chain('s', 'x'),
      /x: an escalation without escalationRef/,
    ],
  ])('refused: %s', async (_what, xml, message) => {
    await expect(model(xml)).rejects.toThrow(message);
  });
});
