import { versionText } from '../../functions/src/operations/explain-words';
import type { InstanceFact, VersionFact } from '../../functions/src/operations/explain-model';

/** How `inbox explain` names the version an instance runs on. */
const fact = (version: VersionFact | null | undefined): InstanceFact => ({
  id: 'i-1',
  businessKey: 'C-1',
  status: 'RUNNING',
  completedAt: null,
  tokens: [],
  openIncidents: [],
  ...(version === undefined ? {} : { version }),
});
const v = (over: Partial<VersionFact>): VersionFact => ({
  processKey: 'case-handling',
  version: 'aaaaaaaabbbbbbbb',
  deployedVersion: 'aaaaaaaabbbbbbbb',
  stored: true,
  ...over,
});

test.each<[string, VersionFact, string]>([
  ['the deployed one', v({}), 'the deployed one, stored'],
  ['an older stored one', v({ deployedVersion: 'ccccccccdddddddd' }), 'not the deployed one (cccccccc), stored'],
  [
    'one never stored',
    v({ deployedVersion: 'ccccccccdddddddd', stored: false }),
    'not the deployed one (cccccccc), never stored: it runs on the deployed model',
  ],
  [
    'a process the app does not deploy',
    v({ deployedVersion: null }),
    'its process is not deployed by this app, stored',
  ],
])('%s', (_what, version, words) => {
  const text = versionText(fact(version));
  expect(text).toContain('instance i-1 runs process case-handling version aaaaaaaa: ');
  expect(text).toContain(words);
});

test('an instance whose document names no version: no line', () => {
  expect(versionText(fact(null))).toBeNull();
  expect(versionText(fact(undefined))).toBeNull();
});
