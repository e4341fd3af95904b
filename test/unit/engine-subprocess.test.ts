import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { BpmnError } from '../../functions/src/core/errors';
import { jobThrewError, moveRefusal } from '../../functions/src/engine/transitions';
import { asyncTask, bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const ERRORS = '<bpmn:error id="declined" errorCode="DECLINED" /><bpmn:error id="other" errorCode="OTHER" />';
const model = (body: string) => parseProcessModel(bpmnDocument(body, ERRORS));
const timer = (d: string) =>
  `<bpmn:timerEventDefinition><bpmn:timeDuration>${d}</bpmn:timeDuration></bpmn:timerEventDefinition>`;
const errorDef = (ref?: string) =>
  ref === undefined ? '<bpmn:errorEventDefinition />' : `<bpmn:errorEventDefinition errorRef="${ref}" />`;

/** start → sub [ s0 → charge (async) → ship (async) → e0 ] → done, with boundary events on sub given as XML. */
const withSub = (inside: string, boundaries = '') =>
  model(
    element('startEvent', 'start') +
      element('subProcess', 'sub', '', element('startEvent', 's0') + inside) +
      element('endEvent', 'done') +
      boundaries +
      chain('start', 'sub', 'done'),
  );
const plainInside =
  asyncTask('charge') + asyncTask('ship') + element('endEvent', 'e0') + chain('s0', 'charge', 'ship', 'e0');

describe('embedded subprocess', () => {
  test('its token waits WAITING_SCOPE while a child runs inside; the last child to end leaves it', async () => {
    const sim = new CoreSim(await withSub(plainInside));
    sim.start();
    const scope = sim.tokenAt('sub');
    expect(scope.status).toBe('WAITING_SCOPE');
    expect(sim.tokenAt('charge')).toMatchObject({ status: 'WAITING_JOB', parentId: scope.id });
    sim.finishJob('charge', { charged: true });
    expect(sim.finishJob('ship').instance).toMatchObject({ status: 'COMPLETED', variables: { charged: true } });
    expect(sim.tokens[scope.id]).toMatchObject({ status: 'ENDED', activityId: 'done' });
  });

  test('a fork and join inside: the subprocess is left once, after both branches', async () => {
    const sim = new CoreSim(
      await withSub(
        element('parallelGateway', 'fork') +
          asyncTask('charge') +
          asyncTask('ship') +
          element('parallelGateway', 'join') +
          element('endEvent', 'e0') +
          chain('s0', 'fork', 'charge', 'join', 'e0') +
          chain('fork', 'ship', 'join'),
      ),
    );
    sim.start();
    expect(sim.live().filter((t) => t.parentId !== undefined)).toHaveLength(2);
    expect(sim.finishJob('ship').instance.status).toBe('RUNNING');
    expect(sim.finishJob('charge').instance.status).toBe('COMPLETED');
  });

  test('an interrupting timer on it ends everything inside (the job goes stale) and takes the boundary flow', async () => {
    const sim = new CoreSim(
      await withSub(
        plainInside,
        element('boundaryEvent', 'late', 'attachedToRef="sub"', timer('P1D')) +
          element('endEvent', 'lateEnd') +
          chain('late', 'lateEnd'),
      ),
    );
    sim.start();
    expect(sim.tokenAt('sub').timerIds).toHaveLength(1);
    const t = sim.fire('late');
    expect(t.staleJobs).toHaveLength(1);
    expect(t.instance.status).toBe('COMPLETED');
    expect(Object.values(sim.tokens).find((x) => x.activityId === 'charge')?.status).toBe('CANCELLED');
  });

  test('a timer on a task inside, non-interrupting: the new token runs inside the subprocess too', async () => {
    const sim = new CoreSim(
      await withSub(
        plainInside +
          element('boundaryEvent', 'remind', 'attachedToRef="charge" cancelActivity="false"', timer('PT1H')) +
          element('endEvent', 'reminded') +
          chain('remind', 'reminded'),
      ),
    );
    sim.start();
    const scope = sim.tokenAt('sub');
    const t = sim.fire('remind');
    const spawned = t.executions.find((e) => e.activityId === 'reminded');
    expect(spawned).toMatchObject({ status: 'ENDED', parentId: scope.id });
    expect(sim.tokenAt('sub').status).toBe('WAITING_SCOPE'); // the charge is still running inside
  });

  test('a terminate end event inside ends only the subprocess, which is then left', async () => {
    const sim = new CoreSim(
      await withSub(
        element('parallelGateway', 'fork') +
          asyncTask('charge') +
          element('endEvent', 'e0') +
          element('endEvent', 'stop', '', '<bpmn:terminateEventDefinition />') +
          asyncTask('ship') +
          chain('s0', 'fork', 'charge', 'e0') +
          chain('fork', 'ship', 'stop'),
      ),
    );
    sim.start();
    const t = sim.finishJob('ship');
    expect(t.instance.status).toBe('COMPLETED');
    expect(t.staleJobs).toHaveLength(1);
  });

  test('a repair moves a token within its scope, never across', async () => {
    const m = await withSub(plainInside);
    const sim = new CoreSim(m);
    sim.start();
    const child = sim.tokenAt('charge');
    const active = sim.instance?.activeExecutionIds ?? [];
    expect(moveRefusal(m, child, 'ship', active)).toBeNull();
    expect(moveRefusal(m, child, 'done', active)).toMatch(
      /done is at the process level and token .* is inside subprocess sub/,
    );
    expect(moveRefusal(m, { ...child, id: 'new' }, 'ship', active)).toMatch(
      /a new or ended token goes to the process level only/,
    );
  });

  test('cancelling its token cancels everything inside; cancelling the last child leaves it', async () => {
    const sim = new CoreSim(await withSub(plainInside));
    sim.start();
    const t = sim.cancel(sim.tokenAt('sub').id);
    expect(t.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
    const again = new CoreSim(await withSub(plainInside));
    again.start();
    expect(again.cancel(again.tokenAt('charge').id).instance.status).toBe('COMPLETED');
  });
});

describe('BPMN errors', () => {
  test.each([
    [
      'the exact code on the task',
      `${element('boundaryEvent', 'onTask', 'attachedToRef="charge"', errorDef('declined'))}`,
      'onTask',
    ],
    [
      'a catch-all on the task',
      `${element('boundaryEvent', 'onTask', 'attachedToRef="charge"', errorDef())}`,
      'onTask',
    ],
    [
      'the exact code before a catch-all',
      `${element('boundaryEvent', 'any', 'attachedToRef="charge"', errorDef())}${element('boundaryEvent', 'onTask', 'attachedToRef="charge"', errorDef('declined'))}`,
      'onTask',
    ],
  ])('a handler throws DECLINED; caught by %s', async (_name, boundaries, catcher) => {
    const ids = [...boundaries.matchAll(/id="(\w+)"/g)].map((m) => m[1] as string);
    const m = await model(
      element('startEvent', 'start') +
        asyncTask('charge') +
        element('endEvent', 'done') +
        boundaries +
        ids.map((id) => element('endEvent', `${id}End`) + chain(id, `${id}End`)).join('') +
        chain('start', 'charge', 'done'),
    );
    const sim = new CoreSim(m);
    sim.start();
    const job = sim.pendingJobs()[0];
    const instance = sim.instance;
    if (job === undefined || instance === null) throw new Error('no job');
    const t = jobThrewError(
      m,
      {},
      { instance, execution: sim.tokenAt('charge'), job, tokens: sim.tokens },
      'DECLINED',
      'card declined',
      sim.now,
    );
    expect(t.caught).toBe(true);
    expect(t.job).toMatchObject({ status: 'DONE', lastError: 'BPMN error DECLINED: card declined' });
    expect(t.staleJobs).toEqual([]);
    expect(t.executions.find((e) => e.status === 'ENDED')?.activityId).toBe(`${catcher}End`);
    expect(t.instance.status).toBe('COMPLETED');
  });

  test('uncaught: the job FAILS and an UNCAUGHT_ERROR incident names the code; the token stays for a repair', async () => {
    const m = await model(
      element('startEvent', 'start') +
        asyncTask('charge') +
        element('endEvent', 'done') +
        element('boundaryEvent', 'onOther', 'attachedToRef="charge"', errorDef('other')) +
        element('endEvent', 'otherEnd') +
        chain('onOther', 'otherEnd') +
        chain('start', 'charge', 'done'),
    );
    const sim = new CoreSim(m);
    sim.start();
    const job = sim.pendingJobs()[0];
    const instance = sim.instance;
    if (job === undefined || instance === null) throw new Error('no job');
    const t = jobThrewError(
      m,
      {},
      { instance, execution: sim.tokenAt('charge'), job, tokens: sim.tokens },
      'DECLINED',
      'no',
      sim.now,
    );
    expect(t.caught).toBe(false);
    expect(t.job.status).toBe('FAILED');
    expect(t.instance.incidents).toEqual([
      expect.objectContaining({
        reason: 'UNCAUGHT_ERROR',
        activityId: 'charge',
        message: expect.stringContaining('BPMN error DECLINED'),
      }),
    ]);
    expect(t.executions).toEqual([expect.objectContaining({ status: 'WAITING_JOB', jobId: job.id })]);
  });

  test('an error inside a subprocess is caught on the subprocess: everything inside ends', async () => {
    const m = await withSub(
      element('parallelGateway', 'fork') +
        asyncTask('charge') +
        asyncTask('ship') +
        element('endEvent', 'e0') +
        element('endEvent', 'e1') +
        chain('s0', 'fork', 'charge', 'e0') +
        chain('fork', 'ship', 'e1'),
      element('boundaryEvent', 'failed', 'attachedToRef="sub"', errorDef('declined')) +
        asyncTask('refund') +
        element('endEvent', 'refunded') +
        chain('failed', 'refund', 'refunded'),
    );
    const sim = new CoreSim(m);
    sim.start();
    const job = sim.pendingJobs().find((j) => j.activityId === 'charge');
    const instance = sim.instance;
    if (job === undefined || instance === null) throw new Error('no job');
    const t = sim.apply(
      jobThrewError(
        m,
        {},
        { instance, execution: sim.tokenAt('charge'), job, tokens: sim.tokens },
        'DECLINED',
        'x',
        sim.now,
      ),
    );
    expect(t.jobs.map((j) => j.activityId)).toEqual(['refund']);
    expect(t.staleJobs).toHaveLength(1); // ship's
    expect(sim.live().map((x) => x.activityId)).toEqual(['refund']);
  });

  test('an error end event inside a subprocess is caught on it; at the process level it is an incident', async () => {
    const caught = new CoreSim(
      await withSub(
        element('endEvent', 'fail', '', errorDef('declined')) + chain('s0', 'fail'),
        element('boundaryEvent', 'failed', 'attachedToRef="sub"', errorDef()) +
          element('endEvent', 'handled') +
          chain('failed', 'handled'),
      ),
    );
    expect(caught.start().instance.status).toBe('COMPLETED');
    expect(Object.values(caught.tokens).find((x) => x.activityId === 'handled')?.status).toBe('ENDED');

    const uncaught = new CoreSim(
      await model(
        element('startEvent', 'start') + element('endEvent', 'fail', '', errorDef('declined')) + chain('start', 'fail'),
      ),
    );
    expect(uncaught.start().instance.incidents).toEqual([
      expect.objectContaining({
        reason: 'UNCAUGHT_ERROR',
        activityId: 'fail',
        message: expect.stringContaining('BPMN error DECLINED'),
      }),
    ]);
  });

  test('a synchronous handler that throws BpmnError is caught the same way, inside the step', async () => {
    const m = await model(
      element('startEvent', 'start') +
        element('serviceTask', 'check') +
        element('endEvent', 'done') +
        element('boundaryEvent', 'bad', 'attachedToRef="check"', errorDef('declined')) +
        element('endEvent', 'rejected') +
        chain('bad', 'rejected') +
        chain('start', 'check', 'done'),
    );
    const sim = new CoreSim(m, {
      check: () => {
        throw new BpmnError('DECLINED');
      },
    });
    const t = sim.start();
    expect(t.instance.status).toBe('COMPLETED');
    expect(t.executions[0]?.activityId).toBe('rejected');
  });
});
