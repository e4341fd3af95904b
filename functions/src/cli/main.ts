#!/usr/bin/env node
/**
 * `inbox`: the operator CLI. Tables for people, --json for scripts.
 * Exit codes (failures.ts, EXIT): 0 done, 1 refused or failed (unknown id,
 * nothing to do, a technical error), 2 bad usage (unknown command, bad
 * filter value, bad configuration), 3 no credentials, 4 wrong project,
 * 5 Firestore (or its emulator) unreachable, 6 permission denied. Every
 * failure is one line on stderr that says what to do.
 */
import { Command, CommanderError, Option } from 'commander';
import { createInterface } from 'node:readline/promises';
import { ConfigError } from '../config';
import { type CliContext, cliContext, type CliIo } from './context';
import { classifyCliError, CliFailure, EXIT, preflight, type Target } from './failures';
import { isRefusal } from '../operations/refused';
import { UsageError } from './parse';
import { errorMessage } from '../core/errors';

const terminalIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  async confirm(question) {
    if (process.stdin.isTTY !== true) return false;
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(question)).trim());
    } finally {
      rl.close();
    }
  },
};

// Each command's module (and the SDKs behind it) is loaded only when the command runs: one file per command, <command>-command.ts.
const load = {
  stats: () => require('./stats-command') as typeof import('./stats-command'),
  list: () => require('./list-command') as typeof import('./list-command'),
  show: () => require('./show-command') as typeof import('./show-command'),
  explain: () => require('./explain-command') as typeof import('./explain-command'),
  requeue: () => require('./requeue-command') as typeof import('./requeue-command'),
  park: () => require('./park-command') as typeof import('./park-command'),
  instances: () => require('./instances-command') as typeof import('./instances-command'),
  incidents: () => require('./incidents-command') as typeof import('./incidents-command'),
  moveToken: () => require('./move-token-command') as typeof import('./move-token-command'),
  migrate: () => require('./migrate-command') as typeof import('./migrate-command'),
  resolveIncident: () => require('./resolve-incident-command') as typeof import('./resolve-incident-command'),
  admitCollision: () => require('./admit-collision-command') as typeof import('./admit-collision-command'),
  dismiss: () => require('./dismiss-command') as typeof import('./dismiss-command'),
  orphanPayloads: () => require('./orphan-payloads-command') as typeof import('./orphan-payloads-command'),
  orphanChunks: () => require('./orphan-chunks-command') as typeof import('./orphan-chunks-command'),
  cancelToken: () => require('./cancel-token-command') as typeof import('./cancel-token-command'),
  waiting: () => require('./waiting-command') as typeof import('./waiting-command'),
  timers: () => require('./timers-command') as typeof import('./timers-command'),
  fireTimer: () => require('./fire-timer-command') as typeof import('./fire-timer-command'),
  shardSubscriptions: () => require('./shard-subscriptions-command') as typeof import('./shard-subscriptions-command'),
  purge: () => require('./purge-command') as typeof import('./purge-command'),
  console: () => require('./console-command') as typeof import('./console-command'),
  app: () => require('./app-command') as typeof import('./app-command'),
  tasks: () => require('./tasks-command') as typeof import('./tasks-command'),
  modelCheck: () => require('./model-check-command') as typeof import('./model-check-command'),
  versions: () => require('./versions-command') as typeof import('./versions-command'),
  modelDiff: () => require('./model-diff-command') as typeof import('./model-diff-command'),
  modelImpact: () => require('./model-impact-command') as typeof import('./model-impact-command'),
};

/** Commands that need no project and no Firestore, by their words after `inbox`. */
const NO_FIRESTORE: ReadonlySet<string> = new Set(['console', 'app', 'model check', 'model diff', 'model impact']);

/** A command's words after `inbox`: `stats`, `repair move-token`, `model check`. */
function commandWords(command: Command): string {
  const parent = command.parent;
  return parent === null || parent.parent === null ? command.name() : `${commandWords(parent)} ${command.name()}`;
}

