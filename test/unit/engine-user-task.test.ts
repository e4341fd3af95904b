import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { completeUserTask } from '../../functions/src/engine/transitions';
import { bpmnDocument, chain, element } from '../support/bpmn-xml';
import { CoreSim } from '../support/core-sim';

const timer = (duration: string) =>
  `<bpmn:timerEventDefinition><bpmn:timeDuration>${duration}</bpmn:timeDuration></bpmn:timerEventDefinition>`;

/** start → review (a user task with an interrupting one-day timer to escalate, a non-interrupting hourly reminder) → end. */
const reviewModel = () =>
  parseProcessModel(
    bpmnDocument(
      element('startEvent', 'start') +
        element(
          'userTask',
          'review',
          'name="Review the claim" inbox:assignee="ana" inbox:candidateGroups="claims, seniors" inbox:formKey="forms/review"',
        ) +
        element('boundaryEvent', 'overdue', 'attachedToRef="review"', timer('P1D')) +
        element('boundaryEvent', 'remind', 'attachedToRef="review" cancelActivity="false"', timer('PT1H')) +
        element('serviceTask', 'escalate', 'inbox:async="true"') +
        element('endEvent', 'end') +
        element('endEvent', 'escalated') +
        element('endEvent', 'reminded') +
        chain('start', 'review', 'end') +
        chain('overdue', 'escalate', 'escalated') +
        chain('remind', 'reminded'),
    ),
  );

describe('user task', () => {
  test('the token waits WAITING_USER at an OPEN task that carries who may do it and its form', async () => {
    const sim = new CoreSim(await reviewModel());
    const t = sim.start({ claimId: 'C-1' });
    expect(t.userTasks).toEqual([
      expect.objectContaining({
        activityId: 'review',
        name: 'Review the claim',
        assignee: 'ana',
        candidateGroups: ['claims', 'seniors'],
        formKey: 'forms/review',
        status: 'OPEN',
        processKey: 'p',
        businessKey: 'B-1',
        closedAt: null,
      }),
    ]);
    const token = sim.tokenAt('review');
    expect(token).toMatchObject({ status: 'WAITING_USER', userTaskId: t.userTasks[0]?.id });
    expect(token.timerIds).toHaveLength(2);
    expect(t.jobs).toEqual([]);
  });

  test('completing it merges the variables, removes its timers and moves on; the task is COMPLETED by whom', async () => {
    const sim = new CoreSim(await reviewModel());
    sim.start();
    const t = sim.completeTask('review', { approved: true });
    expect(t.instance).toMatchObject({ status: 'COMPLETED', variables: { approved: true } });
    expect(t.cancelTimers).toHaveLength(2);
    expect(t.closeUserTasks).toEqual([]);
    expect([...sim.userTasks.values()]).toEqual([
      expect.objectContaining({ status: 'COMPLETED', completedBy: 'tester', completionRequestId: expect.any(String) }),
    ]);
  });

  test('an interrupting boundary timer takes the token away: the task is CANCELLED, saying which timer', async () => {
    const sim = new CoreSim(await reviewModel());
    sim.start();
    const t = sim.fire('overdue');
    expect(t.closeUserTasks).toEqual([{ id: expect.any(String), reason: 'boundary timer overdue fired' }]);
    expect(sim.openTasks()).toEqual([]);
    expect(t.jobs.map((j) => j.activityId)).toEqual(['escalate']);
  });

  test('a non-interrupting reminder leaves the task open', async () => {
    const sim = new CoreSim(await reviewModel());
    sim.start();
    const t = sim.fire('remind');
    expect(t.closeUserTasks).toEqual([]);
    expect(sim.openTasks()).toHaveLength(1);
    expect(sim.tokenAt('review').status).toBe('WAITING_USER');
  });

  test.each([
    [
      'a repair cancels the token',
      (sim: CoreSim) => sim.cancel(sim.tokenAt('review').id),
      'a repair cancelled its token',
    ],
    [
      'a repair moves the token',
      (sim: CoreSim) => sim.move(sim.tokenAt('review').id, 'end'),
      'a repair moved its token to end',
    ],
  ])('%s: the task is CANCELLED with the reason', async (_name, repair, reason) => {
    const sim = new CoreSim(await reviewModel());
    sim.start();
    expect(repair(sim).closeUserTasks).toEqual([{ id: expect.any(String), reason }]);
  });

  test('a completion for a task its token no longer waits at throws (the store refuses it first)', async () => {
    const sim = new CoreSim(await reviewModel());
    sim.start();
    const task = sim.openTasks()[0];
    const token = sim.tokenAt('review');
    sim.fire('overdue');
    const instance = sim.instance;
    if (task === undefined || instance === null) throw new Error('no task');
    expect(() =>
      completeUserTask(
        sim.model,
        {},
        { instance, execution: sim.tokens[token.id] ?? token, userTask: task, tokens: sim.tokens },
        {},
        { by: 'x', requestId: 'r' },
        sim.now,
      ),
    ).toThrow(/does not wait for user task/);
  });
});
