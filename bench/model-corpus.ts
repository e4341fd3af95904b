/**
 * `npm run bench:models -- DIR...`: how much of a corpus of BPMN models the
 * parser loads, and why it refuses the rest. Every `*.bpmn` below DIR is
 * checked as `inbox model check` checks it (the same module, called
 * directly, so each file is timed on its own): files, how many load (and
 * their share), how many are refused, how many the parser crashed on (it
 * threw something other than a ModelError), the slowest file, and the ten
 * most frequent refusal reasons, grouped with element ids, quoted names and
 * numbers taken out (so every "unsupported element userTask" is one reason).
 * The corpus is yours to collect (public models, your own); nothing of it
 * is kept in the repository. Needs no build, no emulator, no project.
 *
 * Flags: --json
 */
import { performance } from 'node:perf_hooks';
import { type ModelCheck } from '../functions/src/cli/model-check';
import { checkModelFile, modelFiles } from '../functions/src/cli/model-check-command';

const TOP = 10;

/** A refusal's reason without what names one model: element ids, quoted names, numbers, the list of what is supported. */
export function normalisedReason(check: Pick<ModelCheck, 'message' | 'elementId' | 'elementKind'>): string {
  let reason = (check.message ?? '').split('; supported are:')[0] ?? '';
  const id = check.elementId;
  // The id as a word of its own, unless it is spelt like the element's kind (a userTask with the id userTask).
  if (id !== null && id !== '' && id !== check.elementKind)
    reason = reason.replace(
      new RegExp(`(?<![\\w:.-])${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w.-])`, 'g'),
      '…',
    );
  return (
    reason
      // What the XML reader quotes of the content it could not read, up to where it says where.
      .replace(/unparsable content .*? detected/, 'unparsable content … detected')
      // Quoted names ("x", 'x', <x>, «x»), but not an attribute's value as the message prescribes it (isExecutable="true").
      .replace(/(?<!=)"[^"]*"|(?<![\w=])'[^']*'|<[^<>]*>|«[^»]*»/g, '…')
      // An element or message named unquoted before the words that say what is wrong with it.
      .replace(/\b(messageRef|message|process) [^\s;:,]+ (is|has|names)\b/g, '$1 … $2')
      .replace(/\([^()]*,[^()]*\)/g, '(…)')
      .replace(/\d+/g, 'N')
  );
}

interface Report {
  readonly files: number;
  readonly load: number;
  readonly loadShare: number;
  readonly refused: number;
  readonly crashes: number;
  readonly slowest: { readonly file: string; readonly ms: number } | null;
  readonly totalMs: number;
  readonly reasons: ReadonlyArray<{ readonly count: number; readonly reason: string }>;
}

async function report(dirs: readonly string[]): Promise<Report> {
  const found = await modelFiles(dirs);
  // One unmeasured check first: the parser's first run loads and compiles what every later one reuses.
  if (found[0] !== undefined) await checkModelFile(found[0].file);
  const checks: Array<{ check: ModelCheck; ms: number }> = [];
  for (const { file } of found) {
    const started = performance.now();
    const check = await checkModelFile(file);
    checks.push({ check, ms: performance.now() - started });
  }
  const refused = checks.filter(({ check }) => !check.ok);
  const byReason = new Map<string, number>();
  for (const { check } of refused) {
    const reason = normalisedReason(check);
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  const slowest = checks.reduce<{ check: ModelCheck; ms: number } | null>(
    (a, b) => (a === null || b.ms > a.ms ? b : a),
    null,
  );
  return {
    files: checks.length,
    load: checks.length - refused.length,
    loadShare: checks.length === 0 ? 0 : (checks.length - refused.length) / checks.length,
    refused: refused.length,
    crashes: refused.filter(({ check }) => check.unexpected).length,
    slowest: slowest === null ? null : { file: slowest.check.file, ms: Math.round(slowest.ms * 10) / 10 },
    totalMs: Math.round(checks.reduce((sum, c) => sum + c.ms, 0)),
    reasons: [...byReason]
      .map(([reason, count]) => ({ count, reason }))
      .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1))
      .slice(0, TOP),
  };
}

function print(r: Report, dirs: readonly string[]): void {
  const percent = (n: number): string => `${(n * 100).toFixed(1)}%`;
  console.log(`model corpus: ${dirs.join(' ')}`);
  console.log(`files:    ${r.files}`);
  console.log(`load:     ${r.load} (${percent(r.loadShare)})`);
  console.log(`refused:  ${r.refused}`);
  console.log(`crashes:  ${r.crashes} (the parser threw something other than a ModelError)`);
  console.log(
    `slowest:  ${r.slowest === null ? '-' : `${r.slowest.ms} ms, ${r.slowest.file}`} (all files: ${r.totalMs} ms)`,
  );
  console.log(`top ${TOP} refusal reasons (of ${r.refused}):`);
  for (const { count, reason } of r.reasons) console.log(`  ${String(count).padStart(5)}  ${reason}`);
}

async function main(): Promise<void> {
  const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (dirs.length === 0) {
    console.error('usage: npm run bench:models -- DIR... [--json]  (folders searched for *.bpmn below them)');
    process.exitCode = 2;
    return;
  }
  const r = await report(dirs);
  if (process.argv.includes('--json')) console.log(JSON.stringify(r, null, 2));
  else print(r, dirs);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  });
}