/** Runs the CLI on `argv` (without node and script) and returns the exit code. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = terminalIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const program = new Command('inbox')
    .description('Operate the transactional inbox: see, requeue, park and repair.')
    .option('--json', 'machine-readable output');
  program
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  let ctx: CliContext | undefined;
  const context = (): CliContext => (ctx ??= cliContext(env, io, program.opts<{ json?: boolean }>().json === true));
  const emulatorHost =
    env.FIRESTORE_EMULATOR_HOST === undefined || env.FIRESTORE_EMULATOR_HOST === ''
      ? null
      : env.FIRESTORE_EMULATOR_HOST;
  const target = (): Target => ({ projectId: context().config.projectId, emulatorHost });
  // Every command but `console`, `app` and `model check` talks to Firestore: what can be seen up front (no emulator there, no credentials) fails fast, in one line.
  program.hook('preAction', (_program, command) =>
    NO_FIRESTORE.has(commandWords(command)) ? undefined : preflight(target(), env),
  );
  // In the order `inbox --help` lists them.
  addDocumentCommands(program, context);
  addProcessCommands(program, context);
  addWatchCommands(program, context);
  addTaskCommands(program, context);
  addPurgeCommand(program, context);
  addConsoleCommand(program, io);
  program
    .command('app')
    .description(
      'the app this deployment runs (INBOX_APP), checked against its models: processes, message types with their topics and subscriptions, steps, publishes (--json: what deploy.sh reads)',
    )
    .action(() => load.app().appCommand(io, env, program.opts<{ json?: boolean }>().json === true));
  addModelCommand(program, io);
  // `model diff` reads the project only when asked to: then it makes its context and runs the same preflight.
  addModelDiffCommands(program, io, env, async () => {
    const made = context();
    await preflight(target(), env);
    return made;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.OK;
  } catch (err) {
    // Firestore and credential failures are recognised only once a command has made its context (and so has a target).
    return failureExit(err, io, () => (ctx === undefined ? null : classifyCliError(err, target(), env)));
  } finally {
    await ctx?.close().catch(() => undefined);
  }
}

/** The --dry-run of a repair: its own transaction, rolled back (operations/repairs.ts). */
const DRY_RUN =
  'run every check of the repair and show what it would write and the --expect line of what it read; change nothing (exit 1 when it would be refused)';
/** The --expect of a repair: the basis its --dry-run printed (engine/repair-basis.ts). */
const EXPECT =
  'the line a --dry-run printed: refuse, changing nothing, if what the repair acts on changed since that preview';

/** stats, list, show, explain, requeue, park: seeing inbox documents and moving them between OPEN and PARKED. */
function addDocumentCommands(program: Command, context: () => CliContext): void {
  program
    .command('stats')
    .description('counts by status and reason, age of the oldest OPEN document, the levels the alerts watch')
    .action(() => load.stats().statsCommand(context()));
  program
    .command('list')
    .description('inbox documents, filtered')
    .option('--status <status>', 'OPEN, DONE or PARKED')
    .option('--reason <reason>', 'park reason')
    .option('--message-name <name>', 'message name')
    .option('--key <key>', 'correlation key')
    .option('--older-than <duration>', 'received at least this long ago (15m, 2h, 7d)')
    .option('--limit <n>', 'at most this many', '100')
    .action((options: import('./list-command').ListOptions) => load.list().listCommand(context(), options));
  program
    .command('show <id>')
    .description(
      'a document with payload (an offloaded one fetched from the payload bucket), claim checks (FOUND, MISSING or CHANGED), attempts, errors and its process state',
    )
    .option(
      '--raw <file>',
      'also write the exact payload bytes to FILE: the canonical JSON, the offloaded object, or the raw bytes of an unreadable message',
    )
    .action((id: string, options: { raw?: string }) => load.show().showCommand(context(), id, options));
  program
    .command('explain <id>')
    .description('why a document is where it is (OPEN, PARKED, DONE) and what to do next')
    .action((id: string) => load.explain().explainCommand(context(), id));
  program
    .command('requeue [ids...]')
    .description('PARKED back to OPEN (attempts 0, due now): by id, or all of a --reason')
    .option('--reason <reason>', 'every PARKED document of this reason')
    .option('--since <time>', 'with --reason: parked at or after (ISO time or 2h)')
    .option('--dry-run', 'show what would be requeued')
    .option('--yes', 'do not ask before a bulk requeue')
    .action((ids: string[], options: import('./bulk').BulkOptions) =>
      load.requeue().requeueCommand(context(), ids, options),
    );
  program
    .command('park <id>')
    .description('OPEN to PARKED (reason MANUAL)')
    .requiredOption('--reason <text>', 'why')
    .option('--dry-run', DRY_RUN)
    .option('--expect <line>', EXPECT)
    .action((id: string, options: { reason: string; dryRun?: boolean; expect?: string }) =>
      load.park().parkCommand(context(), id, options.reason, {
        dryRun: options.dryRun === true,
        ...(options.expect === undefined ? {} : { expect: options.expect }),
      }),
    );
}

