import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { jobThrewError } from '../../functions/src/engine/transitions';
import { asyncTask, bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const ROOTS =
  '<bpmn:message id="cancel" name="Cancel" /><bpmn:message id="info" name="Info" />' +
  '<bpmn:error id="declined" errorCode="DECLINED" />';
const model = (body: string) => parseProcessModel(bpmnDocument(body, ROOTS));
const start = element('startEvent', 'start');
const timer = (d: string, type = 'timeDuration') =>
  `<bpmn:timerEventDefinition><bpmn:${type}>${d}</bpmn:${type}></bpmn:timerEventDefinition>`;
const onMessage = (ref: string) => `<bpmn:messageEventDefinition messageRef="${ref}" />`;

/** start → work (async) → end, a message boundary event `stop` on work going to `stopped`. */
const withBoundary = (attributes: string) =>
  model(
    start +
      asyncTask('work') +
      element('endEvent', 'end') +
      element(
        'boundaryEvent',
        'stop',
        `attachedToRef="work" inbox:correlationKey="orderId" ${attributes}`,
        onMessage('cancel'),
      ) +
      asyncTask('undo') +
      element('endEvent', 'stopped') +
      chain('start', 'work', 'end') +
      chain('stop', 'undo', 'stopped'),
  );

describe('message boundary events', () => {
  test('the token waits for its job and, in standby, for the message; interrupting: the job goes stale', async () => {
    const sim = new CoreSim(await withBoundary(''));
    const started = sim.start({ orderId: 'o-1' });
    expect(started.subscribe).toEqual([
      expect.objectContaining({
        messageName: 'Cancel',
        correlationKey: 'o-1',
        activityId: 'stop',
        boundaryOf: 'work',
        standby: true,
      }),
    ]);
    const t = sim.deliver('stop');
    expect(t.staleJobs).toHaveLength(1);
    expect(t.unsubscribe).toHaveLength(1);
    expect(t.jobs.map((j) => j.activityId)).toEqual(['undo']);
    expect(sim.live().map((x) => x.activityId)).toEqual(['undo']);
  });

  test('non-interrupting: a new token takes the event; the first keeps its job and still waits for the message', async () => {
    const sim = new CoreSim(await withBoundary('cancelActivity="false"'));
    sim.start({ orderId: 'o-1' });
    const t = sim.deliver('stop');
    expect(t.staleJobs).toEqual([]);
    expect(t.unsubscribe).toEqual([]);
    expect(
      sim
        .live()
        .map((x) => x.activityId)
        .sort(),
    ).toEqual(['undo', 'work']);
    expect(sim.points.filter((p) => p.activityId === 'stop')).toHaveLength(1);
    // The job finishes: the boundary's point goes with the token.
    expect(sim.finishJob('work').unsubscribe.map((p) => p.activityId)).toEqual(['stop']);
  });

  test('a missing correlation key is an incident at the task, not a silent wait', async () => {
    const sim = new CoreSim(await withBoundary(''));
    expect(sim.start({}).instance.incidents).toEqual([
      expect.objectContaining({
        reason: 'MISSING_CORRELATION_KEY',
        activityId: 'work',
        message: expect.stringContaining('boundary event stop'),
      }),
    ]);
  });

  test('on a subprocess: interrupting ends everything inside', async () => {
    const sim = new CoreSim(
      await model(
        start +
          element(
            'subProcess',
            'sub',
            '',
            element('startEvent', 's0') + asyncTask('a') + asyncTask('b') + chain('s0', 'a', 'b'),
          ) +
          element('endEvent', 'end') +
          element('boundaryEvent', 'stop', 'attachedToRef="sub" inbox:correlationKey="orderId"', onMessage('cancel')) +
          element('endEvent', 'stopped') +
          chain('start', 'sub', 'end') +
          chain('stop', 'stopped'),
      ),
    );
    sim.start({ orderId: 'o-1' });
    const t = sim.deliver('stop');
    expect(t.instance.status).toBe('COMPLETED');
    expect(t.staleJobs).toHaveLength(1);
  });
});

/** start → work (async) → end, with an event subprocess `esp` whose start is `trigger`, running `handle` (async). */
const withEventSub = (trigger: string, interrupting = true, extra = '') =>
  model(
    start +
      asyncTask('work') +
      element('endEvent', 'end') +
      chain('start', 'work', 'end') +
      element(
        'subProcess',
        'esp',
        'triggeredByEvent="true"',
        element('startEvent', 'espStart', `isInterrupting="${interrupting}" inbox:correlationKey="orderId"`, trigger) +
          asyncTask('handle') +
          element('endEvent', 'espEnd') +
          chain('espStart', 'handle', 'espEnd'),
      ) +
      extra,
  );

describe('event subprocesses', () => {
  test('a message start waits in standby from the start; interrupting: the rest ends, it runs, the instance completes after it', async () => {
    const sim = new CoreSim(await withEventSub(onMessage('cancel')));
    const started = sim.start({ orderId: 'o-1' });
    expect(started.subscribe).toEqual([
      expect.objectContaining({ messageName: 'Cancel', activityId: 'esp', standby: true }),
    ]);
    expect(sim.tokenAt('esp')).toMatchObject({ status: 'WAITING_MESSAGE', trigger: true });
    const t = sim.deliver('esp');
    expect(t.staleJobs).toHaveLength(1); // work's job
    expect(t.jobs.map((j) => j.activityId)).toEqual(['handle']);
    expect(sim.finishJob('handle').instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
  });

  test('when the process ends on its own, its standby triggers go and the instance completes', async () => {
    const sim = new CoreSim(await withEventSub(onMessage('cancel')));
    sim.start({ orderId: 'o-1' });
    const t = sim.finishJob('work');
    expect(t.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
    expect(t.unsubscribe.map((p) => p.activityId)).toEqual(['esp']);
  });

  test('non-interrupting message start: it runs beside the work, once per message; the trigger keeps waiting', async () => {
    const sim = new CoreSim(await withEventSub(onMessage('info'), false));
    sim.start({ orderId: 'o-1' });
    sim.deliver('esp');
    sim.deliver('esp');
    expect(
      sim
        .pendingJobs()
        .map((j) => j.activityId)
        .sort(),
    ).toEqual(['handle', 'handle', 'work']);
    // At the event subprocess: the trigger, still waiting, and the two runs of it.
    expect(
      sim
        .live()
        .filter((x) => x.activityId === 'esp')
        .map((x) => [x.status, x.trigger ?? false]),
    ).toEqual([
      ['WAITING_MESSAGE', true],
      ['WAITING_SCOPE', false],
      ['WAITING_SCOPE', false],
    ]);
    sim.finishJob('work');
    expect(sim.instance?.status).toBe('RUNNING'); // the two handlers still run
    sim.finishJob('handle');
    expect(sim.finishJob('handle').instance.status).toBe('COMPLETED');
  });

  test('a timer start: interrupting after the duration; a non-interrupting cycle runs each time, then the trigger ends', async () => {
    const interrupting = new CoreSim(await withEventSub(timer('PT1H')));
    interrupting.start({ orderId: 'o-1' });
    expect(interrupting.fire('esp').jobs.map((j) => j.activityId)).toEqual(['handle']);
    // The trigger's token now runs the event subprocess (its scope token), the work's token is gone.
    expect(interrupting.live().map((x) => [x.activityId, x.status])).toEqual([
      ['esp', 'WAITING_SCOPE'],
      ['handle', 'WAITING_JOB'],
    ]);

    const cycle = new CoreSim(await withEventSub(timer('R2/PT1H', 'timeCycle'), false));
    cycle.start({ orderId: 'o-1' });
    cycle.fire('esp');
    cycle.fire('esp');
    expect(
      cycle
        .pendingJobs()
        .map((j) => j.activityId)
        .sort(),
    ).toEqual(['handle', 'handle', 'work']);
    expect(cycle.live().some((x) => x.trigger === true)).toBe(false);
  });

  test('an error start catches an error thrown in its scope, before a boundary event outside could', async () => {
    const m = await withEventSub('<bpmn:errorEventDefinition errorRef="declined" />');
    const sim = new CoreSim(m);
    sim.start({ orderId: 'o-1' });
    expect(sim.live().map((x) => x.activityId)).toEqual(['work']); // an error start needs no standby token
    const job = sim.pendingJobs()[0];
    const instance = sim.instance;
    if (job === undefined || instance === null) throw new Error('no job');
    const t = sim.apply(
      jobThrewError(
        m,
        {},
        { instance, execution: sim.tokenAt('work'), job, tokens: sim.tokens },
        'DECLINED',
        'x',
        sim.now,
      ),
    );
    expect(t.jobs.map((j) => j.activityId)).toEqual(['handle']);
    expect(sim.finishJob('handle').instance.status).toBe('COMPLETED');
  });

  test('inside a subprocess: its triggers wait while it runs and go when it is left', async () => {
    const sim = new CoreSim(
      await model(
        start +
          element(
            'subProcess',
            'sub',
            '',
            element('startEvent', 's0') +
              asyncTask('a') +
              chain('s0', 'a') +
              element(
                'subProcess',
                'inner',
                'triggeredByEvent="true"',
                element(
                  'startEvent',
                  'is',
                  'isInterrupting="false" inbox:correlationKey="orderId"',
                  onMessage('info'),
                ) +
                  element('endEvent', 'ie') +
                  chain('is', 'ie'),
              ),
          ) +
          asyncTask('after') +
          chain('start', 'sub', 'after'),
      ),
    );
    sim.start({ orderId: 'o-1' });
    expect(sim.tokenAt('inner')).toMatchObject({ trigger: true, parentId: sim.tokenAt('sub').id });
    const left = sim.finishJob('a');
    expect(left.jobs.map((j) => j.activityId)).toEqual(['after']);
    expect(left.unsubscribe.map((p) => p.activityId)).toEqual(['inner']);
  });
});
