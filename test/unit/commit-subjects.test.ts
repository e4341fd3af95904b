import { MAX_SUBJECT, subjectProblem } from '../../tools/ci/commit-subjects';

describe('the commit subject rule', () => {
  test.each([
    'relay: an awaited message is not held behind one no token waits for',
    'local stack: the loopback preload as plain CommonJS (.js)',
    'docs/performance: one current figure and its command',
    'bench:relay: time the fast path hop by hop',
    'README: the console, what each view is for and how to open it',
  ])('keeps it: %s', (subject) => {
    expect(subjectProblem(subject)).toBeNull();
  });

  test.each([
    ['too long', `relay: ${'x'.repeat(MAX_SUBJECT - 6)}`, /73 characters, at most 72/],
    ['no area', 'Fix the relay', /area: summary/],
    ['no space after the colon', 'relay:fix', /area: summary/],
    ['an area of four words', 'the relay of the inbox: fix', /area: summary/],
    ['an empty summary', 'relay: ', /area: summary/],
  ])('refuses %s', (_what, subject, problem) => {
    expect(subjectProblem(subject)).toMatch(problem);
  });

  test('exactly 72 characters is allowed', () => {
    expect(subjectProblem(`relay: ${'x'.repeat(MAX_SUBJECT - 7)}`)).toBeNull();
  });
});