/** instances, incidents, repair: process state and its repairs. */
function addProcessCommands(program: Command, context: () => CliContext): void {
  program
    .command('instances <businessKey>')
    .description('the process instances of a business key: their tokens and what each waits for')
    .action((key: string) => load.instances().instancesCommand(context(), key));
  program
    .command('incidents')
    .description(
      'open incidents (duplicate waiting points, failed jobs, …) and the FAILED jobs of instances in INCIDENT',
    )
    .option('--all', 'also resolved incidents and every FAILED job')
    .action((options: { all?: boolean }) => load.incidents().incidentsCommand(context(), options));
  program
    .command('versions [process]')
    .description(
      'each version of each process (or of PROCESS): first deployed, whether new instances start on it, instances running / in incident / completed (and of its multi-instance items), live tokens by activity; versions live instances run that were never stored',
    )
    .option(
      '--retire <version>',
      'delete this stored version (8 to 16 hex digits) if nothing uses it; refused, naming what does, otherwise',
    )
    .option(
      '--register <file>',
      'store the version of a .bpmn file (for instances started on it before versions were stored)',
    )
    .option('--dry-run', DRY_RUN)
    .option('--expect <line>', EXPECT)
    .option('--scan-limit <n>', 'live instance documents read per process for the waiting tokens (default 5000)')
    .action((processKey: string | undefined, options: import('./versions-command').VersionsOptions) =>
      load.versions().versionsCommand(context(), processKey, options),
    );
  const repair = program
    .command('repair')
    .description(
      'move or cancel tokens (refuses a second waiting point for a key unless --force), resolve incidents, admit a key collision, dismiss a parked document',
    );
  repair
    .command('move-token')
    .requiredOption('--instance <id>', 'process instance')
    .requiredOption('--activity <id>', 'BPMN element to move the token to')
    .option('--execution <id>', 'the token to move (default: add a new token)')
    .option('--force', 'allow a second waiting point for the same message and key')
    .option('--dry-run', DRY_RUN)
    .option('--expect <line>', EXPECT)
    .action((options: Parameters<typeof import('./move-token-command').moveTokenCommand>[1]) =>
      load.moveToken().moveTokenCommand(context(), options),
    );
  repair
    .command('resolve-incident <instanceId>')
    .description(
      "close the instance's open incidents once their cause is repaired: RUNNING again, COMPLETED if no token is left",
    )
    .option('--note <text>', 'what was done, kept with each incident')
    .option('--dry-run', DRY_RUN)
    .option('--expect <line>', EXPECT)
    .action((id: string, options: { note?: string; dryRun?: boolean; expect?: string }) =>
      load.resolveIncident().resolveIncidentCommand(context(), id, options),
    );
  repair
    .command('admit-collision <id>')
    .description(
      'after comparing both payloads: a KEY_COLLISION document becomes an event of its own (OPEN, its own id), never a second copy of the first',
    )
    .option('--dry-run', 'show both payloads and what would change; change nothing')
    .option('--note <text>', 'why, kept with the document')
    .action((id: string, options: { dryRun?: boolean; note?: string }) =>
      load.admitCollision().admitCollisionCommand(context(), id, options),
    );
  repair
    .command('dismiss <id>')
    .description(
      'a PARKED document the business has settled (ALREADY_STARTED: a repeated start) becomes DONE, recorded with who, when and why; a redelivery stays a duplicate',
    )
    .requiredOption('--note <text>', 'why, kept with the document')
    .option('--by <name>', 'who dismisses it (default: the OS user)')
    .option('--dry-run', 'check it and show what would change; change nothing')
    .action((id: string, options: { note: string; by?: string; dryRun?: boolean }) =>
      load.dismiss().dismissCommand(context(), id, options),
    );
  repair
    .command('orphan-payloads')
    .description(
      'delete objects under payloads/ in the payload bucket that no inbox document points to (its document deleted by hand, or pointing to another object or generation); objects younger than 32 days are left alone, since a receipt writes the object before its document and Pub/Sub may redeliver a message for up to 31 days; so is one whose document still keeps its payload in chunks (a requeue may be adopting it)',
    )
    .option('--dry-run', 'list them; delete nothing')
    .option(
      '--older-than <duration>',
      'the minimum age of an object looked at (default 32d; at least 1h): lower it only when no delivery of these messages can still be pending',
    )
    .action((options: { dryRun?: boolean; olderThan?: string }) =>
      load.orphanPayloads().orphanPayloadsCommand(context(), options),
    );
  repair
    .command('orphan-chunks')
    .description(
      'delete rawChunks documents whose inbox document is gone (deleted by hand, or by the TTL, which leaves a subcollection behind); chunks written within 32 days are left alone, since a receipt writes the chunks before its document and Pub/Sub may redeliver a message for up to 31 days',
    )
    .option('--dry-run', 'list them by inbox id; delete nothing')
    .option(
      '--older-than <duration>',
      'the minimum age of a chunk looked at, since it was last written (default 32d; at least 1h): lower it only when no delivery of these messages can still be pending',
    )
    .action((options: { dryRun?: boolean; olderThan?: string }) =>
      load.orphanChunks().orphanChunksCommand(context(), options),
    );
  repair
    .command('cancel-token')
    .requiredOption('--instance <id>', 'process instance')
    .requiredOption('--execution <id>', 'the token')
    .option('--dry-run', DRY_RUN)
    .option('--expect <line>', EXPECT)
    .action((options: Parameters<typeof import('./cancel-token-command').cancelTokenCommand>[1]) =>
      load.cancelToken().cancelTokenCommand(context(), options),
    );
  program
    .command('migrate')
    .description(
      'move instances of a process from one stored version to another (docs/cli.md, migrate): each token to the element of the same id and kind, or as --map says; refuses, per instance, what cannot be mapped',
    )
    .requiredOption('--process <key>', 'the process (its BPMN id)')
    .requiredOption('--from <version>', 'the version the instances run (inbox versions lists them)')
    .requiredOption('--to <version>', 'the stored version to move them to')
    .option(
      '--map <source=target>',
      'a token at SOURCE goes to TARGET (repeat it; default: the element with the same id)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--instances <ids>', 'these instances, comma-separated')
    .option('--all', 'every RUNNING and INCIDENT instance of the process at --from, 50 per batch')
    .option('--dry-run', DRY_RUN)
    .option('--expect <line>', `${EXPECT} (per instance; @FILE reads the line from FILE)`)
    .option('--request-id <id>', 'resume an interrupted run: what this id migrated already is skipped')
    .action((options: import('./migrate-command').MigrateOptions) => load.migrate().migrateCommand(context(), options));
}

