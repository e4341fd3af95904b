/**
 * Docs are reference, not reports: no line of the README, ARCHITECTURE.md,
 * CONTRIBUTING.md, CHANGELOG.md, docs/ or an app's README names a temporary
 * path, a branch, a lock file, a commit or tree hash, or the people and
 * sessions that did the work. Dated runs and their commits belong in the
 * benchmarks' results folders (examples/APP/bench/results/), which are not
 * scanned. Code blocks are scanned too: a command a reader copies must not
 * carry a lock file or a temporary path either. Needs no emulators.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** What a line must not name, each with the pattern that finds it. */
const RULES = [
  { rule: 'temporary path', pattern: /(?<![\w.-])\/(?:tmp|work)\/|\/var\/folders\/|\btmp\.[A-Za-z0-9]{10}\b/g },
  {
    rule: 'branch name',
    pattern: /\bi\d+(?:-[a-z][a-z0-9]*)*\b|\bbranch(?:es)?\s+[`'"]?(?:(?=[\w./-]*[\d/-])[\w./-]+|main\b|master\b)/gi,
  },
  { rule: 'lock file', pattern: /\bflock\b/g },
  // Hex of commit length with at least one digit and one letter, so numbers (seeds, byte counts) and words pass.
  { rule: 'commit or tree hash', pattern: /(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])/g },
  { rule: 'session, helper or lead word', pattern: /\bsessions?\b|\bhelpers?\b|\bthe lead\b/gi },
] as const;

type Rule = (typeof RULES)[number]['rule'];

/** The few allowed exceptions: each one a pattern whose match is not a finding of its rule, and why. */
const ALLOWED: ReadonlyArray<{ rule: Rule; pattern: RegExp; why: string }> = [
  {
    rule: 'commit or tree hash',
    pattern: /--instance [0-9a-f]{40}\b/g,
    why: 'a process instance id in a sample of the CLI: a document id, not a commit',
  },
  {
    rule: 'session, helper or lead word',
    pattern: /\bhelpers?(?= (?:are )?in \[)|\bemulator helpers?\b/g,
    why: 'helper as a kind of code, named with the link to where it lives or as the emulator helpers',
  },
];

/** One line that names what docs must not, as `line: rule: "match" in text`. */
export interface WordProblem {
  line: number;
  rule: Rule;
  match: string;
  text: string;
}

/** What a Markdown text names that reference docs must not, line by line. */
export function wordProblems(markdown: string): WordProblem[] {
  const problems: WordProblem[] = [];
  markdown.split('\n').forEach((text, i) => {
    for (const { rule, pattern } of RULES) {
      const masked = ALLOWED.filter((a) => a.rule === rule).reduce(
        (line, a) => line.replace(a.pattern, (m) => ' '.repeat(m.length)),
        text,
      );
      for (const m of masked.matchAll(pattern))
        problems.push({ line: i + 1, rule, match: m[0], text: text.trim().slice(0, 160) });
    }
  });
  return problems;
}

/** Every .md file under a folder of the repository, relative to the root, with `/`. */
function markdownUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .map((f) => `${folder}/${f.split('\\').join('/')}`)
    .filter((f) => f.endsWith('.md'));
}

/** The scanned files: the top-level documents, docs/ (all of it) and each app's README. */
function scannedFiles(): string[] {
  const top = ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].filter((f) =>
    existsSync(join(ROOT, f)),
  );
  const apps = readdirSync(join(ROOT, 'examples'))
    .map((app) => `examples/${app}/README.md`)
    .filter((f) => existsSync(join(ROOT, f)));
  return [...top, ...markdownUnder('docs'), ...apps].sort();
}

describe('the word scan', () => {
  test.each<[string, Rule]>([
    ['Run it alone: `flock /tmp/heavy.lock npm run bench:cost`.', 'lock file'],
    ['Run it alone: `flock /tmp/heavy.lock npm run bench:cost`.', 'temporary path'],
    ['The report is in /tmp/tmp.Xy12AbCd9Q/report.txt', 'temporary path'],
    ['cd /work/main && npm test', 'temporary path'],
    ['Branch i18-cost = main plus the bench.', 'branch name'],
    ['measured on i29 before the merge', 'branch name'],
    ['on branch feature/faster-relay', 'branch name'],
    ['the tree at 25420ea plus the bench', 'commit or tree hash'],
    ['at 5671b9876bcfb5e1e53799b7a1869017e840cf49', 'commit or tree hash'],
    ['six helpers shared the two cores', 'session, helper or lead word'],
    ["from the lead's count", 'session, helper or lead word'],
    ['in the same session', 'session, helper or lead word'],
  ])('finds it: %s (%s)', (line, rule) => {
    expect(wordProblems(line).map((p) => p.rule)).toContain(rule);
  });

  test.each([
    'a gateway branch keyed `id(["event-subscription", executionId, activityId])`',
    "each branch of an event-based gateway; the branch's catch event",
    '`npm run test:chaos -- --seed 20261130` (10485760 bytes, i18n aside)',
    'examples/work-orders/bench/results/cost.json and https://example.com/work/x',
    'npm run inbox -- repair move-token --instance 7214278bb8713293e77f06e63fc4550e87eb151f --activity a',
    'helpers in [support/](test/support/); no emulator helper; The other helpers are in [test/support/](test/support/).',
    'the composite indexes lead with `shard`; measured on 0.6.0 (v0.6.0)',
  ])('passes a line that names none of them: %s', (line) => {
    expect(wordProblems(line)).toEqual([]);
  });

  test('a problem names its line, rule and match; an allowed exception covers only its own rule', () => {
    expect(wordProblems('fine\nsee deadbee1 in session')).toEqual([
      { line: 2, rule: 'commit or tree hash', match: 'deadbee1', text: 'see deadbee1 in session' },
      { line: 2, rule: 'session, helper or lead word', match: 'session', text: 'see deadbee1 in session' },
    ]);
    expect(wordProblems('--instance 7214278bb8713293e77f06e63fc4550e87eb151f by the lead').map((p) => p.rule)).toEqual([
      'session, helper or lead word',
    ]);
  });
});

describe("the README, ARCHITECTURE, CONTRIBUTING, CHANGELOG, docs/ and the apps' READMEs", () => {
  const files = scannedFiles();

  test('the files to scan are there; the results folders are not among them', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'ARCHITECTURE.md',
        'docs/performance.md',
        'docs/runbook.md',
        'examples/claims/README.md',
      ]),
    );
    expect(files.filter((f) => f.includes('/results/'))).toEqual([]);
  });

  test.each(files)('%s names no temporary path, branch, lock file, hash, session, helper or lead', (file) => {
    const found = wordProblems(readFileSync(join(ROOT, file), 'utf8')).map(
      (p) => `${file}:${p.line}: ${p.rule} "${p.match}": ${p.text}`,
    );
    expect(found).toEqual([]);
  });
});
