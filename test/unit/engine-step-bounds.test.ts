/**
 * Every step of the engine ends: the shapes that once looped inside one
 * transition until the process ran out of memory (issue 39, defect 1), and
 * the ids a second run of an error event subprocess takes (defect 6).
 */
import { type ProcessModel, TRANSITION_BUDGET } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { terminateInstance } from '../../functions/src/engine/call-transitions';
import { type InstanceState, MAX_LIVE_TOKENS } from '../../functions/src/engine/state';
import { asyncTask, bpmnDocument, chain, element, sequenceFlow } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const CODES =
  '<bpmn:error id="bad" errorCode="BAD" /><bpmn:error id="worse" errorCode="WORSE" />' +
  '<bpmn:escalation id="late" escalationCode="LATE" />';
const model = (body: string) => parseProcessModel(bpmnDocument(body, CODES));
const errorDef = (ref: string) => `<bpmn:errorEventDefinition errorRef="${ref}" />`;
const escalationDef = (ref: string) => `<bpmn:escalationEventDefinition escalationRef="${ref}" />`;

/** An event subprocess `id` started by `startDef` (interrupting unless `nonInterrupting`), with `body` after its start `${id}-s`. */
const eventSub = (id: string, startDef: string, body: string, first: string, nonInterrupting = false): string =>
  element(
    'subProcess',
    id,
    'triggeredByEvent="true"',
    element('startEvent', `${id}-s`, nonInterrupting ? 'isInterrupting="false"' : '', startDef) +
      body +
      sequenceFlow(`${id}-s-${first}`, `${id}-s`, first),
  );

describe('an event subprocess never catches what its own body throws', () => {
  test('an error event subprocess whose body throws the code it catches: one run, then an uncaught-error incident', async () => {
    const sim = new CoreSim(
      await model(
        element('startEvent', 'start') +
          asyncTask('work') +
          element('endEvent', 'end') +
          chain('start', 'work', 'end') +
          eventSub('onBad', errorDef('bad'), element('endEvent', 'rethrow', '', errorDef('bad')), 'rethrow'),
      ),
    );
    sim.start();
    const t = sim.throwAt('work', 'BAD');
    // The handler ran once (its token passed rethrow), and its throw is not caught by itself.
    expect(t.executions.filter((e) => e.activityId === 'rethrow')).toHaveLength(1);
    expect(t.instance.status).toBe('INCIDENT');
    expect(t.instance.incidents.map((i) => [i.reason, i.activityId])).toEqual([['UNCAUGHT_ERROR', 'rethrow']]);
  });

  test('a non-interrupting escalation event subprocess that throws what it catches runs once', async () => {
    const sim = new CoreSim(
      await model(
        element('startEvent', 'start') +
          element('intermediateThrowEvent', 'raise', '', escalationDef('late')) +
          asyncTask('work') +
          element('endEvent', 'end') +
          chain('start', 'raise', 'work', 'end') +
          eventSub(
            'onLate',
            escalationDef('late'),
            element('intermediateThrowEvent', 'again', '', escalationDef('late')) +
              element('endEvent', 'onLate-e') +
              chain('again', 'onLate-e'),
            'again',
            true,
          ),
      ),
    );
    const t = sim.start();
    // One run of the handler ended; its own escalation went out to the process, where nothing else catches it.
    expect(t.executions.filter((e) => e.activityId === 'onLate-e' && e.status === 'ENDED')).toHaveLength(1);
    expect(sim.tokenAt('work').status).toBe('WAITING_JOB');
    expect(t.instance.status).toBe('RUNNING');
  });
});

