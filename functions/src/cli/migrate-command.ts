import { readFile } from 'node:fs/promises';
import { parseMigrationExpect } from '../engine/migration/expect';
import type { ElementMapping } from '../engine/migration/plan';
import { migrateInstances, type MigrateRun, type MigrationOutcome } from '../operations/migrate';
import { RefusedError } from '../operations/refused';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { cliActor, operationsDeps } from './operations-deps';
import { print } from './output';
import { UsageError } from './parse';
import { pageProgress } from './progress';

export interface MigrateOptions {
  process: string;
  from: string;
  to: string;
  map?: string[];
  instances?: string;
  all?: boolean;
  dryRun?: boolean;
  expect?: string;
  requestId?: string;
}

/** The mapping of the --map options; a UsageError for one that is not SOURCE=TARGET or maps a source twice. */
export function mappingOf(entries: readonly string[]): ElementMapping {
  const mapping: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const from = entry.slice(0, eq).trim();
    const to = entry.slice(eq + 1).trim();
    if (eq <= 0 || from === '' || to === '')
      throw new UsageError(`--map takes SOURCE=TARGET (two element ids), not ${JSON.stringify(entry)}`);
    if (Object.hasOwn(mapping, from)) throw new UsageError(`--map maps ${from} twice: give each source element once`);
    mapping[from] = to;
  }
  return mapping;
}

/** --expect's line, or with `@FILE` the line kept in that file (a long run's line exceeds a command line). */
async function expectOf(text: string | undefined): Promise<Map<string, string> | undefined> {
  if (text === undefined) return undefined;
  const line = text.startsWith('@') ? await readFile(text.slice(1), 'utf8') : text;
  const parsed = parseMigrationExpect(line);
  if (parsed === null)
    throw new UsageError(
      `--expect takes the line a --dry-run of the same migration printed (migration:ID=FINGERPRINT,…), or @FILE holding it; not ${JSON.stringify(line.slice(0, 120))}`,
    );
  return parsed;
}

function runOf(options: MigrateOptions): MigrateRun {
  const named = (options.instances ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (named.length > 0 === (options.all === true))
    throw new UsageError(
      'migrate takes either --instances ID,… or --all (every RUNNING and INCIDENT instance at --from)',
    );
  return {
    processKey: options.process,
    from: options.from,
    to: options.to,
    mapping: mappingOf(options.map ?? []),
    instances: options.all === true ? 'all' : named,
  };
}

/** Most instances the progress bar counts up front (the bar grows past it if need be). */
const COUNT_CAP = 1_000_000;

/** How many instances the run takes: the named ones, or a count of RUNNING and INCIDENT instances at --from. */
async function totalOf(ctx: CliContext, run: MigrateRun): Promise<number> {
  if (run.instances !== 'all') return new Set(run.instances).size;
  let total = 0;
  for (const status of ['RUNNING', 'INCIDENT']) {
    // A count() of the paged query: its limit only caps what is counted.
    const filter = { processKey: run.processKey, version: run.from, status };
    const q = QUERIES.instancesOfVersion.build(ctx.db(), filter, null, COUNT_CAP);
    total += (await q.count().get()).data().count;
  }
  return total;
}

const VERB: Record<string, string> = {
  MIGRATED: 'migrated',
  WOULD_MIGRATE: 'would migrate',
  ALREADY_MIGRATED: 'already migrated by this request id',
  REFUSED: 'refused',
};

/** Per instance, each token's move and what happens to what it waits with; a refused one with its reason. */
function report(ctx: CliContext, outcome: MigrationOutcome): void {
  const rows = outcome.instances.flatMap((i) =>
    i.verdict === 'REFUSED'
      ? [[i.instanceId, VERB[i.verdict], '', i.reason ?? '']]
      : i.moves.map((m, n) => [
          n === 0 ? i.instanceId : '',
          n === 0 ? VERB[i.verdict] : '',
          `${m.executionId} ${m.from} → ${m.to} (${m.status})`,
          m.effects.join('; '),
        ]),
  );
  print(ctx, outcome, ['instance', 'migration', 'token', 'what happens'], rows);
}

/** `inbox migrate`: instances of a process from one stored version to another; --dry-run previews and prints the --expect line. */
export async function migrateCommand(ctx: CliContext, options: MigrateOptions): Promise<void> {
  const run = runOf(options);
  const expect = await expectOf(options.expect);
  const preview = options.dryRun === true;
  if (!preview && expect === undefined)
    throw new UsageError(
      'migrate changes instances only as a preview showed them: run it with --dry-run first, then again with the --expect line it prints',
    );
  const total = await totalOf(ctx, run);
  const bar = pageProgress(ctx, total, '{bar} {value}/{total} instances', {});
  let seen = 0;
  const outcome = await migrateInstances(operationsDeps(ctx), run, {
    preview,
    actor: cliActor(ctx.config),
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
    ...(expect === undefined ? {} : { expect }),
    onBatch: (done) => {
      bar.advance(done - seen, {});
      seen = done;
    },
  }).finally(() => bar.stop());
  report(ctx, outcome);
  const refused = outcome.instances.filter((i) => i.verdict === 'REFUSED');
  if (!ctx.json) summary(ctx, outcome, refused.length);
  if (refused.length > 0)
    throw new RefusedError(
      `${refused.length} of ${outcome.instances.length} instances ${preview ? 'would be' : 'were'} refused${preview ? '' : ' (the others were migrated)'}; each says why above`,
    );
}

function summary(ctx: CliContext, outcome: MigrationOutcome, refused: number): void {
  const count = (v: string): number => outcome.instances.filter((i) => i.verdict === v).length;
  if (outcome.preview) {
    ctx.io.out(`dry run: nothing changed; ${count('WOULD_MIGRATE')} would migrate, ${refused} would be refused`);
    if (count('WOULD_MIGRATE') > 0)
      ctx.io.out(
        `to do exactly this, run it again without --dry-run and with --expect '${outcome.expect ?? ''}' (an instance that changed meanwhile is refused; a long line: save it with --json … | jq -r .expect > FILE, then --expect @FILE)`,
      );
    return;
  }
  ctx.io.out(
    `migrated ${count('MIGRATED')}, already migrated ${count('ALREADY_MIGRATED')}, refused ${refused} (request id ${outcome.requestId}: run again with --request-id ${outcome.requestId} and the same --expect to resume)`,
  );
}
