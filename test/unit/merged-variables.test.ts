import { MAX_VARIABLES_BYTES, mergedVariablesProblem, variablesProblem } from '../../functions/src/process/variables';

/**
 * The checks a user task's completion gets on top of startProcess's:
 * the instance's variables as the completion leaves them (process/variables.ts).
 */
describe('mergedVariablesProblem', () => {
  const over = { notes: 'n'.repeat(MAX_VARIABLES_BYTES) };

  test('parts each within the bound whose merge is over: refused, saying it is the merge and naming the largest', () => {
    const before = { notes: 'n'.repeat(40_000) };
    const merged = { ...before, review: 'r'.repeat(30_000) };
    expect(variablesProblem(before)).toBeNull();
    expect(variablesProblem({ review: 'r'.repeat(30_000) })).toBeNull();
    expect(mergedVariablesProblem(before, merged)).toMatch(
      new RegExp(
        `^merged with the instance's variables, variables take \\d+ bytes as Firestore counts them \\(the largest: variables\\.notes, 40007 bytes\\); at most ${MAX_VARIABLES_BYTES} bytes are allowed$`,
      ),
    );
  });

  test('within the bound: fine', () => {
    expect(mergedVariablesProblem({ a: 1 }, { a: 1, b: 'x'.repeat(1_000) })).toBeNull();
  });

  test('instance variables over the bound already: a completion that adds nothing passes, one that grows them does not', () => {
    expect(mergedVariablesProblem(over, { ...over, approved: true })).toMatch(/^merged with the instance's variables/);
    expect(mergedVariablesProblem(over, over)).toBeNull();
    expect(mergedVariablesProblem(over, { notes: 'short' })).toBeNull();
  });

  test('a values count over the bound after the merge', () => {
    const before = { list: Array.from({ length: 3_000 }, (_, i) => i) };
    const merged = { ...before, more: Array.from({ length: 3_000 }, (_, i) => i) };
    expect(mergedVariablesProblem(before, merged)).toMatch(/variables hold 6002 values; at most 5000/);
  });
});
