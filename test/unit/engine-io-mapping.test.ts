import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { jobThrewError } from '../../functions/src/engine/transitions';
import { bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

/**
 * zeebe:ioMapping outputs on the events a token passes: a start event, a
 * none end event and an error boundary event (Camunda 8 models set
 * variables there). Each is evaluated as the token passes, over the
 * variables; a failure stops the token there with EXPRESSION_FAILED.
 */
const zeebe = (body: string) =>
  parseProcessModel(
    bpmnDocument(body).replace('xmlns:inbox=', 'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" xmlns:inbox='),
  );
const outputs = (...pairs: [string, string][]) =>
  `<bpmn:extensionElements><zeebe:ioMapping>${pairs
    .map(([source, target]) => `<zeebe:output source="${source.replace(/"/g, '&quot;')}" target="${target}" />`)
    .join('')}</zeebe:ioMapping></bpmn:extensionElements>`;
const task = (id: string) =>
  `<bpmn:serviceTask id="${id}"><bpmn:extensionElements><zeebe:taskDefinition type="work" /></bpmn:extensionElements></bpmn:serviceTask>`;

describe('zeebe:ioMapping outputs on events a token passes', () => {
  test('a start event’s and an end event’s outputs set variables as the token passes', async () => {
    const sim = new CoreSim(
      await zeebe(
        element('startEvent', 'start', '', outputs(['=0', 'count'], ['="A-" + id', 'label'])) +
          task('t') +
          element('endEvent', 'end', '', outputs(['=count + 1', 'count'])) +
          chain('start', 't', 'end'),
      ),
    );
    sim.start({ id: '7' });
    expect(sim.instance?.variables).toEqual({ id: '7', count: 0, label: 'A-7' });
    const t = sim.finishJob('t');
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { id: '7', count: 1, label: 'A-7' } });
  });

  test('an error boundary event’s outputs run when it catches', async () => {
    const sim = new CoreSim(
      await zeebe(
        element('startEvent', 'start') +
          task('t') +
          element('endEvent', 'end') +
          element(
            'boundaryEvent',
            'failed',
            'attachedToRef="t"',
            `${outputs(['="caught"', 'outcome'])}<bpmn:errorEventDefinition />`,
          ) +
          element('endEvent', 'failedEnd') +
          chain('start', 't', 'end') +
          chain('failed', 'failedEnd'),
      ),
    );
    sim.start({});
    const job = sim.pendingJobs()[0];
    if (job === undefined || sim.instance === null) throw new Error('no job');
    const execution = sim.tokens[job.executionId];
    if (execution === undefined) throw new Error('no token');
    const t = sim.apply(
      jobThrewError(
        sim.model,
        {},
        { instance: sim.instance, execution, tokens: { ...sim.tokens }, job },
        'E',
        'no',
        sim.now,
      ),
    );
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { outcome: 'caught' } });
  });

  test('an output that fails stops the token at the event with EXPRESSION_FAILED', async () => {
    const sim = new CoreSim(
      await zeebe(
        element('startEvent', 'start', '', outputs(['=missing + 1', 'n'])) +
          task('t') +
          element('endEvent', 'end') +
          chain('start', 't', 'end'),
      ),
    );
    const t = sim.start({});
    expect(t.instance.status).toBe('INCIDENT');
    expect(t.instance.incidents).toEqual([
      expect.objectContaining({
        reason: 'EXPRESSION_FAILED',
        activityId: 'start',
        message: expect.stringMatching(/zeebe:output n: FEEL "=missing \+ 1": Variable 'missing' not found/),
      }),
    ]);
    expect(t.jobs).toEqual([]);
  });

  test('inputs on an event are refused at load: nothing runs there to see them', async () => {
    await expect(
      zeebe(
        element(
          'startEvent',
          'start',
          '',
          '<bpmn:extensionElements><zeebe:ioMapping><zeebe:input source="=1" target="x" /></zeebe:ioMapping></bpmn:extensionElements>',
        ) +
          element('endEvent', 'end') +
          chain('start', 'end'),
      ),
    ).rejects.toThrow(/^start: zeebe:input on a startEvent: nothing runs there to see it; map outputs only$/);
  });
});
