#!/usr/bin/env node
/**
 * `inbox`: the operator CLI. Tables for people, --json for scripts.
 * Exit codes (failures.ts, EXIT): 0 done, 1 refused or failed (unknown id,
 * nothing to do, a technical error), 2 bad usage (unknown command, bad
 * filter value, bad configuration), 3 no credentials, 4 wrong project,
 * 5 Firestore (or its emulator) unreachable, 6 permission denied. Every
 * failure is one line on stderr that says what to do.
 */
import { Command, CommanderError } from 'commander';
import { createInterface } from 'node:readline/promises';
import { ConfigError } from '../config';
import { type CliContext, cliContext, type CliIo } from './context';
import { classifyCliError, CliFailure, EXIT, preflight, type Target } from './failures';
import { isRefusal } from '../operations/refused';
import { UsageError } from './parse';
import { errorMessage } from '../core/errors';
import { load } from './command-loaders';
import { addDocumentCommands } from './register-document-commands';
import { addProcessCommands, addWatchCommands } from './register-process-commands';
import { addModelCommand, addModelDiffCommands } from './register-model-commands';

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