/** waiting, timers and their repairs: tokens that wait for a message or a timer. */
function addWatchCommands(program: Command, context: () => CliContext): void {
  program
    .command('waiting')
    .description(
      'tokens waiting for a message, oldest first: instance, business key, activity, message, correlation key, how long',
    )
    .option('--message <name>', 'only those waiting for this message (a name the deployed models wait for)')
    .option('--older-than <duration>', 'waiting at least this long (30m, 12h, 3d)')
    .option('--page-size <n>', 'waiting points per page (1 to 1000)', '50')
    .option('--after <cursor>', 'the next page: the cursor the previous page printed')
    .action((options: import('./waiting-command').WaitingOptions) => load.waiting().waitingCommand(context(), options));
  program
    .command('timers')
    .description('PENDING timers, soonest due first (overdue on top): due time, activity, instance, horizon')
    .option('--instance <id>', 'the timers of one process instance (all on one page)')
    .option('--page-size <n>', 'timers per page (1 to 1000, default 50)')
    .option('--after <cursor>', 'the next page: the cursor the previous page printed')
    .addOption(new Option('--limit <n>', 'the older name of --page-size').hideHelp())
    .action((options: import('./timers-command').TimersOptions) => load.timers().timersCommand(context(), options));
  const repair = program.commands.find((c) => c.name() === 'repair');
  if (repair === undefined) throw new Error('the repair command is registered before the watch commands');
  repair
    .command('fire-timer <timerId>')
    .description(
      'fire a due PENDING timer now, as its lost Cloud Task would have; refuses one not due, FIRED, gone or stale',
    )
    .option('--dry-run', 'show the timer and its token; change nothing')
    .action((id: string, options: { dryRun?: boolean }) => load.fireTimer().fireTimerCommand(context(), id, options));
  repair
    .command('shard-subscriptions')
    .description(
      'once after upgrading from a version before 0.6.0: give correlation key documents written before 0.6.0 shard, waitingFor and waitingSince, so `waiting` and the waiting gauge see their tokens',
    )
    .option('--dry-run', 'count only')
    .action((options: { dryRun?: boolean }) => load.shardSubscriptions().shardSubscriptionsCommand(context(), options));
}

