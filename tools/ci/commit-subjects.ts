/**
 * The commit rule, checked: a subject of at most 72 characters in the house
 * form `area: summary` (an area of one to three words, as `git log
 * --oneline` shows them: `relay`, `local stack`, `docs/performance`,
 * `bench:relay`), on every commit since the base but merges. CONTRIBUTING.md
 * states the rule; `.ci/run` and `npm run lint:commits` run this.
 *
 *   npx tsx tools/ci/commit-subjects.ts [BASE]
 *
 * BASE: the first commit not checked; default the newest tag reachable from
 * HEAD (the last release: the rule holds from there on), else the last
 * commit only, said so. Exit 1 naming each commit that breaks the rule.
 */
import { execFileSync } from 'node:child_process';

/** The longest subject allowed. */
export const MAX_SUBJECT = 72;
const FORM = /^[A-Za-z0-9][\w./:-]*(?: [\w./:-]+){0,2}: \S/;

/** What is wrong with a commit subject, or null when it keeps the rule. */
export function subjectProblem(subject: string): string | null {
  if (subject.length > MAX_SUBJECT) return `${subject.length} characters, at most ${MAX_SUBJECT}`;
  if (!FORM.test(subject))
    return 'not in the form "area: summary" (an area of one to three words, a colon, a space, the summary)';
  return null;
}

function git(...args: string[]): string {
  return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function newestTag(): string | null {
  try {
    return git('describe', '--tags', '--abbrev=0', 'HEAD');
  } catch {
    return null;
  }
}

function main(): void {
  const base = process.argv[2] ?? newestTag();
  const range = base === null ? ['-1', 'HEAD'] : [`${base}..HEAD`];
  const lines = git('log', '--no-merges', '--format=%h%x09%s', ...range)
    .split('\n')
    .filter((l) => l !== '');
  const bad = lines.flatMap((line) => {
    const [hash = '', subject = ''] = line.split('\t');
    const problem = subjectProblem(subject);
    return problem === null ? [] : [`${hash} ${subject}\n    ${problem}`];
  });
  const since =
    base === null
      ? 'the last commit (no tag found; give a base to check more)'
      : `the ${lines.length} commits since ${base}`;
  if (bad.length > 0) {
    process.stderr.write(
      `commit subjects: ${bad.length} of ${since} break the rule (CONTRIBUTING.md):\n${bad.join('\n')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`commit subjects: ${since} keep the rule\n`);
}

if (require.main === module) main();
