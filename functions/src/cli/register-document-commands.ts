import type { Command } from 'commander';
import type { CliContext } from './context';
import { DRY_RUN, EXPECT, load } from './command-loaders';

/** stats, list, show, explain, requeue, park: seeing inbox documents and moving them between OPEN and PARKED. */
export function addDocumentCommands(program: Command, context: () => CliContext): void {
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