/** tasks: user tasks waiting for a person, listed, shown and completed. */
function addTaskCommands(program: Command, context: () => CliContext): void {
  const tasks = program.command('tasks').description('user tasks waiting for a person: list, show, complete');
  tasks
    .command('list')
    .description('user tasks, oldest first: OPEN unless --status says otherwise')
    .option('--status <status>', 'OPEN, COMPLETED or CANCELLED (default OPEN)')
    .option('--assignee <id>', 'only tasks assigned to this id')
    .option('--group <name>', 'only tasks with this candidate group')
    .option('--instance <id>', 'only tasks of this process instance')
    .option('--page-size <n>', 'tasks per page (default 50)')
    .option('--after <cursor>', 'the next page: the cursor the previous page printed')
    .action((options: import('./tasks-command').TasksListOptions) => load.tasks().tasksListCommand(context(), options));
  tasks
    .command('show <id>')
    .description('one user task: who may do it, its form key, who closed it and why')
    .action((id: string) => load.tasks().tasksShowCommand(context(), id));
  tasks
    .command('complete <id>')
    .description(
      'complete an OPEN user task: its variables merged, its token moved on; the same --request-id again is "already completed"',
    )
    .option('--vars <json>', 'a JSON object of variables to merge')
    .option('--request-id <id>', 'makes a repeated completion the same one (letters, digits, - and _)')
    .action((id: string, options: import('./tasks-command').TasksCompleteOptions) =>
      load.tasks().tasksCompleteCommand(context(), id, options),
    );
}

/** purge: deletes DONE documents processed before a time. */
function addPurgeCommand(program: Command, context: () => CliContext): void {
  program
    .command('purge')
    .description('delete DONE documents processed before a time (the emulator runs no TTL deletion)')
    .option('--done-before <time>', 'ISO time or a duration ago (7d); at least the DONE retention ago unless --force')
    .option(
      '--force',
      'allow a bound inside the DONE retention (deletes dedup records of messages Pub/Sub may redeliver)',
    )
    .option('--dry-run', 'count only')
    .option('--yes', 'do not ask')
    .action((options: Parameters<typeof import('./purge-command').purgeCommand>[1]) =>
      load.purge().purgeCommand(context(), options),
    );
}

/** console: the deployed console on this machine's loopback port, signed with gcloud's ID token. */
function addConsoleCommand(program: Command, io: CliIo): void {
  program
    .command('console')
    .description(
      "open the deployed console at http://127.0.0.1:PORT/: a proxy on this machine that adds your gcloud account's ID token to requests addressed to 127.0.0.1 or localhost only (use it instead of `gcloud run services proxy`, which the console refuses)",
    )
    .option('--port <n>', 'local port on 127.0.0.1 (default 8080; 0: any free one)')
    .option('--service <name>', 'the Cloud Run service of inboxConsole (inboxconsole), with --region')
    .option('--region <region>', 'its region')
    .option('--project <id>', "its project (default: gcloud's)")
    .option('--url <url>', "the console's https:// URL, instead of --service and --region")
    .action((options: import('./console-command').ConsoleOptions) => load.console().consoleCommand(io, options));
}

/** model check: what a modeller runs before a deploy, without a project or Firestore. */
function addModelCommand(program: Command, io: CliIo): void {
  const model = program.command('model').description('BPMN models before a deploy: check that each loads');
  model
    .command('check <paths...>')
    .description(
      'whether each .bpmn file loads as a deploy loads it (folders: every *.bpmn below them): one line per file, its process key or the refused element, its kind and what to do (exit 1 when any is refused); needs no project',
    )
    .option('--elements', 'under each file that loads, what each element runs as read: handler types, keys, FEEL')
    .action((paths: string[], o: { elements?: boolean }) => {
      const json = program.opts<{ json?: boolean }>().json === true;
      return load.modelCheck().modelCheckCommand(io, paths, json, o.elements === true);
    });
}

