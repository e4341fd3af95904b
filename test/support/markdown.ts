/**
 * Just enough Markdown for the docs tests: headings and their GitHub anchors,
 * and the links of a file. Fenced code blocks and inline code are skipped: a
 * `# comment` in a shell block is no heading, and a `[x](y)` in code is no link.
 * Only ATX headings (`## Title`) count; a link to a setext heading fails loudly.
 */

/**
 * GitHub's anchor for a heading's text: inline markup rendered away (links to
 * their text, HTML tags dropped), lowercased, everything but letters, digits,
 * `_`, `-` and spaces removed, each space turned into a hyphen. GitHub keeps
 * underscores and non-ASCII letters, so this does too.
 */
export function slug(heading: string): string {
  const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]*>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The text with fenced code blocks blanked out, line breaks kept so offsets still give line numbers. */
export function withoutFences(markdown: string): string {
  let fence: { char: string; length: number } | null = null;
  return markdown
    .split('\n')
    .map((line) => {
      const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === null) {
        if (marker === undefined) return line;
        fence = { char: marker[0] as string, length: marker.length };
        return '';
      }
      // A fence closes with the same character, at least as many, and nothing after it.
      if (marker !== undefined && marker[0] === fence.char && marker.length >= fence.length && line.trim() === marker)
        fence = null;
      return '';
    })
    .join('\n');
}

/** Inline code spans replaced by spaces of the same length (a backtick run closes only with a run as long). */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)[\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

/**
 * The anchors GitHub gives a file's headings, in order of appearance; a
 * repeated heading gets `-1`, `-2`, … as GitHub numbers them.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, text] of withoutFences(markdown).matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const base = slug(text as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** A link target as written, with the line it is on (1-based). */
export interface MarkdownLink {
  readonly target: string;
  readonly line: number;
}

/**
 * Inline links and images (`[text](target "title")`, text may span lines)
 * and reference definitions (`[label]: target`), outside code.
 */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const text = withoutCodeSpans(withoutFences(markdown));
  const lineAt = (offset: number): number => text.slice(0, offset).split('\n').length;
  const links: MarkdownLink[] = [];
  for (const m of text.matchAll(/\[[^\]]*\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    links.push({ target: (m[1] as string).replace(/^<(.*)>$/, '$1'), line: lineAt(m.index) });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]]+\]:[ \t]*(<[^>\n]*>|\S+)/gm)) {
    links.push({ target: (m[1] as string).replace(/^<(.*)>$/, '$1'), line: lineAt(m.index) });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** A GitHub table: its header cells and its body rows, each cell trimmed, `\|` unescaped. */
export interface MarkdownTable {
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
}

/**
 * The first table of the section under the ATX heading `heading` (up to the
 * next heading of the same or a higher level); throws when there is no such
 * heading or table, so a test never passes on a table it did not find.
 */
export function tableUnder(markdown: string, heading: string): MarkdownTable {
  const lines = withoutFences(markdown).split('\n');
  const levelOf = (line: string, text?: string): number | undefined => {
    const m = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    return m?.[1] === undefined || (text !== undefined && m[2] !== text) ? undefined : m[1].length;
  };
  const start = lines.findIndex((l) => levelOf(l, heading) !== undefined);
  const level = levelOf(lines[start] ?? '', heading);
  if (level === undefined) throw new Error(`no heading "${heading}"`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => (levelOf(l) ?? Infinity) <= level);
  const section = end < 0 ? rest : rest.slice(0, end);
  const first = section.findIndex((l) => l.trimStart().startsWith('|'));
  const delimiter = section[first + 1];
  if (first < 0 || delimiter === undefined || !/^\s*\|?(\s*:?-+:?\s*\|)+\s*(:?-+:?\s*)?$/.test(delimiter))
    throw new Error(`no table under "${heading}"`);
  const after = section.slice(first + 2).findIndex((l) => !l.trimStart().startsWith('|'));
  const body = section.slice(first + 2, after < 0 ? undefined : first + 2 + after);
  // A pipe splits cells also inside code spans (GitHub's rule); only an escaped one does not.
  const cells = (row: string): string[] =>
    row
      .trim()
      .replace(/^\|/, '')
      .replace(/(?<!\\)\|$/, '')
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
  return { header: cells(section[first] ?? ''), rows: body.map(cells) };
}
