import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableUnder } from '../support/markdown';

/**
 * CONTRIBUTING.md's "Scripts" table against package.json: every npm script
 * has a row, so a script added without a word about it fails here. A
 * lifecycle hook (`pretest` before `test`) is documented in its script's
 * row and needs none of its own. Needs no emulators.
 */
const ROOT = join(__dirname, '..', '..');
const CONTRIBUTING = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
const scripts = Object.keys(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
);

/** The scripts the table's first column names: `npm test`, `npm start`, `npm run NAME …`. */
function documented(): string[] {
  const { header, rows } = tableUnder(CONTRIBUTING, 'Scripts');
  expect(header).toEqual(['script', 'what it does']);
  return rows.flatMap(([cell = '']) => [...cell.matchAll(/`npm (?:run )?([\w:-]+)[^`]*`/g)].map((m) => m[1] ?? ''));
}

/** `pre<name>` / `post<name>` of a script that exists: npm runs it with that script. */
const isHook = (name: string): boolean =>
  /^(pre|post)./.test(name) && scripts.includes(name.replace(/^(pre|post)/, ''));

describe("CONTRIBUTING.md's scripts table", () => {
  test('has a row for every script of package.json', () => {
    const rows = new Set(documented());
    expect(scripts.filter((s) => !isHook(s) && !rows.has(s))).toEqual([]);
  });

  test('names each script once', () => {
    const names = documented();
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });
});
