import type { Firestore } from '@google-cloud/firestore';
import { type Doc, LIST_PAGE_SIZE, scanDocuments } from '../operations/documents';
import type { ListFilters } from '../queries';
import { cell, type CliContext } from './context';
import { print } from './output';
import { parseChoice, parseDuration, parseLimit, UsageError } from './parse';
import { REASONS, STATUSES } from '../operations/vocabulary';

export interface ListOptions {
  status?: string;
  reason?: string;
  messageName?: string;
  key?: string;
  olderThan?: string;
  limit?: string;
}

/**
 * A message name the receiver knows (any case), as the app declares it: a
 * name it does not know matches no document, which would look like
 * "nothing there".
 */
export function parseMessageName(text: string, names: readonly string[]): string {
  const found = names.find((n) => n.toLowerCase() === text.trim().toLowerCase());
  if (found === undefined)
    throw new UsageError(
      `--message-name: expected one of ${names.join(', ')} (the registered message names), got ${JSON.stringify(text)}`,
    );
  return found;
}

/** The first `limit` documents that match the filters and `keep` (operations/documents.ts, scanDocuments, from the first id). */
export async function findDocuments(
  db: Firestore,
  filters: ListFilters,
  limit: number,
  keep: ((doc: Doc) => boolean) | null,
  pageSize = LIST_PAGE_SIZE,
): Promise<{ docs: Doc[]; scanned: number }> {
  const { docs, scanned } = await scanDocuments(db, filters, null, limit, keep, { pageSize });
  return { docs, scanned };
}

/** How long ago a document was received, in whole minutes ('' without a receipt time). */
const ageOf = (doc: Doc, now: Date): string =>
  doc.receivedAt instanceof Date ? `${Math.round((now.getTime() - doc.receivedAt.getTime()) / 60_000)} min` : '';

/** `inbox list`: equality filters in the query (single-field indexes), the age filter on the pages it returns. */
export async function listCommand(ctx: CliContext, options: ListOptions): Promise<void> {
  const limit = parseLimit(options.limit ?? '100');
  const olderThan = options.olderThan === undefined ? null : parseDuration('--older-than', options.olderThan);
  const filters: ListFilters = {
    ...(options.status === undefined ? {} : { status: parseChoice('--status', options.status, STATUSES) }),
    ...(options.reason === undefined ? {} : { reason: parseChoice('--reason', options.reason, REASONS) }),
    ...(options.messageName === undefined
      ? {}
      : {
          messageName: parseMessageName(
            options.messageName,
            ctx.runtime.registry().map((t) => t.name),
          ),
        }),
    ...(options.key === undefined ? {} : { correlationKey: options.key }),
  };
  const now = ctx.now();
  const old = (d: Doc): boolean =>
    olderThan !== null && d.receivedAt instanceof Date && now.getTime() - d.receivedAt.getTime() >= olderThan;
  const { docs } = await findDocuments(ctx.db(), filters, limit, olderThan === null ? null : old);
  print(
    ctx,
    docs,
    ['id', 'status', 'reason', 'message', 'key', 'attempts', 'age', 'last error'],
    docs.map((d) => [
      d.id,
      d.status,
      d.reason,
      d.messageName,
      d.correlationKey,
      d.attempts,
      ageOf(d, now),
      cell(d.lastError ?? d.validationError).slice(0, 60),
    ]),
  );
}