describe('a second run of a process-level error event subprocess', () => {
  test('takes token, job and user task ids of its own, seeded by what threw', async () => {
    const sim = new CoreSim(
      await model(
        element('startEvent', 'start') +
          asyncTask('work') +
          element('endEvent', 'end') +
          chain('start', 'work', 'end') +
          eventSub(
            'onBad',
            errorDef('bad'),
            asyncTask('cleanup') +
              element('userTask', 'review') +
              element('endEvent', 'onBad-e') +
              chain('cleanup', 'review', 'onBad-e'),
            'cleanup',
          ),
      ),
    );
    sim.start();
    sim.throwAt('work', 'BAD');
    const firstJob = sim.pendingJobs().find((j) => j.activityId === 'cleanup');
    sim.finishJob('cleanup');
    const firstTask = sim.openTasks()[0];
    sim.completeTask('review');
    expect(sim.instance?.status).toBe('COMPLETED');
    // An operator runs the work again (a repair adds a token), and it throws again.
    sim.add('work');
    sim.throwAt('work', 'BAD');
    const secondJob = sim.pendingJobs().find((j) => j.activityId === 'cleanup');
    expect(secondJob?.id).toBeDefined();
    expect(secondJob?.id).not.toBe(firstJob?.id);
    expect(secondJob?.executionId).not.toBe(firstJob?.executionId);
    sim.finishJob('cleanup');
    expect(sim.openTasks()[0]?.id).not.toBe(firstTask?.id);
    expect(sim.userTasks.get(firstTask?.id ?? '')?.completedBy).toBe('tester');
  });
});

/** A model with `flowId` pointing at `targetId` instead: a shape the load check refuses, forged past it to test the engine's own bound. */
function forged(model: ProcessModel, flowId: string, targetId: string): ProcessModel {
  const flow = model.flows[flowId];
  if (flow === undefined) throw new Error(`no flow ${flowId}`);
  const oldTarget = model.nodes[flow.targetId];
  const newTarget = model.nodes[targetId];
  if (oldTarget === undefined || newTarget === undefined) throw new Error('no such node');
  return {
    ...model,
    flows: { ...model.flows, [flowId]: { ...flow, targetId } },
    nodes: {
      ...model.nodes,
      [oldTarget.id]: { ...oldTarget, incoming: oldTarget.incoming.filter((f) => f !== flowId) },
      [targetId]: { ...newTarget, incoming: [...newTarget.incoming, flowId] },
    },
  };
}

describe('one transition does a bounded amount of work, whatever the model', () => {
  /** start → sub [ s0 → check (xor) → bad (error end) | ok → e0 ] → done, and an error boundary on sub → retry (async) → sub. */
  const retryModel = () =>
    model(
      element('startEvent', 'start') +
        element(
          'subProcess',
          'sub',
          '',
          element('startEvent', 's0') +
            element('exclusiveGateway', 'check', 'default="ok"') +
            element('endEvent', 'invalid', '', errorDef('bad')) +
            element('endEvent', 'e0') +
            sequenceFlow('s0-check', 's0', 'check') +
            sequenceFlow('to-invalid', 'check', 'invalid', 'valid == false') +
            sequenceFlow('ok', 'check', 'e0'),
        ) +
        element('boundaryEvent', 'failed', 'attachedToRef="sub"', errorDef('bad')) +
        asyncTask('retry') +
        element('endEvent', 'done') +
        chain('start', 'sub', 'done') +
        chain('failed', 'retry', 'sub'),
    );

  test('with a wait on the retry path the model runs: one round per job', async () => {
    const sim = new CoreSim(await retryModel());
    sim.start({ valid: false });
    expect(sim.tokenAt('retry').status).toBe('WAITING_JOB');
    sim.finishJob('retry', { valid: true });
    expect(sim.instance?.status).toBe('COMPLETED');
  });

  test('the retry loop without its wait (forged past the load check) stops with STEP_LIMIT, not out of memory', async () => {
    const loop = forged(await retryModel(), 'failed-retry', 'sub');
    const sim = new CoreSim(loop);
    const t = sim.start({ valid: false });
    expect(t.instance.status).toBe('INCIDENT');
    expect(t.instance.incidents.map((i) => i.reason)).toEqual(['STEP_LIMIT']);
    expect(t.instance.incidents[0]?.message).toMatch(/10000 nodes and tokens in all/);
    // Bounded: the budget counts every node entered and token made, so the document stays small.
    expect(t.executions.length).toBeLessThan(TRANSITION_BUDGET);
  });

  test('a fork in a loop without a wait (forged) stops at the live-token bound with one incident', async () => {
    const fork = await model(
      element('startEvent', 'start') +
        element('exclusiveGateway', 'again') +
        element('parallelGateway', 'split') +
        asyncTask('a') +
        element('intermediateThrowEvent', 'b') +
        element('endEvent', 'end') +
        element('endEvent', 'endB') +
        chain('start', 'again', 'split', 'a', 'end') +
        chain('split', 'b', 'endB'),
    );
    // b's token goes round again instead of ending: one more token waits at a every round.
    const t = new CoreSim(forged(fork, 'b-endB', 'again')).start();
    expect(t.instance.incidents.map((i) => [i.reason, i.activityId])).toEqual([['TOKEN_LIMIT', 'split']]);
    expect(t.instance.activeExecutionIds).toHaveLength(MAX_LIVE_TOKENS);
    expect(t.jobs).toHaveLength(MAX_LIVE_TOKENS - 1);
  });
});

