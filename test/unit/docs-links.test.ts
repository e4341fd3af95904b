/**
 * Links that open: every relative link in the README, ARCHITECTURE.md,
 * CONTRIBUTING.md, the docs and the READMEs of examples/ and packages/ reaches a
 * file that a clone of the repository has, and every #anchor on a link to a
 * Markdown file names one of its headings. http(s) and mailto links are not
 * followed (no network in tests). Needs no emulators.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { headingAnchors, markdownLinks, slug, withoutFences } from '../support/markdown';

const ROOT = join(__dirname, '..', '..');

/** The Markdown files whose links are checked, relative to the root: the top-level ones, docs/, and the READMEs of the apps, their demos and the packages. */
function checkedFiles(shipped: ReadonlySet<string>): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  const readmes = [...shipped].filter((f) => /^(examples|packages)\/(.+\/)?README\.md$/.test(f)).sort();
  return ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', ...docs, ...readmes].filter((f) =>
    existsSync(join(ROOT, f)),
  );
}

/**
 * What a clone has: tracked files plus new files not ignored (so a doc added
 * in this change counts before its commit). Existing on disk is not enough:
 * dist/ and node_modules/ are there locally and absent from a clone.
 */
function shippedFiles(): Set<string> {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return new Set(out.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f))));
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors === undefined) {
    anchors = headingAnchors(readFileSync(join(ROOT, file), 'utf8'));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** Why a link does not open, or null when it does. `from` and the result's paths are relative to the root, with `/`. */
function problemOf(from: string, target: string, shipped: ReadonlySet<string>): string | null {
  if (/^(https?|mailto):/i.test(target)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'not a relative link (a clone cannot follow it)';
  const hash = target.indexOf('#');
  const pathPart = (hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));

  let file = from;
  if (pathPart !== '') {
    const decoded = decodeURIComponent(pathPart);
    // GitHub resolves a leading slash against the repository root.
    const absolute = decoded.startsWith('/') ? join(ROOT, decoded) : join(ROOT, dirname(from), decoded);
    const rel = relative(ROOT, absolute);
    if (rel.startsWith('..') || isAbsolute(rel)) return `points outside the repository (${rel})`;
    file = rel.split(sep).join('/').replace(/\/$/, '');
    const isDirectory = [...shipped].some((f) => f.startsWith(`${file}/`));
    if (!shipped.has(file) && !isDirectory) return `${file} is not in the repository`;
  }
  if (anchor !== null && file.toLowerCase().endsWith('.md') && !anchorsOf(file).has(anchor)) {
    return `${file} has no heading with the anchor #${anchor}`;
  }
  return null;
}

describe('the Markdown helpers', () => {
  test('slug follows GitHub: lowercase, punctuation but - and _ dropped, spaces to hyphens', () => {
    expect(slug('At the receiver (`receivePubSubPush`)')).toBe('at-the-receiver-receivepubsubpush');
    expect(slug('Alert: oldest OPEN document too old')).toBe('alert-oldest-open-document-too-old');
    expect(slug('`correlationKeys/{id(["correlation-key", key])}`')).toBe('correlationkeysidcorrelation-key-key');
    expect(slug('INBOX_RELAY_URL and [the runbook](docs/runbook.md)')).toBe('inbox_relay_url-and-the-runbook');
  });

  test('headings in code blocks do not count; a repeated heading is numbered', () => {
    const md = [
      '# Title',
      '```sh',
      '# not a heading',
      '```',
      '## Step',
      '## Step',
      '~~~',
      '## inside tildes',
      '~~~',
    ].join('\n');
    expect([...headingAnchors(md)]).toEqual(['title', 'step', 'step-1']);
    expect(withoutFences(md).split('\n')).toHaveLength(9);
  });

  test('links: inline, images, wrapped text, titles, reference definitions; none inside code', () => {
    const md = [
      'See [the runbook](runbook.md#the-operator-cli) and ![a chart](../bench/results/x.svg "title").',
      'A [wrapped',
      'link](data-model.md) and `[code](not-a-link.md)`.',
      '```',
      '[fenced](not-a-link-either.md)',
      '```',
      '[ref]: ../README.md',
    ].join('\n');
    expect(markdownLinks(md)).toEqual([
      { target: 'runbook.md#the-operator-cli', line: 1 },
      { target: '../bench/results/x.svg', line: 1 },
      { target: 'data-model.md', line: 2 },
      { target: '../README.md', line: 7 },
    ]);
  });
});

describe('links in the README and docs/', () => {
  const shipped = shippedFiles();
  const files = checkedFiles(shipped);

  test('the files to check are there, and they have links to check', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'CONTRIBUTING.md',
        'docs/background.md',
        'docs/runbook.md',
        'examples/work-orders/demo/README.md',
      ]),
    );
    const links = files.flatMap((f) => markdownLinks(readFileSync(join(ROOT, f), 'utf8')));
    expect(links.filter((l) => /\.md#/.test(l.target)).length).toBeGreaterThan(10);
  });

  test.each(files)('%s: every relative link opens', (file) => {
    const problems = markdownLinks(readFileSync(join(ROOT, file), 'utf8'))
      .map((link) => ({ link, problem: problemOf(file, link.target, shipped) }))
      .filter((p) => p.problem !== null)
      .map(({ link, problem }) => `${file}:${link.line} (${link.target}): ${problem ?? ''}`);
    expect(problems).toEqual([]);
  });
});
