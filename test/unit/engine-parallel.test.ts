import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { asyncTask, bpmnDocument, chain, element, sequenceFlow } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const model = (body: string) => parseProcessModel(bpmnDocument(body));
const start = element('startEvent', 'start');
const end = (id = 'end') => element('endEvent', id);

/** start → fork → a, b → join → end, with a and b async tasks. */
const forkJoin = () =>
  model(
    start +
      element('parallelGateway', 'fork') +
      asyncTask('a') +
      asyncTask('b') +
      element('parallelGateway', 'join') +
      end() +
      chain('start', 'fork', 'a', 'join', 'end') +
      chain('fork', 'b', 'join'),
  );

describe('parallel gateway: fork and join', () => {
  test.each([['a first', ['a', 'b']] as const, ['b first', ['b', 'a']] as const])(
    'a fork makes a token per branch; the join goes on once both arrived (%s)',
    async (_name, order) => {
      const sim = new CoreSim(await forkJoin());
      const started = sim.start();
      expect(started.jobs.map((j) => j.activityId)).toEqual(['a', 'b']);
      expect(sim.live()).toHaveLength(2);
      expect(new Set(sim.live().map((t) => t.id)).size).toBe(2);

      const first = sim.finishJob(order[0]);
      expect(first.instance.status).toBe('RUNNING');
      const waiting = sim.tokenAt('join');
      expect(waiting).toMatchObject({ status: 'WAITING_JOIN', arrivedBy: `${order[0]}-join` });

      const second = sim.finishJob(order[1]);
      expect(second.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
      expect(sim.tokens[waiting.id]?.status).toBe('ENDED');
      expect(Object.values(sim.tokens).filter((t) => t.activityId === 'end' && t.status === 'ENDED')).toHaveLength(1);
      expect(second.instance.incidents).toEqual([]);
    },
  );

  test('a fork makes the same tokens when its step runs again (ids derived, not random)', async () => {
    const m = await forkJoin();
    const a = new CoreSim(m).start();
    const b = new CoreSim(m).start();
    expect(b).toEqual(a);
  });

  test('three branches, one waiting for a message: the join waits for all three', async () => {
    const sim = new CoreSim(
      await model(
        start +
          element('parallelGateway', 'fork') +
          asyncTask('a') +
          asyncTask('b') +
          element('receiveTask', 'r', 'messageRef="m" inbox:correlationKey="orderId"') +
          element('parallelGateway', 'join') +
          end() +
          chain('start', 'fork', 'a', 'join', 'end') +
          chain('fork', 'b', 'join') +
          chain('fork', 'r', 'join'),
      ),
    );
    sim.start({ orderId: 'o-1' });
    sim.finishJob('a');
    sim.finishJob('b');
    expect(sim.live().map((t) => t.status)).toEqual(['WAITING_JOIN', 'WAITING_JOIN', 'WAITING_MESSAGE']);
    expect(sim.deliver('r', { ok: true }).instance).toMatchObject({ status: 'COMPLETED', variables: { ok: true } });
  });

  test('a join that no token can complete any more is a JOIN_INCOMPLETE incident naming the missing flow', async () => {
    // b's branch ends before the join: a model error the load cannot see without running it.
    const sim = new CoreSim(
      await model(
        start +
          element('parallelGateway', 'fork') +
          asyncTask('a') +
          asyncTask('b') +
          element('exclusiveGateway', 'choose', 'default="b-join"') +
          element('parallelGateway', 'join') +
          end() +
          end('early') +
          chain('start', 'fork', 'a', 'join', 'end') +
          chain('fork', 'b', 'choose') +
          sequenceFlow('b-join', 'choose', 'join') +
          sequenceFlow('b-early', 'choose', 'early', '${skip == true}'),
      ),
    );
    sim.start({ skip: true });
    expect(sim.finishJob('a').instance.status).toBe('RUNNING');
    const stuck = sim.finishJob('b');
    expect(stuck.instance.status).toBe('INCIDENT');
    expect(stuck.instance.incidents).toEqual([
      expect.objectContaining({
        reason: 'JOIN_INCOMPLETE',
        activityId: 'join',
        message: 'join join waits for a token on b-join, and no token is left that could bring one',
      }),
    ]);
    // The token stays at the join, so a repair can complete it: a token moved to the join stands for the missing flow.
    const waiting = sim.tokenAt('join');
    expect(waiting.status).toBe('WAITING_JOIN');
    const ended = Object.values(sim.tokens).find((t) => t.activityId === 'early');
    expect(ended?.status).toBe('ENDED');
  });

  test('cancelling a branch token leaves the join stuck: an incident, and moving a token there completes it', async () => {
    const sim = new CoreSim(await forkJoin());
    sim.start();
    sim.finishJob('a');
    const b = sim.tokenAt('b');
    const cancelled = sim.cancel(b.id);
    expect(cancelled.instance.incidents.map((i) => i.reason)).toEqual(['JOIN_INCOMPLETE']);
    expect(cancelled.staleJobs).toHaveLength(1);
    // Repair: a new token placed at the join counts for the flow nobody brought.
    const repaired = sim.add('join');
    expect(repaired.instance.activeExecutionIds).toEqual([]);
    expect(Object.values(sim.tokens).filter((t) => t.activityId === 'end')).toHaveLength(1);
  });

  test('a second token on a flow waits for the next round (one token per flow is consumed)', async () => {
    const sim = new CoreSim(await forkJoin());
    sim.start();
    sim.finishJob('a');
    const first = sim.tokenAt('join');
    // A repair puts another token at a; it arrives by a-join too.
    const extra = sim.move(sim.tokenAt('b').id, 'a');
    expect(extra.jobs).toHaveLength(1);
    sim.finishJob('a');
    const atJoin = sim.live().filter((t) => t.activityId === 'join');
    expect(atJoin.map((t) => t.arrivedBy)).toEqual(['a-join', 'a-join']);
    expect(sim.instance?.incidents.map((i) => i.reason)).toEqual(['JOIN_INCOMPLETE']);
    expect(atJoin.some((t) => t.id === first.id)).toBe(true);
  });
});

describe('inclusive gateway (fork)', () => {
  const inclusive = () =>
    model(
      start +
        element('inclusiveGateway', 'split', 'default="to-c"') +
        asyncTask('a') +
        asyncTask('b') +
        asyncTask('c') +
        end('ea') +
        end('eb') +
        end('ec') +
        sequenceFlow('s', 'start', 'split') +
        sequenceFlow('to-a', 'split', 'a', '${x > 1}') +
        sequenceFlow('to-b', 'split', 'b', '${y > 1}') +
        sequenceFlow('to-c', 'split', 'c') +
        chain('a', 'ea') +
        chain('b', 'eb') +
        chain('c', 'ec'),
    );
  test.each([
    ['both conditions hold', { x: 2, y: 2 }, ['a', 'b']],
    ['one holds', { x: 2, y: 0 }, ['a']],
    ['none holds: the default', { x: 0, y: 0 }, ['c']],
  ])('%s', async (_name, variables, tasks) => {
    const sim = new CoreSim(await inclusive());
    expect(sim.start(variables).jobs.map((j) => j.activityId)).toEqual(tasks);
    for (const task of tasks) sim.finishJob(task);
    expect(sim.instance?.status).toBe('COMPLETED');
  });

  test('none holds and no default: NO_MATCHING_FLOW', async () => {
    const sim = new CoreSim(
      await model(
        start +
          element('inclusiveGateway', 'split') +
          end('ea') +
          end('eb') +
          sequenceFlow('s', 'start', 'split') +
          sequenceFlow('to-a', 'split', 'ea', '${x > 1}') +
          sequenceFlow('to-b', 'split', 'eb', '${y > 1}'),
      ),
    );
    expect(sim.start({ x: 0, y: 0 }).instance.incidents).toEqual([
      expect.objectContaining({ reason: 'NO_MATCHING_FLOW', activityId: 'split' }),
    ]);
  });
});

describe('inclusive gateway (join)', () => {
  /** split (inclusive: a if x > 1, b if y > 1, c by default) → a, b, c → merge (inclusive) → after → end. */
  const splitAndMerge = () =>
    model(
      start +
        element('inclusiveGateway', 'split', 'default="to-c"') +
        asyncTask('a') +
        asyncTask('b') +
        asyncTask('c') +
        element('inclusiveGateway', 'merge') +
        asyncTask('after') +
        end() +
        sequenceFlow('s', 'start', 'split') +
        sequenceFlow('to-a', 'split', 'a', '${x > 1}') +
        sequenceFlow('to-b', 'split', 'b', '${y > 1}') +
        sequenceFlow('to-c', 'split', 'c') +
        chain('a', 'merge') +
        chain('b', 'merge') +
        chain('c', 'merge') +
        chain('merge', 'after', 'end'),
    );

  test('it waits for the branches that were taken, and only for those', async () => {
    const sim = new CoreSim(await splitAndMerge());
    sim.start({ x: 2, y: 2 });
    expect(sim.finishJob('a').jobs).toEqual([]); // b can still come
    expect(sim.finishJob('b').jobs.map((j) => j.activityId)).toEqual(['after']);
    expect(sim.finishJob('after').instance.status).toBe('COMPLETED');
  });

  test('one branch taken: it goes on at once', async () => {
    const sim = new CoreSim(await splitAndMerge());
    sim.start({ x: 2, y: 0 });
    expect(sim.finishJob('a').jobs.map((j) => j.activityId)).toEqual(['after']);
  });

  test('a branch whose token is cancelled: the join goes on with what came (no silent wait)', async () => {
    const sim = new CoreSim(await splitAndMerge());
    sim.start({ x: 2, y: 2 });
    sim.finishJob('a');
    const t = sim.cancel(sim.tokenAt('b').id);
    expect(t.jobs.map((j) => j.activityId)).toEqual(['after']);
    expect(t.instance.incidents).toEqual([]);
  });
});

describe('terminate end event', () => {
  test('ends every other token with its job, user task and timers; the instance completes', async () => {
    const sim = new CoreSim(
      await model(
        start +
          element('parallelGateway', 'fork') +
          asyncTask('slow') +
          element('userTask', 'review') +
          element(
            'boundaryEvent',
            'late',
            'attachedToRef="review"',
            '<bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>',
          ) +
          asyncTask('quick') +
          end() +
          end('lateEnd') +
          element('endEvent', 'stop', '', '<bpmn:terminateEventDefinition />') +
          chain('start', 'fork', 'slow', 'end') +
          chain('fork', 'review', 'end') +
          chain('fork', 'quick', 'stop') +
          chain('late', 'lateEnd'),
      ),
    );
    sim.start();
    expect(sim.openTasks()).toHaveLength(1);
    expect(sim.timers.size).toBe(1);
    const t = sim.finishJob('quick');
    expect(t.instance).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
    expect(t.staleJobs).toHaveLength(1);
    expect(t.cancelTimers).toHaveLength(1);
    expect(t.closeUserTasks).toEqual([
      expect.objectContaining({ reason: 'terminate end event stop ended the instance' }),
    ]);
    expect(
      t.executions
        .filter((e) => e.status === 'CANCELLED')
        .map((e) => e.activityId)
        .sort(),
    ).toEqual(['review', 'slow']);
  });
});

describe('implicit end: a node without an outgoing flow ends its token there', () => {
  test('at the process level the instance completes; inside a subprocess the subprocess is left', async () => {
    const flat = new CoreSim(await model(start + asyncTask('a') + chain('start', 'a')));
    flat.start();
    expect(flat.finishJob('a').instance.status).toBe('COMPLETED');

    const nested = new CoreSim(
      await model(
        start +
          element('subProcess', 'sub', '', element('startEvent', 's0') + asyncTask('a') + chain('s0', 'a')) +
          asyncTask('after') +
          chain('start', 'sub', 'after'),
      ),
    );
    nested.start();
    expect(nested.finishJob('a').jobs.map((j) => j.activityId)).toEqual(['after']);
    expect(nested.finishJob('after').instance.status).toBe('COMPLETED');
  });
});

describe('tasks the engine passes through, and business rule tasks', () => {
  test('task, manualTask and a none intermediateThrowEvent pass; a business rule task runs its handler', async () => {
    const sim = new CoreSim(
      await model(
        start +
          element('task', 't') +
          element('manualTask', 'manual') +
          element('intermediateThrowEvent', 'milestone') +
          element('businessRuleTask', 'rate') +
          end() +
          chain('start', 't', 'manual', 'milestone', 'rate', 'end'),
      ),
      { rate: (v) => ({ rating: (v.amount as number) > 100 ? 'high' : 'low' }) },
    );
    const t = sim.start({ amount: 500 });
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { amount: 500, rating: 'high' } });
    expect(t.executions[0]?.step).toBe(6);
  });
});
