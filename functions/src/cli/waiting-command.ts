import { waitedMessageNames } from '../relay/gauges';
import { WAITING_ORDER } from '../operations/shard-page';
import { listWaiting } from '../operations/waiting';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';
import { print } from './output';
import { formatAge, parseDuration, parseKnownName, parsePageSize } from './parse';
import { cursorOf } from './shard-page-query';

export interface WaitingOptions {
  message?: string;
  olderThan?: string;
  pageSize?: string;
  after?: string;
}

const DEFAULT_PAGE_SIZE = '50';

/**
 * `inbox waiting`: the tokens waiting for a message, a page at a time
 * (operations/waiting.ts reads them; `--page-size` counts key documents, so
 * a key's points are never split over two pages).
 */
export async function waitingCommand(ctx: CliContext, options: WaitingOptions): Promise<void> {
  const size = parsePageSize(options.pageSize ?? DEFAULT_PAGE_SIZE);
  const olderThanMs = options.olderThan === undefined ? null : parseDuration('--older-than', options.olderThan);
  const after = cursorOf(WAITING_ORDER, options.after);
  const engine = await ctx.runtime.engine();
  const messageName =
    options.message === undefined
      ? null
      : parseKnownName(
          '--message',
          options.message,
          waitedMessageNames(engine),
          'the message names the deployed models wait for',
        );
  const { waitingPoints: rows, next } = await listWaiting(
    operationsDeps(ctx),
    { messageName, olderThanMs },
    { size, after },
  );
  print(
    ctx,
    { waitingPoints: rows, next },
    ['instance', 'business key', 'activity', 'message', 'correlation key', 'waiting since', 'waited'],
    rows.map((r) => [
      r.instanceId,
      r.businessKey ?? '(no instance)',
      r.activityId,
      r.messageName,
      r.correlationKey,
      r.createdAt,
      formatAge(r.waitingSeconds * 1000),
    ]),
  );
  if (ctx.json) return;
  if (next !== null) ctx.io.out(`more: add --after ${next}`);
}