describe("an instance's status agrees with its tokens after every step", () => {
  test('a repair that moves a live token of an instance stored COMPLETED makes it RUNNING', async () => {
    const sim = new CoreSim(
      await model(
        element('startEvent', 'start') + asyncTask('work') + element('endEvent', 'end') + chain('start', 'work', 'end'),
      ),
    );
    sim.start();
    // As an earlier version could leave it: COMPLETED while a token still waits.
    if (sim.instance === null) throw new Error('not started');
    sim.instance = { ...sim.instance, status: 'COMPLETED', completedAt: sim.now };
    const t = sim.move(sim.tokenAt('work').id, 'work');
    expect(t.instance).toMatchObject({ status: 'RUNNING', completedAt: null });
    expect(sim.finishJob('work').instance.status).toBe('COMPLETED');
  });

  test('a repair that adds a token to a terminated instance makes it RUNNING', async () => {
    const sim = new CoreSim(
      await model(
        element('startEvent', 'start') + asyncTask('work') + element('endEvent', 'end') + chain('start', 'work', 'end'),
      ),
    );
    sim.start();
    sim.apply(
      terminateInstance({ instance: sim.instance as InstanceState, tokens: sim.tokens }, 'its caller left', sim.now),
    );
    expect(sim.instance?.status).toBe('COMPLETED');
    expect(sim.add('work').instance.status).toBe('RUNNING');
  });
});

describe('a repair that moves a subprocess’s own token', () => {
  const withSub = () =>
    model(
      element('startEvent', 'start') +
        element(
          'subProcess',
          'sub',
          '',
          element('startEvent', 's0') + asyncTask('work') + element('endEvent', 'e0') + chain('s0', 'work', 'e0'),
        ) +
        element('endEvent', 'end') +
        chain('start', 'sub', 'end'),
    );

  test('back onto the subprocess: it runs afresh, the old run ends (its job stale), never two runs side by side', async () => {
    const sim = new CoreSim(await withSub());
    sim.start();
    const oldJob = sim.pendingJobs()[0];
    const t = sim.move(sim.tokenAt('sub').id, 'sub');
    expect(t.staleJobs).toEqual([oldJob?.id]);
    expect(sim.live().filter((x) => x.activityId === 'work')).toHaveLength(1);
    expect(sim.pendingJobs()).toHaveLength(1);
    expect(sim.pendingJobs()[0]?.id).not.toBe(oldJob?.id);
    expect(sim.finishJob('work').instance.status).toBe('COMPLETED');
  });

  test('past the subprocess: nothing of it runs on without its scope', async () => {
    const sim = new CoreSim(await withSub());
    sim.start();
    const t = sim.move(sim.tokenAt('sub').id, 'end');
    expect(t.instance.status).toBe('COMPLETED');
    expect(sim.live()).toEqual([]);
    expect(sim.pendingJobs()).toEqual([]);
  });
});
