/**
 * `inbox versions [PROCESS]`: every version of each process with its
 * instances and waiting tokens; `--retire VERSION` deletes a stored
 * version nothing uses (a repair: --dry-run, --expect); `--register
 * FILE.bpmn` stores the version of a model file (for instances started
 * before versions were stored). The reads and the repair are operations/.
 */
import { readFile } from 'node:fs/promises';
import { parseProcessModel } from '../bpmn/parse-model';
import { errorCode, errorMessage } from '../core/errors';
import { registerVersion } from '../operations/register-version';
import { retireVersionRepair } from '../operations/repairs';
import { findStoredVersion, VERSION_TEXT } from '../operations/retire-version';
import { RefusedError } from '../operations/refused';
import { listVersions, SCAN_LIMIT, type StatusCounts, type VersionRow } from '../operations/versions';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { print } from './output';
import { UsageError } from './parse';
import { printPreview, repairRunOptions } from './repair-preview';

export interface VersionsOptions {
  readonly retire?: string;
  readonly register?: string;
  readonly dryRun?: boolean;
  readonly expect?: string;
  readonly scanLimit?: string;
}

/** How a version is shown in a table: its first 8 hex digits (`--json` has the whole). */
export const shortVersion = (version: string): string => version.slice(0, 8);

const REGISTER_HINT = 'register its XML with `inbox versions --register FILE`';

export async function versionsCommand(
  ctx: CliContext,
  processKey: string | undefined,
  options: VersionsOptions,
): Promise<void> {
  if (options.retire !== undefined && options.register !== undefined)
    throw new UsageError('--retire and --register: give one of them');
  if (options.retire === undefined && (options.dryRun === true || options.expect !== undefined))
    throw new UsageError('--dry-run and --expect go with --retire VERSION');
  if (options.register !== undefined) {
    if (processKey !== undefined) throw new UsageError('--register FILE takes no PROCESS: the file names its process');
    return register(ctx, options.register);
  }
  if (options.retire !== undefined) return retire(ctx, options.retire, processKey ?? null, options);
  return list(ctx, processKey ?? null, scanLimitOf(options.scanLimit));
}

function scanLimitOf(text: string | undefined): number {
  if (text === undefined) return SCAN_LIMIT;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 100_000)
    throw new UsageError(`--scan-limit: expected a whole number from 1 to 100000, got ${JSON.stringify(text)}`);
  return n;
}

const counts = (c: StatusCounts): string => `${c.running} / ${c.incident} / ${c.completed}`;
const byActivity = (m: Readonly<Record<string, number>>): string =>
  Object.entries(m)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([activity, n]) => `${activity} ${n}`)
    .join(', ');

function waitingCell(row: VersionRow): string {
  const own = byActivity(row.waiting);
  const items = byActivity(row.itemsWaiting);
  return [own, items === '' ? '' : `items: ${items}`].filter((s) => s !== '').join('; ');
}

async function list(ctx: CliContext, processKey: string | null, scanLimit: number): Promise<void> {
  const engine = await ctx.runtime.engine();
  const report = await listVersions(ctx.db(), engine, { processKey, scanLimit });
  if (processKey !== null && report.versions.length === 0)
    throw new RefusedError(
      `no version of process ${processKey}: it is not deployed, none is stored and no instance runs it (\`inbox versions\` lists every process)`,
    );
  print(
    ctx,
    report,
    ['process', 'version', 'name', 'first deployed', 'now', 'instances R / I / C', 'items R / I / C', 'waiting tokens'],
    report.versions.map((v) => [
      v.processKey,
      shortVersion(v.version),
      v.name ?? '',
      v.firstDeployedAt ?? (v.stored ? '' : 'not stored'),
      v.deployed ? 'deployed' : '',
      counts(v.instances),
      counts(v.items),
      waitingCell(v),
    ]),
  );
  if (ctx.json) return;
  for (const v of report.versions.filter((r) => !r.stored))
    ctx.io.out(
      v.deployed
        ? `version ${v.version} of ${v.processKey} is the deployed one and not stored yet: a function stores it when it first loads its models`
        : `version ${v.version} of ${v.processKey} is not stored: its instances run on the deployed model; ${REGISTER_HINT}`,
    );
  for (const p of report.processes.filter((s) => s.capped))
    ctx.io.out(
      `${p.processKey}: read the first ${p.scanned} live instances only: the waiting tokens count part of them, and a version only the others run is not listed (--scan-limit raises it)`,
    );
}

async function retire(
  ctx: CliContext,
  text: string,
  processKey: string | null,
  options: VersionsOptions,
): Promise<void> {
  if (!VERSION_TEXT.test(text.toLowerCase()))
    throw new UsageError(
      `--retire: expected a version, 8 to 16 hex digits (\`inbox versions\` shows them), got ${JSON.stringify(text)}`,
    );
  const found = await findStoredVersion(ctx.db(), text, processKey);
  const { outcome, result } = await retireVersionRepair(
    operationsDeps(ctx),
    { kind: 'retire-version', processKey: found.processKey, version: found.version },
    repairRunOptions(ctx, options),
  );
  if (outcome.preview) return printPreview(ctx, outcome);
  print(
    ctx,
    outcome,
    ['process', 'version', 'retired', 'completed instances'],
    [[result.processKey, result.version, 'yes', result.completed]],
  );
}

async function register(ctx: CliContext, file: string): Promise<void> {
  let xml: string;
  try {
    xml = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--register: cannot read ${file} (${errorCode(err) ?? errorMessage(err)}): give a .bpmn file`);
  }
  const model = await parseProcessModel(xml).catch((err: unknown) => {
    throw new RefusedError(
      `${file} does not load as a model (${errorMessage(err)}): \`inbox model check ${file}\` says why; nothing was stored`,
    );
  });
  const done = await registerVersion(ctx.db(), model, xml, ctx.now());
  print(
    ctx,
    done,
    ['process', 'version', 'stored', 'first deployed', 'live instances on it'],
    [[done.processKey, done.version, done.stored, done.firstDeployedAt, done.liveInstances]],
  );
}
