import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { type ListFilters, QUERIES } from '../queries';
import { DEFAULT_REGISTRY } from '../receiver/registry';
import { cell, type CliContext } from './context';
import { ageOf, type Doc, view } from './documents';
import { print } from './output';
import { parseChoice, parseDuration, parseLimit, REASONS, STATUSES, UsageError } from './parse';

export interface ListOptions {
  status?: string;
  reason?: string;
  messageName?: string;
  key?: string;
  olderThan?: string;
  limit?: string;
}

/** Documents read per query while --older-than filters on the client. */
export const LIST_PAGE_SIZE = 500;

/**
 * A message name the receiver knows (any case), as registered: a name it does
 * not know matches no document, which would look like "nothing there".
 */
export function parseMessageName(text: string, names: readonly string[] = DEFAULT_REGISTRY.map((t) => t.name)): string {
  const found = names.find((n) => n.toLowerCase() === text.trim().toLowerCase());
  if (found === undefined) throw new UsageError(`--message-name: expected one of ${names.join(', ')} (the registered message names), got ${JSON.stringify(text)}`);
  return found;
}

/**
 * The first `limit` documents that match the filters and `keep`. Without
 * `keep` that is one query. With it (the age filter), pages through the
 * matches in id order until `limit` pass or none are left, so an old document
 * is never missed behind newer ones: receivedAt has no single-field index
 * (growing timestamps are exempted, see firestore.indexes.json), so the age
 * cannot go into the query without a composite index per filter combination.
 */
export async function findDocuments(
  db: Firestore,
  filters: ListFilters,
  limit: number,
  keep: ((doc: Doc) => boolean) | null,
  pageSize = LIST_PAGE_SIZE,
): Promise<{ docs: Doc[]; scanned: number }> {
  if (keep === null) {
    const docs = (await QUERIES.inboxList.build(db, filters, null, limit).get()).docs.map(view);
    return { docs, scanned: docs.length };
  }
  const found: Doc[] = [];
  let after: DocumentSnapshot | null = null;
  let scanned = 0;
  while (found.length < limit) {
    const page = await QUERIES.inboxList.build(db, filters, after, pageSize).get();
    scanned += page.size;
    found.push(...page.docs.map(view).filter(keep));
    if (page.size < pageSize) break;
    after = page.docs[page.docs.length - 1] ?? null;
  }
  return { docs: found.slice(0, limit), scanned };
}

/** Equality filters in the query (single-field indexes), the age filter on the pages it returns. */
export async function list(ctx: CliContext, options: ListOptions): Promise<void> {
  const limit = parseLimit(options.limit ?? '100');
  const olderThan = options.olderThan === undefined ? null : parseDuration('--older-than', options.olderThan);
  const filters: ListFilters = {
    ...(options.status === undefined ? {} : { status: parseChoice('--status', options.status, STATUSES) }),
    ...(options.reason === undefined ? {} : { reason: parseChoice('--reason', options.reason, REASONS) }),
    ...(options.messageName === undefined ? {} : { messageName: parseMessageName(options.messageName) }),
    ...(options.key === undefined ? {} : { correlationKey: options.key }),
  };
  const now = ctx.now();
  const old = (d: Doc): boolean => olderThan !== null && d.receivedAt instanceof Date && now.getTime() - d.receivedAt.getTime() >= olderThan;
  const { docs } = await findDocuments(ctx.db(), filters, limit, olderThan === null ? null : old);
  print(ctx, docs, ['id', 'status', 'reason', 'message', 'key', 'attempts', 'age', 'last error'], docs.map((d) => [d.id, d.status, d.reason, d.messageName, d.correlationKey, d.attempts, ageOf(d, now), cell(d.lastError ?? d.validationError).slice(0, 60)]));
}
