import { type Command, Option } from 'commander';
import type { CliContext } from './context';
import { DRY_RUN, EXPECT, load } from './command-loaders';

/** instances, incidents, repair: process state and its repairs. */
export function addProcessCommands(program: Command, context: () => CliContext): void {
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
export function addWatchCommands(program: Command, context: () => CliContext): void {
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
