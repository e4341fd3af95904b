import { countVersions, versionsText } from '../../chaos/versions';

const instance = (processKey: string, processVersion: string, calledBy: null | { instanceId: string } = null) => ({
  processKey,
  processVersion,
  calledBy: calledBy === null ? null : { ...calledBy, activityId: 'a', index: 0, batch: 'b' },
});

test('counts top-level instances per stored version, oldest first, and those on a version never stored', () => {
  const stored = [
    { processKey: 'p', version: 'old' },
    { processKey: 'q', version: 'q1' },
    { processKey: 'p', version: 'new' },
  ];
  const counts = countVersions(
    {
      instances: [
        instance('p', 'old'),
        instance('p', 'new'),
        instance('p', 'new'),
        instance('q', 'q1'),
        instance('p', 'gone'),
        // An item runs on its caller's version and is not counted again.
        instance('p#a', 'old', { instanceId: 'x' }),
      ] as never,
    },
    stored,
  );
  expect(counts).toEqual({ byProcess: { p: [1, 2], q: [1] }, unstored: 1 });
  expect(versionsText(counts)).toBe('versions: p 1 on v1 + 2 on v2, q 1 on v1, unstored 1');
});