/** model diff and model impact: what a change of the models changes, with what runs there when the project is read. */
function addModelDiffCommands(
  program: Command,
  io: CliIo,
  env: NodeJS.ProcessEnv,
  project: () => Promise<CliContext>,
): void {
  const model = program.commands.find((c) => c.name() === 'model');
  if (model === undefined) throw new Error('the model command is registered before model diff');
  const json = (): boolean => program.opts<{ json?: boolean }>().json === true;
  model
    .command('diff <paths...>')
    .description(
      'OLD NEW: the elements and flows added, removed and changed between two versions of a process (.bpmn files); needs no project unless --live, --deployed or --from-version reads it, which adds what waits at each removed or changed element',
    )
    .option(
      '--live',
      "add the project's tokens, pending jobs, timers and user tasks at each removed or changed element",
    )
    .option('--deployed', 'OLD is the newest version of the process stored in the project (give NEW only)')
    .option('--from-version <version>', 'OLD is this stored version of the process (give NEW only)')
    .action((paths: string[], o: import('./model-diff-command').ModelDiffOptions) =>
      load.modelDiff().modelDiffCommand(io, paths, o, json(), project),
    );
  model
    .command('impact')
    .description(
      "the app (INBOX_APP) against the project, as a deploy does: each changed model's diff from its newest stored version with what waits at each removed or changed element, and the step handlers the app drops that pending jobs still need (exit 1: refused, unless --force)",
    )
    .option(
      '--force',
      'do not refuse: say which pending jobs will become incidents (JOB_FAILED: no async handler registered)',
    )
    .action(async (o: { force?: boolean }) =>
      load.modelImpact().modelImpactCommand(io, env, await project(), json(), o.force === true),
    );
}

/**
 * The exit code of a run that threw, after its one line on stderr.
 * `expected` names a failure of Firestore or the credentials (null: none).
 */
function failureExit(err: unknown, io: CliIo, expected: () => CliFailure | null): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  if (err instanceof UsageError) {
    io.err(`inbox: ${err.message}`);
    return EXIT.USAGE;
  }
  if (err instanceof ConfigError) {
    // One line, as every expected failure: the configuration lists one problem per line.
    const problems = err.message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .join(' ');
    io.err(
      `inbox: ${problems}: set the variables it names (GOOGLE_CLOUD_PROJECT is the project id; FIRESTORE_EMULATOR_HOST too for the emulators)`,
    );
    return EXIT.USAGE;
  }
  if (isRefusal(err)) {
    io.err(`inbox: ${err.message}`);
    return EXIT.FAILED;
  }
  const failure = err instanceof CliFailure ? err : expected();
  if (failure !== null) {
    io.err(`inbox: ${failure.message}`);
    return failure.exitCode;
  }
  io.err(`inbox: ${errorMessage(err).replace(/\s+/g, ' ')}`);
  return EXIT.FAILED;
}

/**
 * The process around the CLI, for an operator's terminal. Node prints
 * library warnings (google-auth-library's MetadataLookupWarning when it
 * probes for a metadata server) on stderr by default: only the CLI's own
 * line belongs there, so warnings are kept off it (INBOX_CLI_DEBUG=1 shows
 * them). The Google client libraries also leave internal promises rejected
 * once a call has failed (every method stub of a client whose credentials
 * failed): the failure itself reaches the command and is reported, so these
 * are not a crash with a stack trace either. On the emulator there is no
 * metadata server to look for.
 */
export function quietProcess(proc: NodeJS.Process = process): void {
  const debug = proc.env.INBOX_CLI_DEBUG === '1';
  proc.removeAllListeners('warning');
  proc.on('warning', (warning) => {
    if (debug) proc.stderr.write(`inbox (debug): ${warning.name}: ${warning.message}\n`);
  });
  proc.on('unhandledRejection', (reason) => {
    if (debug)
      proc.stderr.write(
        `inbox (debug): unhandled rejection inside a client library: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\n`,
      );
  });
  if ((proc.env.FIRESTORE_EMULATOR_HOST ?? '') !== '') proc.env.METADATA_SERVER_DETECTION ??= 'none';
}

if (require.main === module) {
  quietProcess();
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
