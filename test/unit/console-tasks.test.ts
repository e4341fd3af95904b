/**
 * The console page's user tasks, apart from a browser: the completion
 * form's check of its variables (console-ui/src/task-variables.ts) says what
 * is wrong before anything is sent, and the page's own copy of the API's
 * task types (console-ui/src/task-types.ts) has exactly the fields
 * operations/user-tasks.ts sends, so a field added or dropped there fails here.
 */
import type { TaskCompletion, UserTask, UserTaskPage } from '../../console-ui/src/task-types';
import { parseVariables } from '../../console-ui/src/task-variables';
import type { CompletedTask, UserTaskPage as ApiPage, UserTaskView } from '../../functions/src/operations/user-tasks';

/** true when A and B have the same keys and each is assignable to the other. */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;

describe("the console page's user tasks", () => {
  it('takes the fields the API sends, no more and no fewer', () => {
    const task: Same<UserTask, UserTaskView> = true;
    const page: Same<UserTaskPage, ApiPage> = true;
    const completion: Same<TaskCompletion, CompletedTask> = true;
    expect([task, page, completion]).toEqual([true, true, true]);
  });

  it.each([
    ['', {}],
    ['   \n', {}],
    ['{"approved": true, "note": "ok"}', { approved: true, note: 'ok' }],
    [' {"nested": {"a": [1, 2]}} ', { nested: { a: [1, 2] } }],
  ])('variables %j are %j', (text, variables) => {
    expect(parseVariables(text)).toEqual({ ok: true, variables });
  });

  it.each([
    ['{approved: true}', /^Variables: not JSON \(.+\); write an object such as \{"approved": true\}/],
    ['[1, 2]', /^Variables: a JSON object of variables, not an array; write an object/],
    ['null', /^Variables: a JSON object of variables, not null;/],
    ['"yes"', /^Variables: a JSON object of variables, not "yes";/],
    ['42', /^Variables: a JSON object of variables, not 42;/],
  ])('variables %j are refused, saying what to write', (text, reason) => {
    const parsed = parseVariables(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toMatch(reason);
  });
});
