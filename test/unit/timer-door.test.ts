import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { messageStartProblem, timerProblem } from '../../functions/src/process/variables';
import type { ProcessModel } from '../../functions/src/bpmn/model';

const ROOT = join(__dirname, '..', '..');

/** The door check of timer variables: what would stop a token with INVALID_TIMER later is refused at the start. */
describe('timerProblem', () => {
  let deployed: ProcessModel;
  let kinds: ProcessModel;
  beforeAll(async () => {
    deployed = await loadProcessModel(join(ROOT, 'test', 'fixtures', 'app', 'bpmn', 'fixture-process.bpmn'));
    kinds = await loadProcessModel(join(ROOT, 'test', 'fixtures', 'bpmn', 'timer-kinds.bpmn'));
  });

  test.each([
    ['absent: the model default P14D applies', {}, null],
    ['null counts as absent', { completionDeadline: null }, null],
    ['a duration of seconds (the demo)', { completionDeadline: 'PT5S' }, null],
    ['days and hours', { completionDeadline: 'P1DT12H' }, null],
  ])('deployed model, %s', (_what, variables, expected) => {
    expect(timerProblem(deployed, variables)).toBe(expected);
  });

  test.each([
    ['not a duration', { completionDeadline: 'soon' }],
    ['months depend on the calendar', { completionDeadline: 'P1M' }],
    ['a number is no ISO text', { completionDeadline: 14 }],
  ])('deployed model refuses %s, naming the variable and the timer', (_what, variables) => {
    const problem = timerProblem(deployed, variables);
    expect(problem).toMatch(/^variables\.completionDeadline: /);
    expect(problem).toContain('timer completionOverdue of process fixture-process');
  });

  test('a variable timer without default needs its variable; a valid date-time passes', () => {
    expect(timerProblem(kinds, {})).toMatch(/^variables\.approvalDueAt: .*no inbox:default/);
    expect(timerProblem(kinds, { approvalDueAt: '2027-01-31T12:00:00Z' })).toBeNull();
    expect(timerProblem(kinds, { approvalDueAt: '31.01.2027' })).toMatch(/^variables\.approvalDueAt: /);
  });

  test('a message start is checked the same way', () => {
    expect(messageStartProblem(deployed, { caseId: 'C-1', completionDeadline: 'tomorrow' })).toMatch(
      /^variables\.completionDeadline: /,
    );
    expect(messageStartProblem(deployed, { caseId: 'C-1', completionDeadline: 'PT30S' })).toBeNull();
  });
});
